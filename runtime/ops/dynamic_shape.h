// What the ops by a shape tensor (library/dynamic_shape.cpp) share with
// their importer and with tile: reshape, broadcast and tile told which
// entries of the shape (the multiples) are known while tracing (an ONNX
// importer reads them off the Concat that builds the shape: [N] of a
// dynamic batch, then constants), so that those dims of the output are
// known while tracing too; and tile's gradient by multiples as a tensor.
// Internal to the runtime and the ONNX importer.
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

// x tiled by `multiples` (dynamic_tile); `known` as reshape_by's.
Tensor tile_by(const Tensor& x, const Tensor& multiples, std::vector<int64_t> known, CallSite site);

// The gradient of tile(x, multiples) (multiples a tensor, known or read
// when the graph runs) from the output's `grad`: grad viewed as [m0, d0,
// m1, d1, ...] (multiples and x's dims interleaved) and summed over the m
// axes.
Tensor tile_gradient(const Tensor& grad, const Tensor& x, const Tensor& multiples, CallSite site);

}  // namespace ag::ops
