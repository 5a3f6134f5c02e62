// Row-major matrix products on oneDNN (float32) and OpenBLAS; see gemm.h.
#include "ops/gemm.h"

#include <cblas.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <mutex>

#include "ag/error.h"
#include "ops/parallel.h"

#if AG_GEMM_ONEDNN
#include <oneapi/dnnl/dnnl.h>

// OpenMP's C API, from libgomp (the runtime is not compiled with -fopenmp,
// and omp.h is GCC's, which clang-tidy does not see).
extern "C" {
void omp_set_num_threads(int threads);
int omp_get_max_threads();
}
#endif

namespace ag::ops {
namespace {

// Whether OpenBLAS's `core` kernels use AVX2 (its AVX-512 cores do too).
bool uses_avx2(std::string_view core) {
  constexpr std::array<std::string_view, 5> kAvx2Cores = {"Haswell", "Zen", "SkylakeX",
                                                          "Cooperlake", "SapphireRapids"};
  for (std::string_view known : kAvx2Cores)
    if (core == known) return true;
  return false;
}

// What the library choice and the warning read of this machine, once.
struct Machine {
  std::string_view openblas_core = openblas_get_corename();
  bool avx2 = __builtin_cpu_supports("avx2");
  bool avx512 = __builtin_cpu_supports("avx512f");
};
const Machine& machine() {
  static const Machine facts;
  return facts;
}

// The library of float32 products, chosen on first use.
std::atomic<GemmLibrary>& library_slot() {
  static std::atomic<GemmLibrary> slot{
      built_with_onednn()
          ? preferred_gemm_library(machine().openblas_core, machine().avx2, machine().avx512)
          : GemmLibrary::openblas};
  return slot;
}

#if AG_GEMM_ONEDNN
void onednn_sgemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                  bool trans_a, bool trans_b) {
  sync_onednn_threads();
  dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a,
                                    trans_a ? m : k, b, trans_b ? k : n, 0.0f, c, n);
  if (status != dnnl_success) {
    throw InternalError("matmul: oneDNN's sgemm failed with status " + std::to_string(status) +
                        " on " + std::to_string(m) + "x" + std::to_string(k) + " * " +
                        std::to_string(k) + "x" + std::to_string(n));
  }
}
#endif

// Prints openblas_core_warning once per process, before the first OpenBLAS
// product.
void warn_of_a_generic_openblas_core() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string warning =
        openblas_core_warning(machine().openblas_core, machine().avx2, machine().avx512);
    if (!warning.empty()) std::fprintf(stderr, "autograph-cpp: warning: %s\n", warning.c_str());
  });
}

void check_blas_dims(int64_t m, int64_t n, int64_t k) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    throw UnimplementedError("matmul: dimensions beyond 2^31 are not supported");
}

CBLAS_TRANSPOSE cblas_transpose(bool trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

}  // namespace

void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool trans_a,
          bool trans_b) {
#if AG_GEMM_ONEDNN
  if (m * n * k >= kOneDnnMinWork &&
      library_slot().load(std::memory_order_relaxed) == GemmLibrary::onednn) {
    onednn_sgemm(a, b, c, m, n, k, trans_a, trans_b);
    return;
  }
#endif
  check_blas_dims(m, n, k);
  warn_of_a_generic_openblas_core();
  sync_blas_threads();
  cblas_sgemm(CblasRowMajor, cblas_transpose(trans_a), cblas_transpose(trans_b), int(m), int(n),
              int(k), 1.0f, a, int(trans_a ? m : k), b, int(trans_b ? k : n), 0.0f, c, int(n));
}

void gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k,
          bool trans_a, bool trans_b) {
  check_blas_dims(m, n, k);
  warn_of_a_generic_openblas_core();
  sync_blas_threads();
  cblas_dgemm(CblasRowMajor, cblas_transpose(trans_a), cblas_transpose(trans_b), int(m), int(n),
              int(k), 1.0, a, int(trans_a ? m : k), b, int(trans_b ? k : n), 0.0, c, int(n));
}

#if AG_GEMM_ONEDNN
// oneDNN's threads are OpenMP's, whose count is per calling thread.
void sync_onednn_threads() {
  thread_local int t_threads = 0;
  const int want = intra_op_threads();
  note_library_threads(want);
  if (t_threads != want) {
    omp_set_num_threads(want);
    t_threads = want;
  }
}
#endif

bool built_with_onednn() {
#if AG_GEMM_ONEDNN
  return true;
#else
  return false;
#endif
}

GemmLibrary preferred_gemm_library(std::string_view core, bool avx2, bool avx512) {
  return !avx512 && avx2 && uses_avx2(core) ? GemmLibrary::openblas : GemmLibrary::onednn;
}

GemmLibrary gemm_library() {
  return library_slot().load(std::memory_order_relaxed);
}

void set_gemm_library(GemmLibrary library) {
#if !AG_GEMM_ONEDNN
  if (library == GemmLibrary::onednn) {
    throw UnimplementedError(
        "this runtime was built with AG_GEMM=openblas, without oneDNN; configure it with "
        "-DAG_GEMM=onednn");
  }
#endif
  library_slot().store(library, std::memory_order_relaxed);
}

int gemm_library_threads() {
#if AG_GEMM_ONEDNN
  if (library_slot().load(std::memory_order_relaxed) == GemmLibrary::onednn)
    return omp_get_max_threads();
#endif
  return openblas_get_num_threads();
}

std::string openblas_core_warning(std::string_view core, bool avx2, bool avx512) {
  if (!avx2 || uses_avx2(core)) return "";
  const char* coretype = avx512 ? "SkylakeX" : "Haswell";
  return "OpenBLAS runs its generic '" + std::string(core) + "' kernels on this CPU, which has " +
         (avx512 ? "AVX-512" : "AVX2") +
         ", so its matrix products run several times below the machine's speed; start the "
         "program with OPENBLAS_CORETYPE=" +
         coretype + " in its environment";
}

}  // namespace ag::ops
