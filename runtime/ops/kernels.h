// Declarations of every infer, kernel and gradient function named in ops.def.
// Each is defined exactly once, in runtime/ops/infer.cpp, one kernels_*.cpp
// or one gradients_*.cpp file.
#pragma once

#include "ops/op_registry.h"

namespace ag::ops {

#define AG_OP(id, name, arity, infer, kernel, flags, gradient) \
  ValueType infer(const InferContext&);                        \
  void kernel(const KernelContext&);                           \
  std::vector<Tensor> gradient(const GradContext&);
#include "ops/ops.def"
#undef AG_OP

// Shared by infer functions: the NumPy broadcast of two shapes, or an
// InvalidArgumentError "Incompatible shapes: [2,3] vs. [4]".
Shape broadcast_shapes(const Shape& a, const Shape& b);

// A reduction of fewer elements than this (to one element) folds them one by
// one, in memory order, from the reduction of no elements (kernels_reduce.cpp);
// longer runs fold in independent lanes. The executor's flat reduction steps
// fold small float vectors themselves on that promise, with the same bits.
inline constexpr int64_t kInOrderReduceElements = 8;

}  // namespace ag::ops
