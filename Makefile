# Makefile - builds gpureduce, its CUPTI capture library and the test suite.
#
#   make            build/gpureduce and build/libgpureduce-capture.so
#   make test       the CPU suite (what CI runs): unit, CLI and driver-double tests
#   make demo       on a GPU machine: capture, shrink and run a repro of samples/oob-write
#   make gpu-test   on a GPU machine: every sample through capture/replay/shrink/repro
#   make hunt-clean on a GPU machine: every sample's clean variant must hunt clean
#   make bench      on a GPU machine: capture overhead and shrink speed tables,
#                   then bench-hostfed (BENCH_SKIP_HOSTFED=1: not), bench-launch
#                   (BENCH_SKIP_LAUNCH=1: not), bench-trace (BENCH_SKIP_TRACE=1: not) and
#                   bench-hunt (BENCH_SKIP_HUNT=1: not); ends with one summary of them all
#   make bench-hostfed  on a GPU machine: capture on a host-fed training loop
#   make bench-launch  on a GPU machine: capture's cost a blocking launch, no Python
#   make bench-trace  on a GPU machine: bounded capture, trace bytes 1x vs 4x
#   make install PREFIX=/usr/local
#   make uninstall PREFIX=/usr/local
#   make SAN=1 test the CPU suite under AddressSanitizer + UBSan
#
# Sources are picked up by directory: add a .c file to common/, trace/,
# addr/, replay/, reducer/ or src/ and it is linked into gpureduce; capture/
# files go into the capture library.  The binary never links libcuda: replay workers
# dlopen it, so `show` and friends run on machines without a driver.

CUDA      ?= /usr/local/cuda
PREFIX    ?= /usr/local
BUILD     ?= build
CC        ?= cc
VERSION   := 0.1.0

WARN      := -Wall -Wextra -Wno-unused-parameter
OPT       ?= -O2 -g
CFLAGS_ALL = -std=gnu11 $(OPT) $(WARN) -I$(CUDA)/include -D_GNU_SOURCE -DGPUREDUCE_VERSION=\"$(VERSION)\" $(CFLAGS)
ifeq ($(SAN),1)
  OPT      = -O1 -g -fno-omit-frame-pointer
  SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined
  BUILD    = build-san
endif

STATIC_LIBS := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libyaml.a /usr/lib/libyaml.a))
ifneq ($(STATIC_LIBS),)
  # static libyaml/zstd/xxhash so the binary runs on GPU machines without them
  LIBS := -Wl,-Bstatic -lyaml -lzstd -Wl,-Bdynamic -lstdc++ -ldl -lpthread -lm
else
  LIBS := -lyaml -lzstd -lstdc++ -ldl -lpthread -lm
endif

