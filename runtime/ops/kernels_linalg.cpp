// Matrix multiplication, [..., m, k] x [..., k, n] -> [..., m, n], one gemm per
// entry of the broadcast batch dims (an operand's entry repeats along its
// dims of 1 and the dims it lacks), each operand optionally transposed
// (attrs.ints = [transpose_a, transpose_b]). float32/float64 go to the GEMM
// library (ops/gemm.h: oneDNN or OpenBLAS), which reads the transposes where
// they are; integers (and float products too small for a library call to
// pay) use our own i-k-j kernel on transposed copies.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
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

// The [rows x cols] matrix `x` transposed into `out`.
template <class T>
void matmul_transpose_into(const T* x, int64_t rows, int64_t cols, std::vector<T>& out) {
  out.resize(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[size_t(c * rows + r)] = x[r * cols + c];
}

template <class T>
void matmul_one(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool trans_a,
                bool trans_b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (k > 0 && m * n * k > kSmallGemmWork) {
      gemm(a, b, c, m, n, k, trans_a, trans_b);
      return;
    }
  }
  std::vector<T> a_copy, b_copy;
  if (trans_a) {
    matmul_transpose_into(a, k, m, a_copy);
    a = a_copy.data();
  }
  if (trans_b) {
    matmul_transpose_into(b, n, k, b_copy);
    b = b_copy.data();
  }
  gemm_ikj(a, b, c, m, n, k);
}

// Where each output batch entry's matrix starts in an operand of shape `s`
// (elements), its batch dims aligned with the output's from the last: a dim
// of 1, or one it lacks, repeats its matrix.
std::vector<int64_t> matmul_batch_offsets(const Shape& s, const Shape& out) {
  const int out_batch_rank = out.rank() - 2, lead = out.rank() - s.rank();
  std::vector<int64_t> stride(size_t(out_batch_rank), 0);
  int64_t step = s[s.rank() - 2] * s[s.rank() - 1];
  for (int d = s.rank() - 3; d >= 0; --d) {
    stride[size_t(d + lead)] = s[d] == 1 ? 0 : step;
    step *= s[d];
  }
  int64_t batch = 1;
  for (int d = 0; d < out_batch_rank; ++d) batch *= out[d];
  std::vector<int64_t> offsets(static_cast<size_t>(batch));
  std::vector<int64_t> index(size_t(out_batch_rank), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < batch; ++i) {
    offsets[size_t(i)] = offset;
    for (int d = out_batch_rank - 1; d >= 0; --d) {
      offset += stride[size_t(d)];
      if (++index[size_t(d)] < out[d]) break;
      offset -= stride[size_t(d)] * out[d];
      index[size_t(d)] = 0;
    }
  }
  return offsets;
}

// Whether `s`'s batch dims are the output's (no broadcasting), and whether
// it has a single batch entry (none, or all 1).
bool matmul_batch_is(const Shape& s, const Shape& out) {
  if (s.rank() != out.rank()) return false;
  for (int d = 0; d < s.rank() - 2; ++d)
    if (s[d] != out[d]) return false;
  return true;
}
bool matmul_single_batch(const Shape& s) {
  for (int d = 0; d < s.rank() - 2; ++d)
    if (s[d] != 1) return false;
  return true;
}

}  // namespace

void kernel_matmul(const KernelContext& ctx) {
  const Shape& sa = *ctx.inputs[0].shape;
  const Shape& sb = *ctx.inputs[1].shape;
  const Shape& out_shape = *ctx.out_shape;
  const bool trans_a = !ctx.attrs->ints.empty() && ctx.attrs->ints[0] != 0;
  const bool trans_b = !ctx.attrs->ints.empty() && ctx.attrs->ints[1] != 0;
  int rank = out_shape.rank();
  int64_t m = out_shape[rank - 2], n = out_shape[rank - 1];
  int64_t k = trans_a ? sa[sa.rank() - 2] : sa[sa.rank() - 1];
  int64_t batch = 1;
  for (int d = 0; d < rank - 2; ++d) batch *= out_shape[d];
  if (m * n * batch == 0) return;
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    } else {
      const T* a = static_cast<const T*>(ctx.inputs[0].data);
      const T* b = static_cast<const T*>(ctx.inputs[1].data);
      T* c = static_cast<T*>(ctx.out);
      // One matrix b for a whole batch of a: a's rows stacked make one product.
      if (!trans_a && matmul_single_batch(sb) && matmul_batch_is(sa, out_shape)) {
        matmul_one(a, b, c, batch * m, n, k, false, trans_b);
        return;
      }
      if (matmul_batch_is(sa, out_shape) && matmul_batch_is(sb, out_shape)) {
        for (int64_t i = 0; i < batch; ++i)
          matmul_one(a + i * m * k, b + i * k * n, c + i * m * n, m, n, k, trans_a, trans_b);
        return;
      }
      const std::vector<int64_t> a_at = matmul_batch_offsets(sa, out_shape);
      const std::vector<int64_t> b_at = matmul_batch_offsets(sb, out_shape);
      for (int64_t i = 0; i < batch; ++i) {
        matmul_one(a + a_at[size_t(i)], b + b_at[size_t(i)], c + i * m * n, m, n, k, trans_a,
                   trans_b);
      }
    }
  });
}

}  // namespace ag::ops

namespace ag::api {

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, CallSite site) {
  const DType common = promote_types(a.dtype(), b.dtype());
  ops::Attrs attrs;
  if (transpose_a || transpose_b) attrs.ints = {int64_t(transpose_a), int64_t(transpose_b)};
  return ops::apply(ops::OpId::MatMul, {cast(a, common, site), cast(b, common, site)}, attrs, site);
}

}  // namespace ag::api
