// The ops by a shape tensor (library/dynamic_shape.cpp) told which entries of
// the shape are known while tracing: an ONNX importer reads them off the
// Concat that builds the shape ([N] of a dynamic batch, then constants), so
// that those dims of the output are known while tracing too. Internal to
// the runtime and the ONNX importer.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "ag/tensor.h"

namespace ag::ops {

// An entry of `known` that is not known while tracing.
inline constexpr int64_t kUnknownEntry = std::numeric_limits<int64_t>::min();

// x reshaped to `shape` (dynamic_reshape), whose entries `known` (one per
// entry of shape, kUnknownEntry where not known) the values must match when
// the graph runs.
Tensor reshape_by(const Tensor& x, const Tensor& shape, std::vector<int64_t> known, CallSite site);
// x broadcast to `shape` (dynamic_broadcast_to), `both_ways` also the shape
// against x's (ONNX's Expand); `known` as reshape_by's.
Tensor broadcast_by(const Tensor& x, const Tensor& shape, std::vector<int64_t> known,
                    bool both_ways, CallSite site);

}  // namespace ag::ops