LIB_SRC  := $(wildcard common/*.c trace/*.c addr/*.c replay/*.c diagnose/*.c reducer/*.c emit/*.c)
CLI_SRC  := $(wildcard src/*.c src/*/*.c)
CAP_SRC  := $(wildcard capture/*.c)
# the texts every repro.cu carries (see below)
CORE_TEXTS := place_core fill_core pack_core fnpick_core
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CORE_TEXTS:%=$(BUILD)/gen/%_text.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
CAP_OBJ  := $(CAP_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/trace/write.o $(BUILD)/pic/trace/read.o \
            $(BUILD)/pic/common/strbuf.o $(BUILD)/pic/common/util.o $(BUILD)/pic/common/elf.o
HAVE_CUPTI := $(wildcard $(CUDA)/include/cupti.h)
CUPTI_DIRS := $(CUDA)/lib64 $(CUDA)/lib $(CUDA)/targets/x86_64-linux/lib $(CUDA)/extras/CUPTI/lib64
CAPTURE_LIB := $(if $(HAVE_CUPTI),$(BUILD)/libgpureduce-capture.so)

.PHONY: all test unit-test cli-test gpu-test hunt-clean demo bench bench-shrink-pair bench-hostfed bench-launch bench-gpus bench-trace bench-hunt bench-cpu long-run install uninstall clean fuzz fuzz-run deps deps-fuzz
all: $(BUILD)/gpureduce $(CAPTURE_LIB) $(BUILD)/libgpureduce-nvrtc.so

# Before anything compiles: the headers (xxhash.h, zstd.h, yaml.h) and the
# compiler, installed with apt-get where we are root, else one line with the
# command to run (tests/deps.sh).  Every object waits for it (order-only),
# so `make`, `make test`, `make demo` and `make gpu-test` check first;
# NO_BUILD=1 runs compile nothing and never ask.
deps:
	@CC="$(CC)" CUDA="$(CUDA)" sh tests/deps.sh build

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(SANFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/pic/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -MMD -MP -c -o $@ $<

# Code that gpureduce compiles and every repro.cu carries verbatim, so the
# two cannot differ: NAME_text is one C string of NAME's files, in the order
# listed (a unit test, test_core_text.c, checks each string is its files;
# CORE_TEXTS, above, names them).
# place_core: placement (addr/place_core.inc), after the sticky errors it
# uses (common/cuerr.h); fill_core: the seeded fill; pack_core: the payload
# decoder; fnpick_core: which build of a kernel name a launch ran.
$(BUILD)/gen/place_core_text.c: common/cuerr.h addr/place_core.inc
$(BUILD)/gen/fill_core_text.c: common/fill_core.inc
$(BUILD)/gen/pack_core_text.c: emit/pack_core.inc
$(BUILD)/gen/fnpick_core_text.c: replay/fnpick_core.inc
$(BUILD)/gen/%_text.c: Makefile
	@mkdir -p $(dir $@)
	{ echo '/* generated from $(filter-out Makefile,$^) by the Makefile: do not edit */'; \
	  echo 'const char $*_text[] ='; \
	  cat $(filter-out Makefile,$^) | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'; \
	  echo ';'; } > $@

$(BUILD)/gen/%_text.o: $(BUILD)/gen/%_text.c
	$(CC) $(CFLAGS_ALL) $(SANFLAGS) -c -o $@ $<

$(BUILD)/libgpureduce.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/gpureduce: $(CLI_OBJ) $(BUILD)/libgpureduce.a
	$(CC) $(SANFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libgpureduce.a $(LIBS)

# The injection library lives inside the traced process: it links CUPTI and
# the driver (present there), libzstd dynamically, and exports only
# InitializeInjection.
$(BUILD)/libgpureduce-capture.so: $(CAP_OBJ)
	$(CC) -shared -Wl,--no-undefined -o $@ $^ $(addprefix -L,$(CUPTI_DIRS)) \
	  $(addprefix -Wl$(comma)-rpath$(comma),$(CUPTI_DIRS) /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib) \
	  -lcupti -L$(CUDA)/lib64/stubs -lcuda -l:libzstd.so.1 -ldl -lpthread
comma := ,

# The NVRTC shim `capture` preloads (capture/shim/nvrtc.c, issue 24): no
# dependencies beyond libc and libdl.
$(BUILD)/libgpureduce-nvrtc.so: capture/shim/nvrtc.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -shared -fvisibility=hidden -o $@ $< -ldl -lpthread

# ---- tests ------------------------------------------------------------------
include tests/tests.mk

# ---- install ----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/gpureduce
	install -m 755 $(BUILD)/gpureduce $(DESTDIR)$(PREFIX)/bin/gpureduce
	$(if $(CAPTURE_LIB),install -m 755 $(CAPTURE_LIB) $(DESTDIR)$(PREFIX)/lib/gpureduce/)
	install -m 755 $(BUILD)/libgpureduce-nvrtc.so $(DESTDIR)$(PREFIX)/lib/gpureduce/

# removes exactly what install wrote, and the folder if it is then empty
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/gpureduce $(DESTDIR)$(PREFIX)/lib/gpureduce/libgpureduce-capture.so \
	      $(DESTDIR)$(PREFIX)/lib/gpureduce/libgpureduce-nvrtc.so
	-rmdir $(DESTDIR)$(PREFIX)/lib/gpureduce 2>/dev/null

clean:
	rm -rf build build-san

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
