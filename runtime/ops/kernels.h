// Declarations of every infer, kernel and gradient function named in ops.def.
// Each is defined exactly once, in runtime/ops/infer.cpp, one kernels_*.cpp
// or one gradients_*.cpp file.
#pragma once

#include "ops/op_registry.h"

namespace ag::ops {

#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx) \
  ValueType infer(const InferContext&);                              \
  void kernel(const KernelContext&);                                 \
  std::vector<Tensor> gradient(const GradContext&);
#include "ag/ops.def"
#undef AG_OP

// The ops' prepare functions (op_registry.h, prepare_fn).
PreparedKernel prepare_conv(const PrepareContext&);
PreparedKernel prepare_fused_conv(const PrepareContext&);
PreparedKernel prepare_softmax(const PrepareContext&);
PreparedKernel prepare_softmax_grad(const PrepareContext&);
PreparedKernel prepare_batch_norm(const PrepareContext&);
PreparedKernel prepare_layer_norm(const PrepareContext&);
PreparedKernel prepare_fused_batch_norm(const PrepareContext&);
PreparedKernel prepare_fused_batch_norm_grad(const PrepareContext&);
PreparedKernel prepare_layer_norm_grad(const PrepareContext&);
PreparedKernel prepare_rnn_sequence(const PrepareContext&);

// Shared by infer functions: the NumPy broadcast of two shapes, or an
// InvalidArgumentError "Incompatible shapes: [2,3] vs. [4]".
Shape broadcast_shapes(const Shape& a, const Shape& b);

// A reduction of fewer elements than this (to one element) folds them one by
// one, in memory order, from the reduction of no elements (kernels_reduce.cpp);
// longer runs fold in independent lanes. The executor's flat reduction steps
// fold small float vectors themselves on that promise, with the same bits.
inline constexpr int64_t kInOrderReduceElements = 8;

// Elementwise ops on static vectors of at most this many elements (collatz
// on two values, small state vectors) run as flat steps in the executor:
// the op's scalar kernel called per element, which costs less than a
// kernel's dtype dispatch and loop set-up at this size. The passes that
// trade a flat step for a block loop (passes/fusion.cpp) leave such vectors
// alone.
inline constexpr int32_t kMaxFlatElements = 16;

}  // namespace ag::ops
