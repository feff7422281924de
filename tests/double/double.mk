# double.mk - builds the CPU driver double (included by tests/tests.mk).
#
#   $(BUILD)/double/libcuda.so.1   the double (soname libcuda.so.1); also
#                                  libcuda.so -> libcuda.so.1 for -lcuda
#   $(BUILD)/double/kernels.cubin  the test module image (a relocatable ELF
#                                  whose symbols name the registry's kernels)
#   $(BUILD)/double/test-cflags    extra flags for test programs linked
#                                  against the double ($(SANFLAGS) under SAN=1)
#
# The double is always built without sanitizers: it runs inside the program
# under test, which may itself be sanitized.  Never installed.

DOUBLE_DIR     := $(BUILD)/double
DOUBLE_SRC     := tests/double/libcuda.c tests/double/image.c tests/double/kernels.c
DOUBLE_HDR     := tests/double/double.h tests/double/image.h tests/double/libcuda.map
DOUBLE_TARGETS := $(DOUBLE_DIR)/libcuda.so.1 $(DOUBLE_DIR)/libcuda.so \
                  $(DOUBLE_DIR)/kernels.cubin $(DOUBLE_DIR)/test-cflags

$(DOUBLE_DIR)/libcuda.so.1: $(DOUBLE_SRC) $(DOUBLE_HDR) tests/double/double.mk
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -I$(CUDA)/include -fPIC -shared \
	  -Wl,-soname,libcuda.so.1 -Wl,--version-script=tests/double/libcuda.map -Wl,-z,defs \
	  -o $@ $(DOUBLE_SRC) -lpthread

$(DOUBLE_DIR)/libcuda.so: $(DOUBLE_DIR)/libcuda.so.1
	ln -sf libcuda.so.1 $@

$(DOUBLE_DIR)/kernels.cubin: tests/double/kernels_image.c tests/double/double.mk
	@mkdir -p $(dir $@)
	$(CC) -c -O0 -fno-common -o $@ tests/double/kernels_image.c

$(DOUBLE_DIR)/test-cflags: tests/double/double.mk
	@mkdir -p $(dir $@)
	echo '$(SANFLAGS)' > $@

.PHONY: double
double: $(DOUBLE_TARGETS)
