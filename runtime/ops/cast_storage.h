// Casts to and from the storage dtypes (ag/dtype.h), element by element.
#pragma once

#include <cstdint>

#include "ag/dtype.h"

namespace ag::ops {

// Converts `n` elements of `in_dtype` at `in` to `out_dtype` at `out`, where
// at least one of the two is a storage dtype. Integers wrap to the output's
// width; floating values round to nearest even (a double to float16 in one
// rounding); a floating value becomes an integer by truncation toward zero
// (NaN gives 0); nonzero is true.
void cast_storage(const void* in, DType in_dtype, void* out, DType out_dtype, int64_t n);

}  // namespace ag::ops
