// Importers of ONNX's Unique and NonZero, whose lengths depend on the
// values. Unique: our unique_first_indices gives output 1 (the first
// occurrences), the input gathered there output 0, and each slice's
// comparison with the unique ones the inverse indices (its match) and the
// counts (the matches of each).
#include <numeric>
#include <optional>
#include <vector>

#include "ag/ops.h"
#include "import_ops.h"
#include "ops/composed.h"

namespace ag::onnx_io {

std::vector<Tensor> import_unique(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "Unique");
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  std::optional<int64_t> axis;
  if (ctx.has_attr("axis")) axis = ctx.normalize_axis(ctx.attr_int("axis"), shape.rank(), "axis");
  const Tensor first = unique_first_indices(x, axis, sorted);
  const Tensor source = axis ? x : reshape(x, {-1});
  const int64_t a = axis.value_or(0);
  const Tensor y = gather(source, first, a);
  // Slices as rows [n, m]: the axis moved first, the rest flattened.
  std::vector<int64_t> perm(static_cast<size_t>(source.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + a);
  perm.insert(perm.begin(), a);
  const int64_t n = source.shape()[int(a)];
  const int64_t m = n == 0 ? 0 : shape.num_elements() / n;
  auto rows = [&](const Tensor& t) { return reshape(transpose(t, perm), {-1, m}); };
  const Tensor match =
      reduce_all(equal(expand_dims(rows(source), 1), expand_dims(rows(y), 0)), {2});
  const Tensor inverse = cast(argmax(cast(match, int32), 1), int64);
  return {y, first, inverse, reduce_sum(cast(match, int64), {0})};
}

// NonZero: the coordinates [rank, count] of the nonzero elements in
// row-major order, from their flat positions (boolean_mask's).
std::vector<Tensor> import_non_zero(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "NonZero");
  if (shape.rank() == 0) ctx.unsupported("a scalar input");
  const Tensor positions =
      ops::true_positions(not_equal(reshape(x, {-1}), cast(Tensor(0), x.dtype())), {});
  std::vector<Tensor> coordinates;
  int64_t stride = shape.num_elements();
  for (int a = 0; a < shape.rank(); ++a) {
    if (shape[a] == 0) return {zeros(Shape{shape.rank(), 0}, int64)};
    stride /= shape[a];
    coordinates.push_back(mod(floordiv(positions, Tensor(stride)), Tensor(shape[a])));
  }
  return {stack(coordinates, 0)};
}

}  // namespace ag::onnx_io
