// Importers of ONNX's matrix products and Dropout: MatMul (NumPy's rules: a
// 1-D operand is a row (first) or a column (second) vector, removed from the
// result; batch dims broadcast, as our matmul's do), Einsum (our einsum, which
// ignores the spaces ONNX's equations may have) and Dropout.
//
// Dropout trains when training_mode (an input from opset 12, which must be
// known when the model is traced: a graph input is specialised on) is true,
// or before opset 7 when is_test is 0; ratio is an input from opset 12 (0.5
// when absent), an attribute before. Training, it is our dropout with the
// node's seed: its mask is not the one an ONNX runtime draws for that seed.
// Otherwise, and for a ratio of 0, it is the identity with an all-true mask.
#include <optional>

#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {
// NumPy's matmul: a 1-D operand is a row (a) or a column (b), removed after.
Tensor numpy_matmul(NodeContext& ctx, Tensor a, Tensor b) {
  if (a.rank() == 0 || b.rank() == 0) ctx.invalid("MatMul operands must have rank 1 or more");
  const bool a_vector = a.rank() == 1, b_vector = b.rank() == 1;
  if (a_vector) a = expand_dims(a, 0);
  if (b_vector) b = expand_dims(b, 1);
  Tensor y = matmul(a, b);
  if (b_vector) y = squeeze(y, {y.rank() - 1});
  if (a_vector) y = squeeze(y, {y.rank() - (b_vector ? 1 : 2)});
  return y;
}
}  // namespace

std::vector<Tensor> import_matmul(NodeContext& ctx) {
  return {numpy_matmul(ctx, ctx.input(0), ctx.input(1))};
}

// MatMulInteger: (a - a_zero_point) @ (b - b_zero_point) in int32; a's zero
// point may be per row (1-D of a's rows), b's per column.
std::vector<Tensor> import_matmul_integer(NodeContext& ctx) {
  Tensor a = cast(ctx.input(0), int32), b = cast(ctx.input(1), int32);
  if (ctx.has_input(2)) {
    Tensor zp = cast(ctx.input(2), int32);
    if (zp.rank() == 1 && a.rank() >= 2) zp = expand_dims(zp, 1);
    a = a - zp;
  }
  if (ctx.has_input(3)) b = b - cast(ctx.input(3), int32);
  return {numpy_matmul(ctx, a, b)};
}

std::vector<Tensor> import_einsum(NodeContext& ctx) {
  if (!ctx.has_attr("equation")) ctx.invalid("needs its equation attribute");
  return {einsum(ctx.attr_string("equation", ""), ctx.inputs())};
}

std::vector<Tensor> import_dropout(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  bool training = false;
  double ratio = 0.5;
  if (ctx.opset() >= 12) {
    if (ctx.has_input(1)) ratio = ctx.constant_doubles(1, "ratio")[0];
    if (ctx.has_input(2)) training = ctx.constant_doubles(2, "training_mode")[0] != 0;
  } else {
    ratio = ctx.attr_float("ratio", 0.5f);
    training = ctx.opset() < 7 && ctx.attr_int("is_test", 0) == 0;
  }
  if (!training || ratio == 0) return {x, cast(ones_like(x), bool_)};
  std::optional<uint64_t> seed;
  if (ctx.has_attr("seed")) seed = uint64_t(ctx.attr_int("seed"));
  // The mask scaled (dropout of ones), so that the bool mask output is its own.
  const Tensor scaled_mask = dropout(ones_like(x), ratio, seed);
  return {x * scaled_mask, not_equal(scaled_mask, 0)};
}

}  // namespace ag::onnx_io
