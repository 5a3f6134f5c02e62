// The entry points of the multiversioned kernel files (ops/isa.h), one table
// per file and instruction set. kernels_isa.cpp defines the functions
// kernels.h and op_registry.h declare by calling through the table of
// kernel_isa().
#pragma once

#include "ops/isa.h"
#include "ops/lstm_kernels.h"
#include "ops/op_registry.h"
#include "ops/pool_kernels.h"

namespace ag::ops {

using KernelFn = void (*)(const KernelContext&);

// kernels_elementwise.cpp's kernels besides the AG_ELEMENTWISE_OP ones.
#define AG_ELEMENTWISE_EXTRA_KERNELS(X) X(kernel_cast) X(kernel_where)

// kernels_reduce.cpp's kernels.
// clang-format off
#define AG_REDUCTION_KERNELS(X)                                                              \
  X(kernel_reduce_sum) X(kernel_reduce_prod) X(kernel_reduce_max) X(kernel_reduce_min)      \
  X(kernel_reduce_sum_to) X(kernel_reduce_mean) X(kernel_cumsum) X(kernel_argmax)           \
  X(kernel_argmin)
// clang-format on

#define AG_KERNEL_TABLE_MEMBER(kernel) KernelFn kernel;

struct ElementwiseKernels {
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  KernelFn kernel;
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP
  AG_ELEMENTWISE_EXTRA_KERNELS(AG_KERNEL_TABLE_MEMBER)
  ScalarKernelFn (*scalar_kernel)(OpId, DType, DType);
  BinaryScalarKernelFn (*binary_scalar_kernel)(OpId, DType, DType);
  BinaryScalarKernelFn (*binary_kernel_by_constant)(OpId, DType, const void*, PreparedConstant&);
  FlatKernelFn (*flat_kernel)(OpId, DType, DType);
  // Marks the upper halves of the vector registers unused (vzeroupper; a
  // no-op in baseline), called after each kernel above and of
  // ReductionKernels. GCC 12 can return from an AVX kernel with them in use
  // (a local clone it calls returns without vzeroupper, and the caller
  // trusts it), and every SSE instruction that runs next, in libm's scalar
  // functions and the baseline loops, then pays a state transition: the
  // float32 log_softmax gradient ran 5x slower after a `where`.
  void (*clear_upper_vector_state)();
};

struct ReductionKernels {
  AG_REDUCTION_KERNELS(AG_KERNEL_TABLE_MEMBER)
};

// lstm_steps.cpp's step of the LSTM loops.
struct LstmStepKernels {
  void (*step_float)(const lstm::Step<float>&);
  void (*step_double)(const lstm::Step<double>&);
};

// pool_steps.cpp's tile of max_pool_grad's channels-last loop.
struct PoolStepKernels {
  void (*max_pool_grad_tile_float)(const pool_loops::MaxPoolGradTile<float>&);
  void (*max_pool_grad_tile_double)(const pool_loops::MaxPoolGradTile<double>&);
};

#define AG_DECLARE_KERNEL_TABLES(isa)                  \
  namespace isa {                                      \
  extern const ElementwiseKernels elementwise_kernels; \
  extern const ReductionKernels reduction_kernels;     \
  extern const LstmStepKernels lstm_step_kernels;      \
  extern const PoolStepKernels pool_step_kernels;      \
  }
AG_FOR_EACH_ISA(AG_DECLARE_KERNEL_TABLES)
#undef AG_DECLARE_KERNEL_TABLES

}  // namespace ag::ops
