/*
 * CUDA errors that count as a fault.  The "sticky" family leaves the
 * context unusable: every later call returns the same error again (the
 * CUDA documentation: "the process must terminate and relaunch").  Wild
 * memory accesses come as 700 or 717, device-side asserts (PyTorch's among
 * them) as 710.  Plain numbers, so that this needs neither cuda.h nor a
 * library, and it reads as C and as C++.
 *
 * (In gpureduce this one list decides when capture writes the FAULT
 * record, what ends a replay as "faulted", and when placement must not
 * fall back; every repro.cu carries its text: keep its comments about
 * CUDA, for the reader of a repro, not about gpureduce's files.)
 */
#ifndef GPUREDUCE_CUERR_H
#define GPUREDUCE_CUERR_H

/* A program may use only one of the two, and nvcc warns about a static
 * function nobody calls: both are marked unused. */
#define CUERR_UNUSED __attribute__((unused))

/* 1 for the sticky family: 700 ILLEGAL_ADDRESS, 702 LAUNCH_TIMEOUT, 710
 * ASSERT, 714 HARDWARE_STACK_ERROR, 715 ILLEGAL_INSTRUCTION, 716
 * MISALIGNED_ADDRESS, 717 INVALID_ADDRESS_SPACE, 718 INVALID_PC, 719
 * LAUNCH_FAILED, 721 TENSOR_MEMORY_LEAK. */
static inline CUERR_UNUSED int cuerr_is_sticky(int code)
{
	switch (code) {
	case 700: case 702: case 710: case 714: case 715: case 716:
	case 717: case 718: case 719: case 721:
		return 1;
	default:
		return 0;
	}
}

/* What a replayed launch that returns it counts as: a fault.  The sticky
 * family, plus two launch failures that are not sticky but that a launch
 * of the captured program can meet the same way (701
 * LAUNCH_OUT_OF_RESOURCES, 720 COOPERATIVE_LAUNCH_TOO_LARGE). */
static inline CUERR_UNUSED int cuerr_is_fault(int code)
{
	return cuerr_is_sticky(code) || code == 701 || code == 720;
}

#endif
