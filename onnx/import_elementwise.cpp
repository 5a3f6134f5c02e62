// Importers of ONNX's elementwise ops. ONNX broadcasts as NumPy does, as our
// binary ops do, and gives both operands one type, so most map one to one,
// from their ag/ops.def rows (onnx("Type"), imported by importer.cpp); here
// are the others.
// Before opset 7, broadcasting was asked for by attribute (see operands()).
// Where ONNX's semantics differ from ours, the importer composes our ops:
//   Div of integers truncates toward zero (ours floors):
//     q = floordiv(a, b); q + (mod(a, b) != 0 and (a < 0) != (b < 0))
//   Mod with fmod=1 takes the dividend's sign (ours the divisor's):
//     r = mod(a, b); where(r != 0 and (r < 0) != (a < 0), r - b, r)
//   Pow with a base and exponent of different types keeps the base's type:
//     computed in float64, then cast back.
// What ag::onnx::save writes for our not_equal (Not(Equal)) and integer
// floordiv (Div, then lowered by one where the remainder's sign is not the
// divisor's) loads back as that one op.
#include <optional>
#include <utility>

#include "ag/ops.h"
#include "import_ops.h"
#include "tensor_proto.h"

namespace ag::onnx_io {

std::pair<Tensor, Tensor> operands(NodeContext& ctx) {
  Tensor a = ctx.input(0), b = ctx.input(1);
  if (ctx.attr_int("broadcast", 0) != 0 && ctx.has_attr("axis")) {
    const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis"), a.rank(), "axis");
    const int64_t trailing = a.rank() - axis - b.rank();
    if (trailing < 0) ctx.invalid("the second operand does not fit at the axis");
    for (int64_t i = 0; i < trailing; ++i) b = expand_dims(b, b.rank());
  }
  return {a, b};
}

namespace {

// Sum, Max, Min, Mean: any number of inputs, broadcast together.
template <class Binary>
Tensor fold_inputs(NodeContext& ctx, Binary f) {
  Tensor acc = ctx.input(0);
  for (size_t k = 1; k < ctx.num_inputs(); ++k) acc = f(acc, ctx.input(k));
  return acc;
}

Tensor signs_differ(const Tensor& a, const Tensor& b) {
  return not_equal(less(a, 0), less(b, 0));
}

}  // namespace

std::vector<Tensor> import_not(NodeContext& ctx) {
  // Not(Equal(a, b)) is how the exporter writes not_equal (ONNX has none):
  // one op again. (An Equal with attributes broadcasts as before opset 7.)
  const ::onnx::NodeProto* equal = ctx.producer(0);
  if (equal && equal->op_type() == "Equal" && equal->input_size() == 2 &&
      equal->attribute_size() == 0) {
    const Tensor* a = ctx.scope().find(equal->input(0));
    const Tensor* b = ctx.scope().find(equal->input(1));
    if (a && b) return {not_equal(*a, *b)};
  }
  return {logical_not(ctx.input(0))};
}
std::vector<Tensor> import_identity(NodeContext& ctx) {
  return {ctx.input(0)};
}
// ONNX's Round takes floats only (our round of an integer is itself).
std::vector<Tensor> import_round(NodeContext& ctx) {
  return {round(ctx.input(0))};
}
// IsInf tells +inf and -inf apart by attribute (both by default).
std::vector<Tensor> import_is_inf(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool positive = ctx.attr_int("detect_positive", 1) != 0;
  const bool negative = ctx.attr_int("detect_negative", 1) != 0;
  if (positive && negative) return {is_inf(x)};
  if (!positive && !negative) return {logical_and(is_inf(x), false)};
  return {logical_and(is_inf(x), positive ? greater(x, 0) : less(x, 0))};
}
std::vector<Tensor> import_reciprocal(NodeContext& ctx) {
  return {div(1, ctx.input(0))};
}

namespace {

// The operands a and b when the Sub node is the last of the exporter's
// integer floordiv (onnx/export_ops.cpp): Sub(q, Cast(And(Not(Equal(r, 0)),
// Xor(Less(r, 0), Less(b, 0))))), r = Sub(a, Mul(q, b)), q = Div(a, b).
std::optional<std::pair<Tensor, Tensor>> exported_floordiv(const NodeContext& ctx) {
  const Scope& scope = ctx.scope();
  // The node of this graph that computed `name`, when it is a `type` with
  // two inputs (one for Not and Cast) and no broadcast attributes.
  auto made_by = [&](const std::string& name, const std::string& type) {
    const ::onnx::NodeProto* node = scope.producer(name);
    const int inputs = type == "Not" || type == "Cast" ? 1 : 2;
    const bool plain = node && node->op_type() == type && node->input_size() == inputs &&
                       (type == "Cast" || node->attribute_size() == 0);
    return plain ? node : nullptr;
  };
  auto is_zero = [&](const std::string& name) {
    const Tensor* t = scope.find(name);
    return t && !t->is_symbolic() && t->num_elements() == 1 && t->item<double>() == 0;
  };
  const ::onnx::NodeProto& last = ctx.node();
  if (last.input_size() != 2 || last.attribute_size() != 0) return std::nullopt;
  const ::onnx::NodeProto* div = made_by(last.input(0), "Div");
  const ::onnx::NodeProto* cast = made_by(last.input(1), "Cast");
  const ::onnx::NodeProto* both = cast ? made_by(cast->input(0), "And") : nullptr;
  const ::onnx::NodeProto* nonzero = both ? made_by(both->input(0), "Not") : nullptr;
  const ::onnx::NodeProto* zero = nonzero ? made_by(nonzero->input(0), "Equal") : nullptr;
  const ::onnx::NodeProto* signs = both ? made_by(both->input(1), "Xor") : nullptr;
  const ::onnx::NodeProto* r_negative = signs ? made_by(signs->input(0), "Less") : nullptr;
  const ::onnx::NodeProto* b_negative = signs ? made_by(signs->input(1), "Less") : nullptr;
  if (!div || !zero || !r_negative || !b_negative) return std::nullopt;
  const std::string &a = div->input(0), &b = div->input(1), &r = zero->input(0);
  const ::onnx::NodeProto* remainder = made_by(r, "Sub");
  const ::onnx::NodeProto* product = remainder ? made_by(remainder->input(1), "Mul") : nullptr;
  if (!product || remainder->input(0) != a || product->input(0) != last.input(0) ||
      product->input(1) != b || r_negative->input(0) != r || b_negative->input(0) != b ||
      !is_zero(zero->input(1)) || !is_zero(r_negative->input(1)) || !is_zero(b_negative->input(1)))
    return std::nullopt;
  const Tensor *a_value = scope.find(a), *b_value = scope.find(b);
  if (!a_value || !b_value || is_floating(a_value->dtype())) return std::nullopt;
  return std::pair{*a_value, *b_value};
}

}  // namespace

std::vector<Tensor> import_sub(NodeContext& ctx) {
  // floordiv again, one op, where the exporter wrote it in ONNX's ops.
  if (auto floordiv_operands = exported_floordiv(ctx))
    return {floordiv(floordiv_operands->first, floordiv_operands->second)};
  auto [a, b] = operands(ctx);
  return {sub(a, b)};
}

std::vector<Tensor> import_div(NodeContext& ctx) {
  auto [a, b] = operands(ctx);
  if (is_floating(a.dtype())) return {div(a, b)};
  Tensor q = floordiv(a, b);
  Tensor inexact = not_equal(mod(a, b), 0);
  return {where(logical_and(inexact, signs_differ(a, b)), q + 1, q)};
}

std::vector<Tensor> import_mod(NodeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  int64_t fmod = ctx.attr_int("fmod", 0);
  if (fmod == 0 && is_floating(a.dtype())) ctx.invalid("fmod must be 1 for floating-point inputs");
  Tensor r = mod(a, b);
  if (fmod == 0) return {r};
  Tensor wrong_sign = logical_and(not_equal(r, 0), signs_differ(r, a));
  return {where(wrong_sign, r - b, r)};
}

std::vector<Tensor> import_pow(NodeContext& ctx) {
  const Tensor& base = ctx.input(0);
  const Tensor& exponent = ctx.input(1);
  if (base.dtype() == exponent.dtype()) return {pow(base, exponent)};
  return {cast(pow(cast(base, float64), cast(exponent, float64)), base.dtype())};
}

std::vector<Tensor> import_max(NodeContext& ctx) {
  return {fold_inputs(ctx, [](const Tensor& a, const Tensor& b) { return maximum(a, b); })};
}
std::vector<Tensor> import_min(NodeContext& ctx) {
  return {fold_inputs(ctx, [](const Tensor& a, const Tensor& b) { return minimum(a, b); })};
}
std::vector<Tensor> import_sum(NodeContext& ctx) {
  return {fold_inputs(ctx, [](const Tensor& a, const Tensor& b) { return add(a, b); })};
}
std::vector<Tensor> import_mean(NodeContext& ctx) {
  return {div(fold_inputs(ctx, [](const Tensor& a, const Tensor& b) { return add(a, b); }),
              Scalar(int64_t(ctx.num_inputs())))};
}

namespace {

// ONNX's Cast and CastLike. Numbers and strings convert in ONNX's own
// formats (its float-to-string digits, its spellings of NaN and infinity),
// which are not TensorFlow's as_string and to_number: unsupported.
Tensor import_cast_to(NodeContext& ctx, const Tensor& x, DType to) {
  if (x.dtype() == DType::string || to == DType::string) {
    ctx.unsupported(
        "a cast between numbers and strings (ONNX writes and reads numbers in its "
        "own format; ag::strings::as_string and to_number are TensorFlow's)");
  }
  return cast(x, to);
}

}  // namespace

std::vector<Tensor> import_cast_like(NodeContext& ctx) {
  return {import_cast_to(ctx, ctx.input(0), ctx.input(1).dtype())};
}

// Without a zero point, QuantizeLinear gives uint8 and DequantizeLinear
// subtracts nothing. Before opset 13 there is no axis: the scale is a scalar.
std::vector<Tensor> import_quantize_linear(NodeContext& ctx) {
  const Tensor zero_point = ctx.has_input(2) ? ctx.input(2) : Tensor();
  return {quantize_linear(ctx.input(0), ctx.input(1), zero_point, ctx.attr_int("axis", 1))};
}

std::vector<Tensor> import_dequantize_linear(NodeContext& ctx) {
  const Tensor zero_point = ctx.has_input(2) ? ctx.input(2) : Tensor();
  return {dequantize_linear(ctx.input(0), ctx.input(1), zero_point, ctx.attr_int("axis", 1))};
}

// DynamicQuantizeLinear: uint8 over the range of x widened to hold 0, as
// ONNX defines it: scale = (max - min) / 255, zero point = the rounded,
// saturated -min / scale.
std::vector<Tensor> import_dynamic_quantize_linear(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != float32)
    ctx.invalid("x must be float32; got " + std::string(dtype_name(x.dtype())));
  const Tensor lo = minimum(reduce_min(x), 0.0f);
  const Tensor hi = maximum(reduce_max(x), 0.0f);
  const Tensor scale = (hi - lo) / 255.0f;
  const Tensor zero_point = cast(clip_by_value(round(neg(lo) / scale), 0, 255), uint8);
  return {quantize_linear(x, scale, zero_point), scale, zero_point};
}

std::vector<Tensor> import_cast(NodeContext& ctx) {
  DType to = dtype_from_onnx(int32_t(ctx.attr_int("to")), ctx.where() + ": attribute 'to'");
  return {import_cast_to(ctx, ctx.input(0), to)};
}

}  // namespace ag::onnx_io
