# tests.mk - the CPU test suite (included by the top Makefile).
#
# make test runs, in order: C unit tests (tests/unit), the driver double's
# end-to-end tests and the numbered CLI shell tests (tests/cli/tNNNN-*.sh).
# Every part prints "N passed, N failed"; tests/run-cpu-tests.sh adds them up
# into the final line.

UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)
# the command line's parts a unit test reaches (built repros' runs, the
# capture library's status file)
UNIT_CLI_OBJ := $(BUILD)/src/repro/repro.o $(BUILD)/src/launch/capture-ranks.o

$(BUILD)/unit: $(UNIT_OBJ) $(UNIT_CLI_OBJ) $(BUILD)/libgpureduce.a
	$(CC) $(SANFLAGS) -o $@ $(UNIT_OBJ) $(UNIT_CLI_OBJ) $(BUILD)/libgpureduce.a $(LIBS)

-include tests/double/double.mk

unit-test: $(BUILD)/unit
	$(BUILD)/unit $(BUILD)

test: deps all $(BUILD)/unit $(DOUBLE_TARGETS)
	@BUILD=$(BUILD) CUDA=$(CUDA) sh tests/run-cpu-tests.sh

# GPU machines may lack libyaml's headers (the GPU machine here does): build
# on another machine, bring build/ along and say NO_BUILD=1 to use it as is.
GPU_DEPS := $(if $(NO_BUILD),,all $(BUILD)/sampleinfo)

$(BUILD)/sampleinfo: tests/gpu/sampleinfo.c | deps
	$(CC) -O2 -Wall -o $@ $< $(if $(STATIC_LIBS),-Wl$(comma)-Bstatic -lyaml -Wl$(comma)-Bdynamic,-lyaml)

gpu-test: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/gpu-test.sh

# every sample's clean variant (clean_env:) runs and hunts clean (issue 28)
hunt-clean: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/hunt-clean.sh

demo: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/demo.sh

bench: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench.sh
	@[ "$(BENCH_SKIP_GPUS)" = 1 ] || BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-gpus.sh
	@[ "$(BENCH_SKIP_HOSTFED)" = 1 ] || BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-hostfed.sh
	@[ "$(BENCH_SKIP_LAUNCH)" = 1 ] || BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/launch-cost.sh
	@[ "$(BENCH_SKIP_TRACE)" = 1 ] || BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-trace.sh
	@[ "$(BENCH_SKIP_HUNT)" = 1 ] || BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-hunt.sh
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-summary.sh

# hunt beside compute-sanitizer memcheck alone (issue 28)
bench-hunt: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-hunt.sh

# shrink on every GPU beside one GPU alone (issue 25; passes on one GPU)
bench-gpus: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-gpus.sh

# shrink alone, two ways side by side, on the traces gpu-test left (issue 26;
# PAIR_A, PAIR_B: tests/gpu/shrink-pair.sh)
bench-shrink-pair: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/shrink-pair.sh $(BUILD)/gpu-test/*/

# capture on a host-fed training loop: blocking vs capture vs --flight-recorder (issue 26)
bench-hostfed: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-hostfed.sh

# capture's cost a blocking launch without Python, and what CUPTI's dispatch
# alone costs (issue 26)
bench-launch: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/launch-cost.sh

# bounded capture alone (issue 13): trace bytes 1x vs 4x, capture overhead
bench-trace: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench-trace.sh

# issue 13's five-minute run: capture, shrink, repro x5 in one device call
long-run: $(GPU_DEPS)
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/long-run.sh

# capture's own costs on the CPU, against the driver double (issue 13);
# shrink's replays, rounds and seconds per phase (issue 26); replay's and
# show's cost per launch of a long trace; capture --tensors' tag and
# history fetches (issue 28)
bench-cpu: all $(DOUBLE_TARGETS) $(BUILD)/mktrace
	@BUILD=$(BUILD) CUDA=$(CUDA) sh tests/bench/capture-cost.sh
	@BUILD=$(BUILD) CUDA=$(CUDA) sh tests/bench/pystack-cost.sh
	@BUILD=$(BUILD) CUDA=$(CUDA) sh tests/bench/shrink-cost.sh
	@BUILD=$(BUILD) CUDA=$(CUDA) sh tests/bench/replay-cost.sh
	@BUILD=$(BUILD) CUDA=$(CUDA) sh tests/bench/tensors-cost.sh

# ---- test helpers (tests/cli/helpers: see the comment atop each) -----------
$(BUILD)/mktrace: tests/cli/helpers/mktrace.c $(BUILD)/libgpureduce.a
	$(CC) $(CFLAGS_ALL) $(SANFLAGS) -o $@ $< $(BUILD)/libgpureduce.a $(LIBS)

$(BUILD)/yamlflat: tests/cli/helpers/yamlflat.c | deps
	$(CC) $(CFLAGS_ALL) $(SANFLAGS) -o $@ $< $(LIBS)

test: $(BUILD)/mktrace $(BUILD)/yamlflat

# ---- fuzzing (tests/fuzz): make fuzz; make fuzz-run FUZZ_SECONDS=60 ----------
# Built with clang's libFuzzer + ASan + UBSan from the sources it needs
# (Debian: clang libclang-rt-14-dev).  fuzz-run works on a copy of the seed
# corpus and fails on any crash, leak, timeout or out-of-memory.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SRC   := tests/fuzz/fuzz_trace.c src/show/show.c src/show/show-tensormap.c trace/read.c trace/write.c \
              $(wildcard common/*.c addr/*.c emit/*.c) replay/fnpick.c replay/launchattr.c replay/sidechan.c \
              reducer/cand.c $(CORE_TEXTS:%=$(BUILD)/gen/%_text.c)
FUZZ_FLAGS := -std=gnu11 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE $(WARN) -I$(CUDA)/include \
              -DGPUREDUCE_VERSION=\"$(VERSION)\" \
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

fuzz: $(BUILD)/fuzz_trace

deps-fuzz:
	@sh tests/deps.sh fuzz

$(BUILD)/fuzz_trace: $(FUZZ_SRC) $(wildcard common/*.h common/*.inc trace/*.h trace/*.def trace/*.inc addr/*.h addr/*.inc emit/*.h emit/*.inc src/show/show.h) | deps-fuzz
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(FUZZ_SRC) -lyaml -lzstd -lm -lstdc++

fuzz-run: $(BUILD)/fuzz_trace
	rm -rf $(BUILD)/fuzz-corpus $(BUILD)/fuzz-artifacts
	mkdir -p $(BUILD)/fuzz-corpus $(BUILD)/fuzz-artifacts
	cp tests/fuzz/corpus/* $(BUILD)/fuzz-corpus/
	$(BUILD)/fuzz_trace -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=65536 -dict=tests/fuzz/trace.dict -print_final_stats=1 \
	  -artifact_prefix=$(BUILD)/fuzz-artifacts/ $(BUILD)/fuzz-corpus

# hand-run: the writer's per-MiB cost on loop-shaped copies (issue 26)
$(BUILD)/blobcost: tests/bench/blobcost.c $(BUILD)/libgpureduce.a
	$(CC) $(CFLAGS_ALL) $(SANFLAGS) -o $@ $< $(BUILD)/libgpureduce.a $(LIBS)
