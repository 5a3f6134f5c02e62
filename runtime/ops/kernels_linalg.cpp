// Matrix multiplication, [..., m, k] x [..., k, n] -> [..., m, n], one gemm per
// batch entry. float32/float64 go to the GEMM library (ops/gemm.h: oneDNN or
// OpenBLAS); integers (and float products too small for a library call to
// pay) use our own i-k-j kernel.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include "ag/error.h"
#include "ops/gemm.h"
#include "ops/kernels.h"
#include "ops/scalar_ops.h"

namespace ag::ops {
namespace {

// Below this many multiply-adds (m*n*k) our loop beats cblas_?gemm's call
// overhead. Measured on the 2-core EPYC machines with OpenBLAS 0.3.21 and one
// thread: sgemm/dgemm take 18-30 ns for 2x2..4x4 and about 50 ns for 10x10,
// while the loop wins only up to about 8 multiply-adds (2x2x2: 23 vs 32 ns;
// 1x4x1: 10 vs 24 ns) and loses from 16 on (1x16x1: 59 vs 44 ns).
constexpr int64_t kSmallGemmWork = 8;

// Blocks of b (kBlockK rows of kBlockN columns) stay in L2 while every row of
// a streams past them.
constexpr int64_t kBlockK = 128;
constexpr int64_t kBlockN = 512;

// c[j] += s * b[j]. Fixed-size chunks let GCC vectorise at -O2, whose cost
// model skips loops of unknown trip count. Integer arithmetic wraps (AddOp,
// MulOp compute in the unsigned type).
template <class T>
void multiply_add_row(T* __restrict c, const T* __restrict b, T s, int64_t n) {
  constexpr int64_t kChunk = 16;
  const scalar::AddOp add;
  const scalar::MulOp mul;
  int64_t j = 0;
  for (; j + kChunk <= n; j += kChunk) {
    for (int64_t q = 0; q < kChunk; ++q) c[j + q] = add(c[j + q], mul(s, b[j + q]));
  }
  for (; j < n; ++j) c[j] = add(c[j], mul(s, b[j]));
}

// Narrow products (n up to kMaxFixedN: the TensorFlow guide's 10x10 power, small
// vectors) with n known at compile time: a row of c lives in registers and
// the inner loop is unrolled and vectorised exactly, as a hand-written loop
// over fixed sizes is. The generic loop below pays its chunking and tails.
constexpr int kMaxFixedN = 16;

// Integers accumulate in their unsigned type, where AddOp and MulOp compute
// anyway: without the casts to T and back per multiply-add, and with the
// restrict pointers (c never aliases a or b: a row of c is written before
// the next row of a is read), GCC vectorises the row as the hand-written
// loop is (power int32: 1.6x the hand loop before, see docs/benchmarks.md).
template <class T, int N>
void gemm_fixed_n(const T* __restrict a, const T* __restrict b, T* __restrict c, int64_t m,
                  int64_t k) {
  using Acc = typename scalar::Wrapping<T>::type;
  const scalar::AddOp add;
  const scalar::MulOp mul;
  for (int64_t i = 0; i < m; ++i) {
    Acc row[N] = {};
    for (int64_t p = 0; p < k; ++p) {
      const Acc s = Acc(a[i * k + p]);
      const T* bp = b + p * N;
      for (int j = 0; j < N; ++j) row[j] = add(row[j], mul(s, Acc(bp[j])));
    }
    for (int j = 0; j < N; ++j) c[i * N + j] = T(row[j]);
  }
}

template <class T, size_t... N>
constexpr auto fixed_n_kernels(std::index_sequence<N...>) {
  return std::array<void (*)(const T*, const T*, T*, int64_t, int64_t), sizeof...(N)>{
      &gemm_fixed_n<T, int(N) + 1>...};
}

// c[m,n] = a[m,k] b[k,n], row-major, in i-k-j order: the inner loop walks a
// row of b and a row of c contiguously.
template <class T>
void gemm_ikj(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  if (n <= kMaxFixedN) {
    static constexpr auto kernels = fixed_n_kernels<T>(std::make_index_sequence<kMaxFixedN>{});
    kernels[size_t(n - 1)](a, b, c, m, k);
    return;
  }
  std::fill(c, c + m * n, T(0));
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    int64_t k1 = std::min(k, k0 + kBlockK);
    for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {
      int64_t width = std::min(n, j0 + kBlockN) - j0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = k0; p < k1; ++p) {
          multiply_add_row(c + i * n + j0, b + p * n + j0, a[i * k + p], width);
        }
      }
    }
  }
}

template <class T>
void matmul_one(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  if constexpr (std::is_floating_point_v<T>) {
    if (k > 0 && m * n * k > kSmallGemmWork) {
      gemm(a, b, c, m, n, k);
      return;
    }
  }
  gemm_ikj(a, b, c, m, n, k);
}

}  // namespace

void kernel_matmul(const KernelContext& ctx) {
  const Shape& sa = *ctx.inputs[0].shape;
  const Shape& out_shape = *ctx.out_shape;
  int rank = out_shape.rank();
  int64_t m = out_shape[rank - 2], n = out_shape[rank - 1], k = sa[rank - 1];
  int64_t batch = 1;
  for (int d = 0; d < rank - 2; ++d) batch *= out_shape[d];
  if (m * n == 0) return;
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    } else {
      const T* a = static_cast<const T*>(ctx.inputs[0].data);
      const T* b = static_cast<const T*>(ctx.inputs[1].data);
      T* c = static_cast<T*>(ctx.out);
      for (int64_t i = 0; i < batch; ++i) {
        matmul_one(a + i * m * k, b + i * k * n, c + i * m * n, m, n, k);
      }
    }
  });
}

}  // namespace ag::ops
