// norm (tf.norm): vector and matrix norms, composed of abs, mul, reductions,
// sqrt and pow as TensorFlow composes them, so that they differentiate and
// export through those ops. With no axis, x is one vector of all its
// elements; one axis gives vector norms along it, two axes matrix norms over
// them. Vector orders: 'euclidean' (= 2), 1, inf and any p > 0; matrix orders:
// 'euclidean' and 'fro' (the same), 1 (the largest column sum of |x|) and inf
// (the largest row sum). At x = 0 the gradient is TensorFlow's: the euclidean
// norm's is NaN (sqrt's derivative at 0 times 0), as is that of a p-norm
// with p > 1; ord 1's is 0 (abs's derivative at 0).
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"

namespace ag::api {

namespace {

// An order: 'euclidean' and 'fro' are p = 2 with a flag for 'fro'.
struct NormOrder {
  double p;
  bool fro;
  std::string spelled;
};

std::string norm_order_string(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  std::string s = std::to_string(ord);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

[[noreturn]] void norm_fail(const std::string& why) {
  throw InvalidArgumentError("norm: " + why);
}

// The axes normalised to [0, rank), checked: none (every axis), one or two distinct.
std::vector<int64_t> norm_axes(const Tensor& x, std::vector<int64_t> axis) {
  const int64_t rank = x.rank();
  if (axis.size() > 2) {
    norm_fail(
        "axis must be empty (x as one vector), one axis (vector norms) or two (matrix "
        "norms), got " +
        std::to_string(axis.size()) + " axes");
  }
  for (int64_t& a : axis) {
    if (a < -rank || a >= rank) {
      norm_fail("axis " + std::to_string(a) + " is out of range for x of rank " +
                std::to_string(rank));
    }
    if (a < 0) a += rank;
  }
  if (axis.size() == 2 && axis[0] == axis[1]) norm_fail("the two axes of a matrix norm are one");
  return axis;
}

Tensor vector_norm(const Tensor& x, const NormOrder& ord, const std::vector<int64_t>& axes,
                   bool keepdims, CallSite site) {
  if (ord.p == 2) return sqrt(reduce_sum(mul(x, x, site), axes, keepdims, site), site);
  if (ord.p == 1) return reduce_sum(abs(x, site), axes, keepdims, site);
  if (std::isinf(ord.p)) return reduce_max(abs(x, site), axes, keepdims, site);
  const Tensor sum = reduce_sum(pow(abs(x, site), ord.p, site), axes, keepdims, site);
  return pow(sum, 1.0 / ord.p, site);
}

Tensor matrix_norm(const Tensor& x, const NormOrder& ord, std::vector<int64_t> axes, bool keepdims,
                   CallSite site) {
  if (ord.p == 2 && !ord.fro && ord.spelled != "euclidean") {
    throw UnimplementedError(
        "norm: ord 2 of a matrix (its largest singular value) needs a singular value "
        "decomposition, which is not implemented; use 'fro', 1 or inf");
  }
  if (ord.p == 2) return sqrt(reduce_sum(mul(x, x, site), axes, keepdims, site), site);
  if (ord.p != 1 && !(std::isinf(ord.p) && ord.p > 0)) {
    norm_fail("matrix norms are of ord 'euclidean', 'fro', 1, 2 or inf, got " + ord.spelled);
  }
  // ord 1 sums down the rows (axes[0]) and takes the largest column; inf the reverse.
  const int64_t summed = ord.p == 1 ? axes[0] : axes[1], maxed = ord.p == 1 ? axes[1] : axes[0];
  const Tensor sums = reduce_sum(abs(x, site), {summed}, true, site);
  Tensor result = reduce_max(sums, {maxed}, true, site);
  if (keepdims) return result;
  std::sort(axes.begin(), axes.end());
  return squeeze(result, axes, site);
}

Tensor norm_of(const Tensor& x, const NormOrder& ord, std::vector<int64_t> axis, bool keepdims,
               CallSite site) {
  if (!is_floating(x.dtype())) {
    norm_fail("x must be float32 or float64, got " + std::string(dtype_name(x.dtype())));
  }
  std::vector<int64_t> axes = norm_axes(x, std::move(axis));
  if (axes.size() == 2) return matrix_norm(x, ord, axes, keepdims, site);
  if (ord.fro && axes.size() == 1) {
    norm_fail("'fro' is a matrix norm: give two axes (or use 'euclidean' for vectors)");
  }
  if (!(ord.p > 0)) {
    norm_fail("ord must be 'euclidean', 'fro', inf or a number > 0, got " + ord.spelled);
  }
  if (axes.empty())
    for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
  return vector_norm(x, ord, axes, keepdims, site);
}

}  // namespace

Tensor norm(const Tensor& x, std::string_view ord, std::vector<int64_t> axis, bool keepdims,
            CallSite site) {
  if (ord != "euclidean" && ord != "fro") {
    norm_fail("ord must be 'euclidean', 'fro' or a number (inf for the max norm), got '" +
              std::string(ord) + "'");
  }
  return norm_of(x, {2.0, ord == "fro", std::string(ord)}, std::move(axis), keepdims, site);
}

Tensor norm(const Tensor& x, double ord, std::vector<int64_t> axis, bool keepdims, CallSite site) {
  return norm_of(x, {ord, false, norm_order_string(ord)}, std::move(axis), keepdims, site);
}

}  // namespace ag::api
