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

}  // namespace ag::ops
