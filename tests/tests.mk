# tests.mk - the CPU test suite (included by the top Makefile).
#
# make test runs, in order: C unit tests (tests/unit), the driver double's
# end-to-end tests and the numbered CLI shell tests (tests/cli/tNNNN-*.sh).
# Every part prints "N passed, N failed"; tests/summarize.sh adds them up
# into the final line.

UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)

$(BUILD)/unit: $(UNIT_OBJ) $(BUILD)/libgpureduce.a
	$(CC) $(SANFLAGS) -o $@ $(UNIT_OBJ) $(BUILD)/libgpureduce.a $(LIBS)

-include tests/double/double.mk

unit-test: $(BUILD)/unit
	$(BUILD)/unit $(BUILD)

test: all $(BUILD)/unit $(DOUBLE_TARGETS)
	@BUILD=$(BUILD) CUDA=$(CUDA) sh tests/run-cpu-tests.sh

gpu-test: all
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/gpu-test.sh

demo: all
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/demo.sh

bench: all
	@BUILD=$(BUILD) CUDA=$(CUDA) bash tests/gpu/bench.sh
