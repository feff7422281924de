/*
 * capture-dlinit.c - test helper that plays the CUDA driver's part at cuInit
 * for the capture library: dlopen the library named by CUDA_INJECTION64_PATH
 * and call its InitializeInjection, then carry on as "the program" and print
 * "program continues".  Built by t1001-capture-lib.sh; on a machine without
 * a GPU (stub libcuda) CUPTI cannot subscribe, which exercises the library's
 * refusal path for real.  Exit 0, or 2 when the library cannot be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *lib = getenv("CUDA_INJECTION64_PATH");
	void *h;
	int (*init)(void);

	if (!lib) {
		fprintf(stderr, "capture-dlinit: CUDA_INJECTION64_PATH is not set\n");
		return 2;
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "capture-dlinit: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "capture-dlinit: no InitializeInjection in %s\n", lib);
		return 2;
	}
	printf("InitializeInjection returned %d\n", init());
	printf("program continues\n");
	return 0;
}
