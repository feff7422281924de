/*
 * cuerr.h - the one list of CUDA errors gpureduce treats as a fault, shared
 * by the capture library (inside the traced process: when to write the
 * FAULT record, when a checkpoint's context is dead), replay (what ends a
 * replay as "faulted") and placement (addr/place_core.inc: no fallback on a
 * dead context), whose text every repro.cu carries after this file's.
 * Header only, on plain numbers, so that it needs neither cuda.h nor a
 * library of its own, and is C++ too.
 *
 * Sticky errors (docs: "the process must terminate and relaunch") leave the
 * context unusable: every later call returns them again.  GPU-FACTS.md:
 * wild accesses come as 700 or 717, PyTorch's device asserts as 710.
 */
#ifndef GPUREDUCE_CUERR_H
#define GPUREDUCE_CUERR_H

/* repro.cu uses only cuerr_is_sticky, and nvcc warns about a static
 * function nobody calls (#177): both are marked unused. */
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
