// Kernels not written yet. Each throws until its real kernel file replaces it.
#include <string>

#include "ag/error.h"
#include "ops/kernels.h"

namespace ag::ops {

#define AG_PENDING(name)                                                          \
  void name(const KernelContext& ctx) {                                           \
    throw UnimplementedError(std::string(ctx.op_name) + ": not implemented yet"); \
  }
AG_PENDING(kernel_reduce_sum)
AG_PENDING(kernel_reduce_mean)
AG_PENDING(kernel_reduce_max)
AG_PENDING(kernel_reduce_min)
AG_PENDING(kernel_reduce_prod)
AG_PENDING(kernel_argmax)
AG_PENDING(kernel_argmin)
AG_PENDING(kernel_matmul)
AG_PENDING(kernel_transpose)
AG_PENDING(kernel_copy)
AG_PENDING(kernel_concat)
AG_PENDING(kernel_stack)
AG_PENDING(kernel_gather)
AG_PENDING(kernel_slice)
AG_PENDING(kernel_range)
AG_PENDING(kernel_random_uniform)
AG_PENDING(kernel_random_normal)
#undef AG_PENDING

}  // namespace ag::ops
