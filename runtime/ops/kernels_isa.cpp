// The multiversioned kernels (ops/isa.h) as kernels.h and op_registry.h
// declare them: each calls its namesake in the table of kernel_isa().
#include "ops/kernel_tables.h"
#include "ops/kernels.h"

namespace ag::ops {

namespace {

const ElementwiseKernels& elementwise() {
  return AG_ISA_SELECT(elementwise_kernels);
}

const ReductionKernels& reduction() {
  return AG_ISA_SELECT(reduction_kernels);
}

}  // namespace

#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  void kernel(const KernelContext& ctx) {                                               \
    elementwise().kernel(ctx);                                                          \
    elementwise().clear_upper_vector_state();                                           \
  }
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP

#define AG_ELEMENTWISE_DISPATCH(kernel)       \
  void kernel(const KernelContext& ctx) {     \
    elementwise().kernel(ctx);                \
    elementwise().clear_upper_vector_state(); \
  }
AG_ELEMENTWISE_EXTRA_KERNELS(AG_ELEMENTWISE_DISPATCH)
#undef AG_ELEMENTWISE_DISPATCH

#define AG_REDUCTION_DISPATCH(kernel)         \
  void kernel(const KernelContext& ctx) {     \
    reduction().kernel(ctx);                  \
    elementwise().clear_upper_vector_state(); \
  }
AG_REDUCTION_KERNELS(AG_REDUCTION_DISPATCH)
#undef AG_REDUCTION_DISPATCH

ScalarKernelFn scalar_kernel(OpId id, DType input_dtype, DType output_dtype) {
  return elementwise().scalar_kernel(id, input_dtype, output_dtype);
}

BinaryScalarKernelFn binary_scalar_kernel(OpId id, DType input_dtype, DType output_dtype) {
  return elementwise().binary_scalar_kernel(id, input_dtype, output_dtype);
}

BinaryScalarKernelFn binary_kernel_by_constant(OpId id, DType dtype, const void* constant,
                                               PreparedConstant& prepared) {
  return elementwise().binary_kernel_by_constant(id, dtype, constant, prepared);
}

FlatKernelFn flat_kernel(OpId id, DType input_dtype, DType output_dtype) {
  return elementwise().flat_kernel(id, input_dtype, output_dtype);
}

void lstm::run_step(const lstm::Step<float>& step) {
  AG_ISA_SELECT(lstm_step_kernels).step_float(step);
  elementwise().clear_upper_vector_state();
}

void lstm::run_step(const lstm::Step<double>& step) {
  AG_ISA_SELECT(lstm_step_kernels).step_double(step);
  elementwise().clear_upper_vector_state();
}

void pool_loops::max_pool_grad_tile(const MaxPoolGradTile<float>& tile) {
  AG_ISA_SELECT(pool_step_kernels).max_pool_grad_tile_float(tile);
  elementwise().clear_upper_vector_state();
}

void pool_loops::max_pool_grad_tile(const MaxPoolGradTile<double>& tile) {
  AG_ISA_SELECT(pool_step_kernels).max_pool_grad_tile_double(tile);
  elementwise().clear_upper_vector_state();
}

}  // namespace ag::ops
