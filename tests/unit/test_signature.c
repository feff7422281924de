/*
 * test_signature.c - the fault signature rule (common/signature.h): 700 and
 * 717 are one bad address and nothing else is alike; a truncated kernel
 * name matches only when it filled its buffer.
 */
#include <string.h>

#include "../../common/signature.h"
#include "unit.h"

UNIT_TEST(signature_codes_names_kernels)
{
	CHECK(sig_same_code(700, 700));
	CHECK(sig_same_code(700, 717) && sig_same_code(717, 700));
	CHECK(!sig_same_code(700, 710));
	CHECK(!sig_same_code(716, 717));
	CHECK(sig_same_error_name("CUDA_ERROR_ASSERT", "CUDA_ERROR_ASSERT"));
	CHECK(sig_same_error_name("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE"));
	CHECK(!sig_same_error_name("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS"));
	CHECK(!sig_same_error_name("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_ADDRES"));
	CHECK(sig_same_kernel("scale", "scale", 0));
	CHECK(!sig_same_kernel("scale", "scal", 0));
	/* "scal" filled a 5-byte buffer: a truncated "scale..." */
	CHECK(sig_same_kernel("scale_kernel", "scale", 6));
	CHECK(!sig_same_kernel("scale_kernel", "scale", 7));
	CHECK(!sig_same_kernel("gather", "scale", 6));
}
