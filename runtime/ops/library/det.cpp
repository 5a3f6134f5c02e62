// tf.linalg.det: Gaussian elimination with partial pivoting (an LU
// factorisation, as TensorFlow's), written with ops over the batch: per
// column, the row of the largest |entry| at or below the diagonal swapped up
// (a permutation matrix's product), the rows below cleared, the pivot
// multiplied into the determinant and each swap flipping its sign. So it
// differentiates (d det / dA = det * A^-T where A is invertible) and exports
// through those ops. The matrices' size must be known while tracing.
#include <string>

#include "ag/error.h"
#include "ag/ops.h"

namespace ag::linalg {
namespace {

// Swaps row k of each matrix of `a` [..., n, n] with row p[...] (p >= k),
// as a product with a permutation matrix.
Tensor swap_rows(const Tensor& a, const Tensor& rows, int64_t k, const Tensor& p, int64_t n,
                 CallSite site) {
  const Tensor pe = api::expand_dims(p, -1, site);
  const Tensor k_tensor(k);
  const Tensor source =
      api::where(api::equal(rows, k_tensor, site), pe,
                 api::where(api::equal(rows, pe, site), k_tensor, rows, site), site);
  const Tensor permutation = api::one_hot(source, n, 1, 0, -1, a.dtype(), site);
  return api::matmul(permutation, a, site);
}

}  // namespace

Tensor det(const Tensor& input, CallSite site) {
  const Shape& shape = input.shape();
  if (!is_floating(input.dtype())) {
    throw InvalidArgumentError("det: input must be floating, got " +
                               std::string(dtype_name(input.dtype())));
  }
  if (shape.has_unknown_rank() || shape.rank() < 2 || shape.dim(-1) != shape.dim(-2)) {
    throw InvalidArgumentError("det: input must be square matrices [..., M, M], got shape " +
                               shape.to_list_string());
  }
  const int64_t n = shape.dim(-1);
  if (n == kUnknownDim) {
    throw InvalidArgumentError("det: the matrices' size must be known while tracing, got shape " +
                               shape.to_list_string());
  }
  const int rank = shape.rank();
  // No rows: the product of no pivots.
  if (n == 0) return api::reduce_prod(input, {rank - 2, rank - 1}, false, site);
  auto scalar = [&](double v) { return api::cast(Tensor(v), input.dtype(), site); };
  const Tensor rows = api::range(Tensor(int64_t{0}), Tensor(n), Tensor(int64_t{1}), site);
  Tensor a = input, product, sign = scalar(1);
  for (int64_t k = 0; k < n; ++k) {
    const Tensor column = api::gather(a, Tensor(k), rank - 1, site);  // [..., n]
    const Tensor candidates = api::where(api::greater_equal(rows, Tensor(k), site),
                                         api::abs(column, site), scalar(-1), site);
    const Tensor p = api::argmax(candidates, rank - 2, site);
    a = swap_rows(a, rows, k, p, n, site);
    sign = sign * api::where(api::equal(p, Tensor(k), site), scalar(1), scalar(-1), site);
    const Tensor row = api::gather(a, Tensor(k), rank - 2, site);  // [..., n]
    const Tensor pivot = api::gather(row, Tensor(k), rank - 2, site);
    product = product.defined() ? product * pivot : pivot;
    if (k + 1 == n) break;
    // A zero pivot leaves a zero column below it: nothing to clear, and no
    // division by zero (whose gradient would be NaN).
    const Tensor safe = api::where(api::equal(pivot, scalar(0), site), scalar(1), pivot, site);
    const Tensor below =
        api::where(api::greater(rows, Tensor(k), site),
                   api::gather(a, Tensor(k), rank - 1, site) / api::expand_dims(safe, -1, site),
                   scalar(0), site);
    a = a - api::expand_dims(below, -1, site) * api::expand_dims(row, -2, site);
  }
  return sign * product;
}

}  // namespace ag::linalg
