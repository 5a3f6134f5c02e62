// Row-major matrix products on the fastest library the build has.
//
// float32 goes to oneDNN's sgemm when the runtime is built with
// AG_GEMM=onednn (the default): oneDNN picks its kernels from what the CPU
// can do (AVX2, AVX-512, AMX), not from a list of CPU models. float64, and
// float32 with AG_GEMM=openblas, go to OpenBLAS, whose kernels are chosen
// by CPU model: on a model it does not know it runs generic SSE3 code, and
// the first OpenBLAS product then warns once, on stderr, with the fix.
// Both libraries run on the intra-op thread count (ag::set_intra_op_threads).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ag::ops {

enum class GemmLibrary { onednn, openblas };

// c[m x n] = a[m x k] * b[k x n], all row-major and dense; k > 0.
void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
void gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k);

// The library float32 products use: oneDNN in an AG_GEMM=onednn build.
GemmLibrary gemm_library();
// Switches float32 products to `library`, for the tests that compare the
// two in one build; an UnimplementedError when the build does not have it.
void set_gemm_library(GemmLibrary library);

// The threads the float32 library runs a product on when called from this
// thread (after a first product): the intra-op thread count.
int gemm_library_threads();

// The warning for an OpenBLAS core `core` on a CPU with (or without) AVX2 and
// AVX-512, or "" when the core uses what the CPU has.
std::string openblas_core_warning(std::string_view core, bool avx2, bool avx512);

}  // namespace ag::ops
