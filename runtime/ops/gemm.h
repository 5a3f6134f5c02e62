// Row-major matrix products on the fastest library the build has.
//
// OpenBLAS chooses its kernels by CPU model: on a model it does not know it
// runs generic SSE3 code (the first OpenBLAS product then warns once, on
// stderr, with the fix). oneDNN (AG_GEMM=onednn, the default) chooses them
// from what the CPU can do: AVX2, AVX-512, AMX. float32 products go to the
// library preferred_gemm_library names for this CPU and OpenBLAS core, once
// they are large enough to pay oneDNN's call; float64 products, and every
// product with AG_GEMM=openblas, go to OpenBLAS. Both libraries run on the
// intra-op thread count (ag::set_intra_op_threads).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ag::ops {

enum class GemmLibrary { onednn, openblas };

// c[m x n] = op(a) * op(b), all row-major and dense; k > 0. op(a) is a
// [m x k], or with trans_a the transpose of a stored [k x m]; likewise b.
void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
          bool trans_a = false, bool trans_b = false);
void gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k,
          bool trans_a = false, bool trans_b = false);

// Below this many multiply-adds a float32 product stays on OpenBLAS: oneDNN's
// sgemm costs about 0.6 us a call (10x10x10: 655 ns against OpenBLAS's 367;
// 16x16x16: 689 against 483; from 32x32x32 on oneDNN is as fast or faster,
// measured on the 2-core EPYC machines).
constexpr int64_t kOneDnnMinWork = 16 * 16 * 16;

// Whether the runtime was built with oneDNN (AG_GEMM=onednn).
bool built_with_onednn();
// Before every call into oneDNN (AG_GEMM=onednn builds): gives its threads,
// OpenMP's, the intra-op thread count, if it changed since this thread's
// last call.
void sync_onednn_threads();

// The library for float32 products of at least kOneDnnMinWork
// multiply-adds, on a CPU with (or without) AVX2 and AVX-512 where OpenBLAS
// runs its `core` kernels: oneDNN on AVX-512 (its AVX-512 and AMX kernels
// outrun OpenBLAS's best: 157-163 against 126 GFLOP/s on the dense layer of
// docs/benchmarks.md), OpenBLAS where its kernels use the AVX2 of an AVX2 CPU
// (Haswell, Zen: the dense layer in 1.9 ms against oneDNN 2.6's 2.5 ms on an
// EPYC), oneDNN where OpenBLAS runs generic code.
GemmLibrary preferred_gemm_library(std::string_view core, bool avx2, bool avx512);

// The library float32 products use (above kOneDnnMinWork): the preferred
// one for this machine in an AG_GEMM=onednn build, else OpenBLAS.
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
