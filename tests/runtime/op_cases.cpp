// The cases of the op tests (op_cases.h).
#include "op_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ag/distribute.h>
#include <ag/rnn.h>

namespace ag_test {

// Installs a one-rank backend of the collectives unless one is installed
// (the gradient cases of tests/runtime/gradient_ops_test.cpp use it too).
void use_single_process_collectives();

namespace {

using ag::DType;
using ag::Shape;
using ag::Tensor;
using Tensors = std::vector<Tensor>;

// The storage dtypes (ag/dtype.h) are computed as int32, int64 or float32, so
// an op takes them where it takes those.
const std::vector<DType> kInteger = {ag::int32, ag::int64,  ag::uint8,  ag::int8,
                                     ag::int16, ag::uint16, ag::uint32, ag::uint64};
const std::vector<DType> kFloating = {ag::float32, ag::float64, ag::float16, ag::bfloat16};
const std::vector<DType> kNumeric = [] {
  std::vector<DType> all = kFloating;
  all.insert(all.end(), kInteger.begin(), kInteger.end());
  return all;
}();
const std::vector<DType> kAll = [] {
  std::vector<DType> all = kNumeric;
  all.push_back(ag::bool_);
  return all;
}();
const std::vector<DType> kBoolOnly = {ag::bool_};
// The data-movement ops move string elements as any others (ag/strings.h).
const std::vector<DType> kAllAndString = [] {
  std::vector<DType> all = kAll;
  all.push_back(ag::string);
  return all;
}();
const std::vector<DType> kStringOnly = {ag::string};
// The dtypes that gradients flow in (float16 and bfloat16 are refused).
const std::vector<DType> kDifferentiable = {ag::float32, ag::float64};
// The dtypes with C++ scalars and promotion to mix with: a storage dtype mixed
// with the int32 or float32 a case makes is an error.
const std::vector<DType> kCompute = {ag::float32, ag::float64, ag::int32, ag::int64, ag::bool_};
const std::vector<DType> kIntegerAndBool = [] {
  std::vector<DType> all = kInteger;
  all.push_back(ag::bool_);
  return all;
}();

// Deterministic values with negatives, zeros and fractions; `salt` varies
// them between operands. `nonzero` keeps divisors away from zero, where
// integer division raises.
Tensor sample(DType dtype, Shape shape, int salt = 0, bool nonzero = false) {
  // Strings: the int32 samples written out ("-5" .. "5").
  if (dtype == ag::string)
    return ag::strings::as_string(sample(ag::int32, std::move(shape), salt, nonzero));
  int64_t n = shape.num_elements();
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = (i * 7 + salt * 5 + 3) % 11 - 5;  // -5..5
    if (nonzero && v == 0) v = 2;
    // uint64 -5 would be 2^64 - 5, which the ops that read magnitudes refuse
    // (ag/dtype.h); DTypes.Uint64* test values from 2^63 up.
    if (dtype == ag::uint64) v = std::abs(v);
    values[size_t(i)] = ag::is_floating(dtype) ? double(v) * 0.75 + 0.125 * double(salt % 3) : v;
  }
  if (dtype == ag::bool_) {
    std::vector<int32_t> bits(values.begin(), values.end());
    for (int32_t& b : bits) b = b > 0;
    return ag::cast(ag::constant(bits, shape), ag::bool_);
  }
  return ag::cast(ag::constant(values, shape), dtype);
}

// Positive values, for log, sqrt and pow with fractional exponents. Bool
// (for the rejection tests) has no abs: plain samples.
Tensor positive(DType dtype, Shape shape, int salt = 0) {
  if (dtype == ag::bool_) return sample(dtype, shape, salt);
  return ag::abs(sample(dtype, shape, salt, true)) + 1;
}

// The inputs of a case: one sample per shape, the k-th with salt first_salt + k.
std::function<Tensors(DType)> samples(std::vector<Shape> shapes, int first_salt = 0) {
  return [shapes, first_salt](DType d) {
    Tensors inputs;
    for (size_t k = 0; k < shapes.size(); ++k) {
      inputs.push_back(sample(d, shapes[k], first_salt + int(k)));
    }
    return inputs;
  };
}

// ---- The cases ------------------------------------------------------------------------

// Rank-0 operands (the "_scalars" cases) make the executor's scalar steps,
// which compute values that later steps read; a function output is computed
// by the general kernel. So those cases pass the result through one more op.
Tensor as_intermediate(const Tensor& scalar) {
  return ag::reshape(scalar, {1});
}

// An op's last parameter is its call site (ag/tensor.h, CallSite).
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&, ag::CallSite);
using UnaryFn = Tensor (*)(const Tensor&, ag::CallSite);

void add_binary(std::vector<OpCase>& cases, const std::string& name, BinaryFn fn,
                std::vector<DType> dtypes, bool nonzero_divisor = false) {
  auto make = [=](Shape a, Shape b) {
    return [=](DType d) { return Tensors{sample(d, a, 1), sample(d, b, 2, nonzero_divisor)}; };
  };
  auto call = [fn](const Tensors& x) { return fn(x[0], x[1], {}); };
  cases.push_back({name, dtypes, make({2, 3}, {2, 3}), call});
  cases.push_back({name + "_broadcast", dtypes, make({2, 1, 3}, {4, 3}), call});
  cases.push_back({name + "_row", dtypes, make({2, 3}, {3}), call});
  cases.push_back({name + "_scalar", dtypes, make({2, 3}, {}), call});
  cases.push_back({name + "_scalars", dtypes, make({}, {}),
                   [fn](const Tensors& x) { return as_intermediate(fn(x[0], x[1], {})); }});
}

void add_unary(std::vector<OpCase>& cases, const std::string& name, UnaryFn fn,
               std::vector<DType> dtypes, bool positive_only = false) {
  auto make = [=](Shape shape) {
    return [=](DType d) { return Tensors{positive_only ? positive(d, shape) : sample(d, shape)}; };
  };
  cases.push_back({name, dtypes, make({2, 5}), [fn](const Tensors& x) { return fn(x[0], {}); }});
  cases.push_back({name + "_scalars", dtypes, make({}),
                   [fn](const Tensors& x) { return as_intermediate(fn(x[0], {})); }});
}

// An int32 or int64 constant of index values.
Tensor index_constant(const std::vector<int32_t>& values, Shape shape, DType dtype) {
  return ag::cast(ag::constant(values, shape), dtype);
}

// tile, reverse, split, repeat, gather_nd and the scatters.
void add_layout_selection_cases(std::vector<OpCase>& c) {
  auto one = [&](const std::string& name, std::vector<DType> dtypes, Shape shape,
                 std::function<Tensor(const Tensor&)> f) {
    c.push_back(
        {name, std::move(dtypes), samples({shape}), [f](const Tensors& x) { return f(x[0]); }});
  };
  one("tile", kAllAndString, {2, 3}, [](const Tensor& x) { return ag::tile(x, {2, 3}); });
  one("tile_inner", kAll, {2, 1, 3}, [](const Tensor& x) { return ag::tile(x, {1, 4, 2}); });
  one("tile_scalar", kAll, {}, [](const Tensor& x) { return as_intermediate(ag::tile(x, {})); });
  one("reverse", kAllAndString, {2, 3, 4}, [](const Tensor& x) { return ag::reverse(x, {0, -1}); });
  one("reverse_middle", kAll, {2, 3, 4}, [](const Tensor& x) { return ag::reverse(x, {1}); });
  one("split_even", kAll, {2, 6, 2}, [](const Tensor& x) {
    const Tensors parts = ag::split(x, 3, 1);
    return ag::concat({parts[2], parts[0]}, 1);
  });
  one("split_sizes", kAll, {5, 2}, [](const Tensor& x) {
    const Tensors parts = ag::split(x, std::vector<int64_t>{1, -1, 2});
    return ag::concat({parts[2], parts[1]}, 0);
  });
  one("repeat_each", kAll, {2, 3}, [](const Tensor& x) { return ag::repeat(x, {1, 0, 2}, 1); });
  one("repeat_flat", kAll, {2, 3}, [](const Tensor& x) { return ag::repeat(x, 2); });
  for (DType index_dtype : {ag::int32, ag::int64}) {
    const std::string suffix = "_" + std::string(ag::dtype_name(index_dtype));
    auto with_indices = [&](const std::string& name, std::vector<DType> dtypes,
                            std::vector<Shape> shapes, std::vector<int32_t> index,
                            Shape index_shape,
                            std::function<Tensor(const Tensors&, const Tensor&)> f) {
      const Tensor indices = index_constant(index, index_shape, index_dtype);
      c.push_back({name + suffix, std::move(dtypes), samples(std::move(shapes)),
                   [f, indices](const Tensors& x) { return f(x, indices); }});
    };
    with_indices("gather_nd_rows", kAll, {{3, 4, 2}}, {2, 1, 0, 3}, {2, 2},
                 [](const Tensors& x, const Tensor& i) { return ag::gather_nd(x[0], i); });
    with_indices("gather_nd_elements", kAll, {{3, 4}}, {2, 1, 0, 3, 2, 1}, {3, 2},
                 [](const Tensors& x, const Tensor& i) { return ag::gather_nd(x[0], i); });
    with_indices("gather_nd_batch_dims", kAll, {{2, 3, 4}}, {1, 2, 0, 0}, {2, 2, 1},
                 [](const Tensors& x, const Tensor& i) { return ag::gather_nd(x[0], i, 1); });
    with_indices("tensor_scatter_nd_update_rows", kAll, {{4, 3}, {2, 3}}, {1, 3}, {2, 1},
                 [](const Tensors& x, const Tensor& i) {
                   return ag::tensor_scatter_nd_update(x[0], i, x[1]);
                 });
    with_indices("tensor_scatter_nd_update_elements", kAll, {{4, 3}, {2}}, {0, 1, 2, 2}, {2, 2},
                 [](const Tensors& x, const Tensor& i) {
                   return ag::tensor_scatter_nd_update(x[0], i, x[1]);
                 });
    // Repeated rows add up.
    with_indices(
        "tensor_scatter_nd_add", kNumeric, {{4, 3}, {3, 3}}, {1, 1, 3}, {3, 1},
        [](const Tensors& x, const Tensor& i) { return ag::tensor_scatter_nd_add(x[0], i, x[1]); });
    with_indices("scatter_nd", kNumeric, {{3, 2}}, {0, 2, 0}, {3, 1},
                 [](const Tensors& x, const Tensor& i) { return ag::scatter_nd(i, x[0], {4, 2}); });
  }
}

// argsort, sort, top_k and cumprod. The samples repeat values, so ties are
// broken by index.
void add_sorting_cases(std::vector<OpCase>& c) {
  auto one = [&](const std::string& name, Shape shape, std::function<Tensor(const Tensor&)> f) {
    c.push_back({name, kNumeric, samples({shape}), [f](const Tensors& x) { return f(x[0]); }});
  };
  one("argsort", {3, 5}, [](const Tensor& x) { return ag::argsort(x); });
  one("argsort_axis0_descending", {4, 3},
      [](const Tensor& x) { return ag::argsort(x, 0, "DESCENDING"); });
  one("sort", {3, 5}, [](const Tensor& x) { return ag::sort(x); });
  one("sort_axis0_descending", {4, 3, 2},
      [](const Tensor& x) { return ag::sort(x, 0, "DESCENDING"); });
  one("top_k_values", {3, 5}, [](const Tensor& x) { return ag::top_k(x, 2).values; });
  one("top_k_indices", {2, 3, 6}, [](const Tensor& x) { return ag::top_k(x, 4).indices; });
  one("top_k_vector", {7}, [](const Tensor& x) { return ag::top_k(x, 3).values; });
  // The gradient of top_k's values: a scatter with batch dims.
  c.push_back({"top_k_gradient", kDifferentiable, samples({{2, 3, 5}}), [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::top_k(x[0], 2).values * 3.0;
                 return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
               }});
  for (int64_t axis : {0, -1}) {
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        one("cumprod_axis" + std::string(axis < 0 ? "m1" : "0") + (exclusive ? "_exclusive" : "") +
                (reverse ? "_reverse" : ""),
            {3, 4}, [=](const Tensor& x) { return ag::cumprod(x, axis, exclusive, reverse); });
      }
    }
  }
}

// The collectives on one rank, where each returns its input (all_gather and
// reduce_scatter of one part): the ops' tracing, dtypes and gradients, with
// no transport. tests/distribute runs them across ranks under mpirun.
class SingleProcessCollectives : public ag::distribute::Backend {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void run(const ag::distribute::CollectiveCall& call) override {
    std::memcpy(call.output, call.input, size_t(call.input_elements) * ag::dtype_size(call.dtype));
  }
};

void add_collective_cases(std::vector<OpCase>& c) {
  using ag::distribute::ReduceOp;
  auto one = [&](const std::string& name, std::vector<DType> dtypes,
                 std::function<Tensor(const Tensor&)> f) {
    c.push_back({name, std::move(dtypes), samples({{4, 3}}), [f](const Tensors& x) {
                   use_single_process_collectives();
                   return f(x[0]);
                 }});
  };
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
    one("all_reduce_" + std::string(ag::distribute::reduce_op_name(op)), kNumeric,
        [op](const Tensor& x) { return ag::distribute::all_reduce(x, op); });
  }
  one("all_reduce_mean", kFloating,
      [](const Tensor& x) { return ag::distribute::all_reduce(x, ReduceOp::Mean); });
  one("broadcast", kNumeric, [](const Tensor& x) { return ag::distribute::broadcast(x, 0); });
  one("all_gather", kNumeric, [](const Tensor& x) { return ag::distribute::all_gather(x); });
  one("reduce_scatter", kNumeric,
      [](const Tensor& x) { return ag::distribute::reduce_scatter(x); });
  one("reduce_scatter_mean", kFloating,
      [](const Tensor& x) { return ag::distribute::reduce_scatter(x, ReduceOp::Mean); });
}

// quantize_linear on float32 and int32 x (with values past both
// ends of uint8 and int8, and halves that round to even), per tensor and per
// axis; dequantize_linear on uint8, int8 and int32 x.
void add_quantize_cases(std::vector<OpCase>& c) {
  const std::vector<DType> kQuantizable = {ag::float32, ag::int32};
  const std::vector<DType> kQuantized = {ag::uint8, ag::int8, ag::int32};
  auto x_values = [](DType d) {
    return ag::cast(ag::constant({{-300.0, -2.5, -0.5, 0.5, 1.5}, {2.5, 3.0, 127.5, 254.5, 300.0}}),
                    d);
  };
  c.push_back({"quantize_linear_uint8", kQuantizable,
               [=](DType d) {
                 return Tensors{x_values(d), ag::constant(0.5f),
                                ag::cast(ag::constant(3), ag::uint8)};
               },
               [](const Tensors& x) { return ag::quantize_linear(x[0], x[1], x[2]); }});
  c.push_back({"quantize_linear_int8_axis", kQuantizable,
               [=](DType d) {
                 return Tensors{x_values(d), ag::constant({1.0, 2.0}, ag::float32),
                                ag::cast(ag::constant({-1, 4}), ag::int8)};
               },
               [](const Tensors& x) { return ag::quantize_linear(x[0], x[1], x[2], 0); }});
  c.push_back({"dequantize_linear", kQuantized,
               [](DType d) {
                 return Tensors{ag::cast(ag::constant({{0, 1, 100}, {127, 50, 3}}), d),
                                ag::constant({0.5f, 2.0f, 0.25f}),
                                ag::cast(ag::constant({0, 3, 100}), d)};
               },
               [](const Tensors& x) { return ag::dequantize_linear(x[0], x[1], x[2], -1); }});
}

// The string ops (ag/strings.h), on string samples ("-5" .. "5"); given
// another dtype, each must refuse it.
void add_string_cases(std::vector<OpCase>& c) {
  c.push_back({"string_join", kStringOnly, samples({{2, 3}, {3}}),
               [](const Tensors& x) { return ag::strings::join({x[0], x[1]}, "+"); }});
  // == and != are string_equal and string_not_equal on strings (listed
  // first, the dtype the coverage test traces), equal and not_equal else.
  std::vector<DType> compared = {ag::string};
  compared.insert(compared.end(), kAll.begin(), kAll.end());
  c.push_back({"string_equal", compared, samples({{2, 3}, {3}}),
               [](const Tensors& x) { return x[0] == x[1]; }});
  c.push_back({"string_not_equal", compared, samples({{2, 3}, {3}}),
               [](const Tensors& x) { return x[0] != x[1]; }});
  c.push_back({"string_length", kStringOnly, samples({{2, 3}}),
               [](const Tensors& x) { return ag::strings::length(x[0]); }});
  c.push_back({"substr", kStringOnly, samples({{2, 3}}),
               [](const Tensors& x) { return ag::strings::substr(x[0], 0, 1); }});
  c.push_back({"as_string", kAll, samples({{2, 3}}),
               [](const Tensors& x) { return ag::strings::as_string(x[0]); }});
  c.push_back({"string_to_number", kStringOnly, samples({{2, 3}}),
               [](const Tensors& x) { return ag::strings::to_number(x[0], ag::int64); }});
  c.push_back({"string_split", kStringOnly, samples({{4}}),
               [](const Tensors& x) { return ag::strings::split(x[0], "-"); }});
  c.push_back({"reduce_join", kStringOnly, samples({{2, 3}}),
               [](const Tensors& x) { return ag::strings::reduce_join(x[0], {1}, false, ","); }});
}

std::vector<OpCase> make_cases() {
  std::vector<OpCase> c;
  // Elementwise binary (weak C++ scalars too).
  add_binary(c, "add", ag::add, kNumeric);
  add_binary(c, "sub", ag::sub, kNumeric);
  add_binary(c, "mul", ag::mul, kNumeric);
  // Integer and bool operands divide as float64.
  add_binary(c, "div", ag::div, kAll, true);
  add_binary(c, "floordiv", ag::floordiv, kNumeric, true);
  add_binary(c, "mod", ag::mod, kNumeric, true);
  add_binary(c, "maximum", ag::maximum, kNumeric);
  add_binary(c, "minimum", ag::minimum, kNumeric);
  add_binary(c, "equal", ag::equal, kAll);
  add_binary(c, "not_equal", ag::not_equal, kAll);
  add_binary(c, "less", ag::less, kAll);
  add_binary(c, "less_equal", ag::less_equal, kAll);
  add_binary(c, "greater", ag::greater, kAll);
  add_binary(c, "greater_equal", ag::greater_equal, kAll);
  add_binary(c, "logical_and", ag::logical_and, kBoolOnly);
  add_binary(c, "logical_or", ag::logical_or, kBoolOnly);
  add_binary(c, "logical_xor", ag::logical_xor, kBoolOnly);
  // Bitwise ops; the samples' counts -5..5 shift by negative counts too.
  add_binary(c, "bitwise_and", ag::bitwise_and, kInteger);
  add_binary(c, "bitwise_or", ag::bitwise_or, kInteger);
  add_binary(c, "bitwise_xor", ag::bitwise_xor, kInteger);
  add_binary(c, "left_shift", ag::left_shift, kInteger);
  add_binary(c, "right_shift", ag::right_shift, kInteger);
  // The operators & | ^ ~ << >> ++ --: logical on bool, bitwise on integers.
  c.push_back({"bitwise_operators", kIntegerAndBool, samples({{2, 3}, {3}}),
               [](const Tensors& x) { return ((x[0] & x[1]) | ~x[0]) ^ (x[1] | x[0]); }});
  // (A bool operand shifts as int32: an integer scalar lifts bool to int32.)
  c.push_back({"shift_operators", kIntegerAndBool, samples({{2, 3}, {3}}), [](const Tensors& x) {
                 Tensor t = (x[0] << 3) >> x[1];
                 t <<= 1;
                 return t;
               }});
  c.push_back({"increment_operators", kNumeric, samples({{2, 3}}), [](const Tensors& x) {
                 Tensor t = x[0];
                 ++t;
                 Tensor before = t++;
                 --t;
                 return t * 2 + before + (t--);
               }});
  // Small non-negative integer exponents; bool stays bool for the rejection test.
  auto pow_inputs = [](Shape shape) {
    return [shape](DType d) {
      Tensor exponent = d == ag::bool_ ? sample(d, shape, 2) : positive(d, shape, 2) % 4;
      return Tensors{sample(d, shape, 1), exponent};
    };
  };
  auto pow = [](const Tensors& x) { return ag::pow(x[0], x[1]); };
  c.push_back({"pow", kNumeric, pow_inputs({2, 3}), pow});
  c.push_back({"pow_scalars", kNumeric, pow_inputs({}),
               [pow](const Tensors& x) { return as_intermediate(pow(x)); }});
  auto positive_base = [](DType d) {
    return Tensors{positive(d, {2, 3}, 1), sample(d, {2, 3}, 2)};
  };
  // The unsigned samples below 2^32 wrap to large positive exponents, which
  // pow takes; uint64's are small (sample).
  std::vector<DType> fractional = kFloating;
  fractional.insert(fractional.end(), {ag::uint8, ag::uint16, ag::uint32, ag::uint64});
  c.push_back({"pow_fractional", fractional, positive_base, pow});
  // The floating scalar makes an integer operand float32, which no storage
  // integer mixes with.
  std::vector<DType> weak = kCompute;
  weak.insert(weak.end(), {ag::float16, ag::bfloat16});
  c.push_back({"weak_scalars", weak, samples({{2, 3}}),
               [](const Tensors& x) { return ag::pow(x[0] * 3 - 1, 2) + 0.5 * x[0]; }});

  // Elementwise unary.
  add_unary(c, "neg", ag::neg, kNumeric);
  add_unary(c, "abs", ag::abs, kNumeric);
  add_unary(c, "relu", ag::relu, kNumeric);
  add_unary(c, "square", ag::square, kNumeric);
  add_unary(c, "identity", ag::identity, kAll);
  add_unary(c, "exp", ag::exp, kFloating);
  add_unary(c, "tanh", ag::tanh, kFloating);
  add_unary(c, "sigmoid", ag::sigmoid, kFloating);
  add_unary(c, "log", ag::log, kFloating, true);
  add_unary(c, "sqrt", ag::sqrt, kFloating, true);
  for (auto [name, fn] : {std::pair{"sin", &ag::sin},
                          {"cos", &ag::cos},
                          {"tan", &ag::tan},
                          {"atan", &ag::atan},
                          {"sinh", &ag::sinh},
                          {"cosh", &ag::cosh},
                          {"asinh", &ag::asinh},
                          {"erf", &ag::erf},
                          {"expm1", &ag::expm1},
                          {"softplus", &ag::softplus},
                          {"softsign", &ag::softsign},
                          {"elu", &ag::elu},
                          {"selu", &ag::selu},
                          {"gelu", &ag::gelu}})
    add_unary(c, name, fn, kFloating);
  for (auto [name, fn] : {std::pair{"acosh", &ag::acosh},
                          {"log1p", &ag::log1p},
                          {"rsqrt", &ag::rsqrt},
                          {"reciprocal", &ag::reciprocal}})
    add_unary(c, name, fn, kFloating, true);
  for (int64_t axis : {-1, 0}) {
    const std::string suffix = axis < 0 ? "_last" : "_0";
    c.push_back({"softmax" + suffix, kFloating, samples({{3, 4}}),
                 [axis](const Tensors& x) { return ag::softmax(x[0], axis); }});
    c.push_back({"log_softmax" + suffix, kFloating, samples({{2, 3, 4}}),
                 [axis](const Tensors& x) { return ag::log_softmax(x[0], axis); }});
  }
  // Inside (-1, 1).
  for (auto [name, fn] :
       {std::pair{"asin", &ag::asin}, {"acos", &ag::acos}, {"atanh", &ag::atanh}}) {
    c.push_back({name, kFloating,
                 [](DType d) {
                   const Tensor x = sample(d, {2, 5});
                   return Tensors{ag::is_floating(d) ? x * 0.2 : x};
                 },
                 [fn](const Tensors& x) { return fn(x[0], {}); }});
  }
  add_unary(c, "logical_not", ag::logical_not, kBoolOnly);
  // The samples include halves (1.5, -3.75 + 0.25 = ...), where round picks the even neighbour.
  add_unary(c, "round", ag::round, kNumeric);
  add_unary(c, "floor", ag::floor, kFloating);
  add_unary(c, "ceil", ag::ceil, kFloating);
  add_unary(c, "sign", ag::sign, kNumeric);
  add_unary(c, "invert", ag::invert, kInteger);
  // NaN, infinities and finite values (the samples have none of the first two).
  const std::pair<const char*, UnaryFn> tests[] = {
      {"is_nan", ag::is_nan}, {"is_inf", ag::is_inf}, {"is_finite", ag::is_finite}};
  for (auto [name, fn] : tests) {
    add_unary(c, name, fn, kFloating);
    c.push_back({std::string(name) + "_special_values", kFloating,
                 [](DType d) {
                   // Other dtypes (for the rejection test) have no NaN to cast to.
                   if (!ag::is_floating(d)) return Tensors{sample(d, {5})};
                   const double inf = std::numeric_limits<double>::infinity();
                   return Tensors{ag::cast(ag::constant({1.5, std::nan(""), inf, -inf, -0.0}), d)};
                 },
                 [fn](const Tensors& x) { return fn(x[0], {}); }});
  }
  // Bounds as C++ scalars, as tensors that broadcast (some min > max), and
  // all rank 0 (a scalar step).
  c.push_back({"clip_by_value", kNumeric, samples({{2, 5}}),
               [](const Tensors& x) { return ag::clip_by_value(x[0], -2, 3); }});
  c.push_back({"clip_by_value_tensors", kNumeric, samples({{2, 3}, {3}, {2, 1}}),
               [](const Tensors& x) { return ag::clip_by_value(x[0], x[1], x[2]); }});
  c.push_back({"clip_by_value_scalars", kNumeric, samples({{}, {}, {}}), [](const Tensors& x) {
                 return as_intermediate(ag::clip_by_value(x[0], x[1], x[2]));
               }});
  for (DType to : kAllDtypes) {
    c.push_back({"cast_to_" + std::string(ag::dtype_name(to)), kAll, samples({{2, 5}}),
                 [to](const Tensors& x) { return ag::cast(x[0], to); }});
    c.push_back({"cast_scalars_to_" + std::string(ag::dtype_name(to)), kAll, samples({Shape{}}),
                 [to](const Tensors& x) { return as_intermediate(ag::cast(x[0], to)); }});
  }
  c.push_back({"where", kAll,
               [](DType d) {
                 return Tensors{sample(ag::bool_, {2, 3}), sample(d, {2, 3}, 1), sample(d, {3}, 2)};
               },
               [](const Tensors& x) { return ag::where(x[0], x[1], x[2]); }});
  for (bool condition : {false, true}) {
    c.push_back({std::string("where_scalars_") + (condition ? "true" : "false"), kAll,
                 [condition](DType d) {
                   return Tensors{ag::constant(condition), sample(d, {}, 1), sample(d, {}, 2)};
                 },
                 [](const Tensors& x) { return as_intermediate(ag::where(x[0], x[1], x[2])); }});
  }

  // Reductions, over every axis, one axis, a negative axis and two axes.
  using ReduceFn = Tensor (*)(const Tensor&, std::vector<int64_t>, bool, ag::CallSite);
  struct Reduction {
    const char* name;
    ReduceFn fn;
    std::vector<DType> dtypes;
  };
  const Reduction reductions[] = {
      {"reduce_sum", ag::reduce_sum, kNumeric},   {"reduce_mean", ag::reduce_mean, kNumeric},
      {"reduce_prod", ag::reduce_prod, kNumeric}, {"reduce_max", ag::reduce_max, kAll},
      {"reduce_min", ag::reduce_min, kAll},       {"reduce_any", ag::reduce_any, kBoolOnly},
      {"reduce_all", ag::reduce_all, kBoolOnly}};
  const std::vector<std::vector<int64_t>> axes_cases = {{}, {0}, {1}, {-1}, {0, 2}};
  for (const Reduction& r : reductions) {
    for (const auto& axes : axes_cases) {
      for (bool keepdims : {false, true}) {
        std::string axes_name = "all";
        if (!axes.empty()) axes_name.clear();
        for (int64_t a : axes) axes_name += (axes_name.empty() ? "" : "_") + std::to_string(a);
        std::replace(axes_name.begin(), axes_name.end(), '-', 'm');
        c.push_back({std::string(r.name) + "_" + axes_name + (keepdims ? "_keepdims" : ""),
                     r.dtypes, samples({{2, 3, 4}}), [fn = r.fn, axes, keepdims](const Tensors& x) {
                       return fn(x[0], axes, keepdims, {});
                     }});
      }
    }
  }
  for (int64_t axis : {0, 1, -1}) {
    std::string suffix = "_axis" + std::string(axis < 0 ? "m1" : std::to_string(axis));
    c.push_back({"argmax" + suffix, kNumeric, samples({{3, 4, 2}}),
                 [axis](const Tensors& x) { return ag::argmax(x[0], axis); }});
    c.push_back({"argmin" + suffix, kNumeric, samples({{3, 4, 2}}),
                 [axis](const Tensors& x) { return ag::argmin(x[0], axis); }});
  }

  for (int64_t axis : {0, 1, -1}) {
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        c.push_back({"cumsum_axis" + std::string(axis < 0 ? "m1" : std::to_string(axis)) +
                         (exclusive ? "_exclusive" : "") + (reverse ? "_reverse" : ""),
                     kNumeric, samples({{3, 4, 2}}),
                     [=](const Tensors& x) { return ag::cumsum(x[0], axis, exclusive, reverse); }});
      }
    }
  }

  auto sum_to_case = [&](const std::string& name, Shape x, Shape like) {
    c.push_back({name, kNumeric, samples({x, like}),
                 [](const Tensors& t) { return ag::reduce_sum_to(t[0], t[1]); }});
  };
  sum_to_case("reduce_sum_to_leading_and_inner", {3, 4, 2}, {4, 1});
  sum_to_case("reduce_sum_to_scalar", {2, 3}, {});
  sum_to_case("reduce_sum_to_same_shape", {2, 3}, {2, 3});

  // Linear algebra: tiny (own loop), BLAS-sized, batched.
  auto matmul_case = [&](const std::string& name, Shape a, Shape b) {
    c.push_back({name, kNumeric, samples({a, b}, 1),
                 [](const Tensors& x) { return ag::matmul(x[0], x[1]); }});
  };
  matmul_case("matmul_2x2", {2, 2}, {2, 2});
  matmul_case("matmul_10x10", {10, 10}, {10, 10});
  matmul_case("matmul_33x17x9", {33, 17}, {17, 9});
  matmul_case("matmul_batched", {2, 3, 4}, {2, 4, 5});
  matmul_case("matmul_broadcast_batch", {2, 1, 3, 4}, {3, 4, 5});
  matmul_case("matmul_shared_b", {2, 3, 4}, {4, 5});
  auto transposed_case = [&](const std::string& name, Shape a, Shape b, bool ta, bool tb) {
    c.push_back({name, kNumeric, samples({a, b}, 1),
                 [ta, tb](const Tensors& x) { return ag::matmul(x[0], x[1], ta, tb); }});
  };
  transposed_case("matmul_transpose_both", {2, 4, 3}, {5, 4}, true, true);
  transposed_case("matmul_transpose_a_blas", {17, 33}, {17, 9}, true, false);
  transposed_case("matmul_transpose_b_broadcast", {3, 1, 2, 4}, {2, 5, 4}, false, true);
  // einsum, lowered to transpose, reshape, gather, reduce_sum, mul and matmul.
  auto einsum_case = [&](const std::string& name, std::vector<DType> dtypes,
                         std::vector<Shape> shapes, std::string equation) {
    c.push_back({name, std::move(dtypes), samples(std::move(shapes)),
                 [equation](const Tensors& x) { return ag::einsum(equation, x); }});
  };
  einsum_case("einsum_batch_matmul", kNumeric, {{2, 3, 4}, {2, 4, 5}}, "bij,bjk->bik");
  einsum_case("einsum_diagonal_sum", kNumeric, {{3, 3, 2}}, "iij->j");
  einsum_case("einsum_outer", kNumeric, {{3}, {4}}, "i,j->ji");
  einsum_case("einsum_three_operands", kNumeric, {{2, 3}, {3, 4}, {4, 2}}, "ij,jk,kl->li");
  einsum_case("einsum_ellipsis", kNumeric, {{2, 1, 3, 4}, {3, 4, 2}}, "...ij,...jk->...ki");
  // linspace, norms and dropout, composed of ops.
  c.push_back({"linspace", kFloating, samples({{}, {2}}),
               [](const Tensors& x) { return ag::linspace(x[0], x[1], 5, 1); }});
  c.push_back({"norm_euclidean", kFloating, samples({{3, 4}}),
               [](const Tensors& x) { return ag::norm(x[0], "euclidean", {1}); }});
  c.push_back({"norm_matrix_one", kFloating, samples({{2, 3, 4}}),
               [](const Tensors& x) { return ag::norm(x[0], 1, {1, 2}, true); }});
  c.push_back(
      {"norm_p3", kFloating, samples({{5}}), [](const Tensors& x) { return ag::norm(x[0], 3); }});
  // y is 0 or 2x whichever the mask: |y (y - 2x)| is 0 in every run.
  c.push_back({"dropout", kFloating, samples({{3, 4}}), [](const Tensors& x) {
                 const Tensor y = ag::dropout(x[0], 0.5, 17);
                 return ag::abs(y * (y - x[0] * 2.0));
               }});

  // Shapes and data movement.
  auto layout = [&](const std::string& name, Shape shape, std::function<Tensor(const Tensor&)> f) {
    c.push_back({name, kAllAndString, samples({shape}), [f](const Tensors& x) { return f(x[0]); }});
  };
  layout("transpose_reverse", {2, 3, 4}, [](const Tensor& x) { return ag::transpose(x); });
  layout("transpose_perm", {2, 3, 4}, [](const Tensor& x) { return ag::transpose(x, {1, 0, 2}); });
  layout("reshape", {2, 3, 4}, [](const Tensor& x) { return ag::reshape(x, {4, -1}); });
  layout("reshape_flat", {2, 3, 4}, [](const Tensor& x) { return ag::reshape(x, {-1}); });
  layout("expand_dims_0", {2, 3}, [](const Tensor& x) { return ag::expand_dims(x, 0); });
  layout("expand_dims_m1", {2, 3}, [](const Tensor& x) { return ag::expand_dims(x, -1); });
  layout("squeeze_all", {1, 3, 1, 2}, [](const Tensor& x) { return ag::squeeze(x); });
  layout("squeeze_axis", {1, 3, 1, 2}, [](const Tensor& x) { return ag::squeeze(x, {2}); });
  layout("broadcast_to_rows", {3}, [](const Tensor& x) { return ag::broadcast_to(x, {2, 3}); });
  layout("broadcast_to_inner", {2, 1, 3},
         [](const Tensor& x) { return ag::broadcast_to(x, {4, 2, 5, 3}); });
  // Shapes given as tensors: graph inputs when traced, so that the ops read
  // them when the graph runs (int32 and int64 shapes; a -1 inferred).
  auto with_shape = [&](const std::string& name, Shape shape, Tensor dims,
                        std::function<Tensor(const Tensor&, const Tensor&)> f) {
    c.push_back({name, kAll, [shape, dims](DType d) { return Tensors{sample(d, shape), dims}; },
                 [f](const Tensors& x) { return f(x[0], x[1]); }});
  };
  with_shape("dynamic_reshape", {2, 3, 4}, ag::constant(std::vector<int64_t>{4, -1}, {2}),
             [](const Tensor& x, const Tensor& s) { return ag::reshape(x, s); });
  with_shape("dynamic_reshape_int32", {2, 3, 4}, ag::constant({3, 2, 4}),
             [](const Tensor& x, const Tensor& s) { return ag::reshape(x, s); });
  with_shape("dynamic_broadcast_to", {2, 1, 3}, ag::constant({4, 2, 5, 3}),
             [](const Tensor& x, const Tensor& s) { return ag::broadcast_to(x, s); });
  with_shape("dynamic_tile", {2, 3}, ag::constant(std::vector<int64_t>{2, 3}, {2}),
             [](const Tensor& x, const Tensor& m) { return ag::tile(x, m); });
  with_shape("fill_by_shape_tensor", {}, ag::constant({2, 3}),
             [](const Tensor& v, const Tensor& s) { return ag::fill(s, v); });
  layout("slice", {4, 5}, [](const Tensor& x) { return ag::slice(x, {1, 2}, {2, -1}); });
  layout("index_int", {4, 3}, [](const Tensor& x) { return x[2]; });
  layout("index_negative", {4, 3}, [](const Tensor& x) { return x[-1]; });
  layout("index_tensor", {4, 3}, [](const Tensor& x) { return x[ag::constant(1)]; });
  for (int64_t axis : {0, 1, -1}) {
    std::string suffix = axis < 0 ? "m1" : std::to_string(axis);
    c.push_back({"concat_" + suffix, kAllAndString,
                 [](DType d) {
                   return Tensors{sample(d, {2, 3}, 1), sample(d, {2, 3}, 2), sample(d, {2, 3}, 3)};
                 },
                 [axis](const Tensors& x) { return ag::concat(x, axis); }});
  }
  for (int64_t axis : {0, 1, 2}) {
    c.push_back({"stack_" + std::to_string(axis), kAllAndString, samples({{2, 3}, {2, 3}}, 1),
                 [axis](const Tensors& x) { return ag::stack(x, axis); }});
  }
  for (DType index_dtype : {ag::int32, ag::int64}) {
    for (int64_t axis : {0, 1}) {
      c.push_back(
          {"gather_" + std::string(ag::dtype_name(index_dtype)) + "_axis" + std::to_string(axis),
           kAllAndString,
           [index_dtype](DType d) {
             return Tensors{sample(d, {3, 4}), ag::cast(ag::constant({2, 0, 2, 1}), index_dtype)};
           },
           [axis](const Tensors& x) { return ag::gather(x[0], x[1], axis); }});
    }
  }

  // Rows summed into segments: the count a graph input (the output's first dim
  // known only when the graph runs) or a constant; repeated ids, empty segments.
  for (DType index_dtype : {ag::int32, ag::int64}) {
    c.push_back({"unsorted_segment_sum_" + std::string(ag::dtype_name(index_dtype)), kNumeric,
                 [index_dtype](DType d) {
                   return Tensors{sample(d, {4, 3}),
                                  ag::cast(ag::constant({2, 0, 2, 1}), index_dtype),
                                  ag::cast(Tensor(5), index_dtype)};
                 },
                 [](const Tensors& x) { return ag::unsorted_segment_sum(x[0], x[1], x[2]); }});
  }
  c.push_back({"unsorted_segment_sum_ids_of_rank_2", kNumeric,
               [](DType d) { return Tensors{sample(d, {2, 2, 3})}; },
               [](const Tensors& x) {
                 return ag::unsorted_segment_sum(x[0], ag::constant({{1, 1}, {0, 3}}), Tensor(4));
               }});

  // one_hot into the case's dtype (that of the second input); -1 and 3 are
  // out of range, which gives rows of off_value.
  for (DType index_dtype : {ag::int32, ag::int64}) {
    for (int64_t axis : {-1, 0, 1}) {
      c.push_back({"one_hot_" + std::string(ag::dtype_name(index_dtype)) + "_axis" +
                       std::string(axis < 0 ? "m1" : std::to_string(axis)),
                   kAll,
                   [index_dtype](DType d) {
                     return Tensors{ag::cast(ag::constant({{2, -1, 0}, {1, 3, 2}}), index_dtype),
                                    sample(d, {})};
                   },
                   [axis](const Tensors& x) {
                     DType d = x[1].dtype();
                     if (d == ag::bool_) return ag::one_hot(x[0], 3, false, true, axis);
                     return ag::one_hot(x[0], 3, 7, -2, axis, d);
                   }});
    }
  }

  // shape, size and rank of any dtype (folded to constants: the shapes are static here).
  layout("shape", {2, 3, 4}, [](const Tensor& x) { return ag::shape(x); });
  layout("shape_int64", {2, 3, 4}, [](const Tensor& x) { return ag::shape(x, ag::int64); });
  layout("shape_of_scalar", {}, [](const Tensor& x) { return ag::shape(x); });
  layout("size", {2, 3, 4}, [](const Tensor& x) { return ag::size(x); });
  layout("size_int64_empty", {2, 0}, [](const Tensor& x) { return ag::size(x, ag::int64); });
  layout("rank", {2, 3, 4}, [](const Tensor& x) { return ag::rank(x); });
  layout("shape_arithmetic", {2, 3},
         [](const Tensor& x) { return ag::shape(x) * ag::size(x) + ag::rank(x); });

  // Staged creation: the output shape depends on input values.
  c.push_back({"range", kNumeric,
               [](DType d) {
                 // uint64 -3 would be 2^64 - 3, which range refuses (ag/dtype.h).
                 const int start = d == ag::uint64 ? 3 : -3;
                 return Tensors{ag::cast(ag::constant(start), d), ag::cast(ag::constant(7), d),
                                ag::cast(ag::constant(2), d)};
               },
               [](const Tensors& x) { return ag::range(x[0], x[1], x[2]); }});
  // A bool limit promotes to int32 against the int32 delta.
  c.push_back({"range_limit", kCompute,
               [](DType d) { return Tensors{ag::cast(ag::constant(5), d)}; },
               [](const Tensors& x) { return ag::range(x[0]); }});

  // A TensorArray writes in place eagerly and with tensor_array_write nodes
  // in a graph.
  c.push_back({"tensor_array_write", kAll, samples({{3}, {3}}, 1), [](const Tensors& x) {
                 ag::TensorArray rows(x[0].dtype(), 3);
                 rows.write(ag::constant(2), x[0]);
                 rows.write(ag::constant(0), x[1]);
                 return rows.stack();
               }});
  // A for loop over a tensor whose length is unknown while tracing stages a
  // dim node for its trip count.
  c.push_back({"for_over_range", kCompute,
               [](DType d) { return Tensors{ag::cast(ag::constant(5), d)}; },
               [](const Tensors& x) {
                 Tensor total(int64_t{0});
                 ag::for_stmt(
                     ag::range(x[0]), ag::no_extra_test,
                     [&](Tensor i) { total = total + ag::cast(i, ag::int64); },
                     ag::state({"total"}, total));
                 return total;
               }});

  // Convolution: each layout, padding and rank; strides, dilations, groups
  // and a depthwise filter; the two gradient ops through their public forms.
  auto conv = [&](const std::string& name, Shape input, Shape filter,
                  std::function<Tensor(const Tensor&, const Tensor&)> f) {
    c.push_back({name, kFloating, samples({input, filter}, 1),
                 [f](const Tensors& x) { return f(x[0], x[1]); }});
  };
  conv("conv2d_same", {2, 5, 6, 3}, {3, 3, 3, 4},
       [](const Tensor& x, const Tensor& w) { return ag::conv2d(x, w, {1}, "SAME"); });
  conv("conv2d_valid_strided", {1, 7, 6, 2}, {3, 2, 2, 3},
       [](const Tensor& x, const Tensor& w) { return ag::conv2d(x, w, {2, 1}, "VALID"); });
  conv("conv2d_nchw_explicit_dilated", {1, 2, 6, 6}, {2, 2, 2, 3},
       [](const Tensor& x, const Tensor& w) {
         return ag::conv2d(x, w, {1}, {{{1, 0}, {2, 1}}}, "NCHW", {2});
       });
  conv("conv2d_groups", {1, 4, 4, 4}, {3, 3, 2, 6},
       [](const Tensor& x, const Tensor& w) { return ag::conv2d(x, w, {1}, "SAME"); });
  conv("depthwise_conv2d", {1, 5, 5, 3}, {3, 3, 3, 2},
       [](const Tensor& x, const Tensor& w) { return ag::depthwise_conv2d(x, w, {2}, "SAME"); });
  conv("conv1d", {2, 9, 3}, {4, 3, 2},
       [](const Tensor& x, const Tensor& w) { return ag::conv1d(x, w, {2}, "SAME"); });
  conv("conv3d_ncdhw", {1, 2, 4, 3, 4}, {2, 2, 2, 2, 3},
       [](const Tensor& x, const Tensor& w) { return ag::conv3d(x, w, {1}, "VALID", "NCDHW"); });
  conv("conv2d_transpose", {1, 3, 3, 4}, {3, 3, 2, 4}, [](const Tensor& x, const Tensor& w) {
    return ag::conv2d_transpose(x, w, {1, 6, 5, 2}, {2}, "SAME");
  });
  conv("conv_backprop_filter", {2, 5, 5, 3}, {2, 3, 3, 4}, [](const Tensor& x, const Tensor& dy) {
    return ag::conv_backprop_filter(x, {3, 3, 3, 4}, dy, {2}, "SAME");
  });
  // fused_conv: the optimiser fuses the bias, the residual and relu into the
  // traced call's convolution (passes/conv_epilogues.cpp).
  c.push_back({"fused_conv", kFloating, samples({{2, 5, 6, 3}, {3, 3, 3, 4}, {2, 5, 6, 4}}, 1),
               [](const Tensors& x) {
                 const Tensor bias =
                     ag::cast(ag::constant({0.5f, -1.0f, 0.25f, 2.0f}), x[0].dtype());
                 return ag::relu(ag::conv2d(x[0], x[1], {1}, "SAME") + bias + x[2]);
               }});

  // Pooling: each kind, layout, padding and rank, and the gradient ops.
  auto pool = [&](const std::string& name, Shape input, std::function<Tensor(const Tensor&)> f) {
    c.push_back({name, kFloating, samples({input}, 1), [f](const Tensors& x) { return f(x[0]); }});
  };
  pool("max_pool2d_same", {2, 5, 6, 3},
       [](const Tensor& x) { return ag::max_pool2d(x, {3}, {2}, "SAME"); });
  pool("max_pool1d_explicit", {1, 7, 2},
       [](const Tensor& x) { return ag::max_pool(x, {3}, {2}, ag::Padding({{1, 2}})); });
  pool("avg_pool2d_same_nchw", {1, 2, 5, 5},
       [](const Tensor& x) { return ag::avg_pool2d(x, {2, 3}, {2, 1}, "SAME", "NCHW"); });
  pool("pool_max_dilated", {1, 7, 6, 2},
       [](const Tensor& x) { return ag::pool(x, {2, 3}, "MAX", {1}, "SAME", "NHWC", {2, 1}); });
  pool("avg_pool3d_valid", {1, 4, 4, 3, 2},
       [](const Tensor& x) { return ag::avg_pool(x, {2}, {1, 2, 1}, "VALID"); });
  c.push_back({"max_pool_grad", kFloating, samples({{1, 5, 5, 2}, {1, 3, 3, 2}}, 1),
               [](const Tensors& x) { return ag::max_pool_grad(x[0], x[1], {3}, {2}, "SAME"); }});
  c.push_back(
      {"max_pool_grad_grad", kFloating, samples({{1, 5, 5, 2}, {1, 5, 5, 2}}, 1),
       [](const Tensors& x) { return ag::max_pool_grad_grad(x[0], x[1], {2}, {2}, "SAME"); }});
  pool("avg_pool_grad", {1, 3, 3, 2},
       [](const Tensor& dy) { return ag::avg_pool_grad({1, 5, 6, 2}, dy, {3}, {2}, "SAME"); });
  c.push_back({"leaky_relu", kFloating, samples({{3, 5}}),
               [](const Tensors& x) { return ag::leaky_relu(x[0]); }});
  c.push_back({"leaky_relu_alpha", kFloating, samples({{3, 5}}),
               [](const Tensors& x) { return ag::leaky_relu(x[0], 0.3); }});
  c.push_back({"hard_sigmoid", kFloating, samples({{3, 5}}),
               [](const Tensors& x) { return ag::hard_sigmoid(x[0]); }});
  c.push_back({"hard_sigmoid_alpha_beta", kFloating, samples({{3, 5}}),
               [](const Tensors& x) { return ag::hard_sigmoid(x[0], 0.25, 0.375); }});
  // Resizing and block rearrangements, composed of gathers, reshapes and transposes.
  c.push_back({"resize_bilinear", kFloating, samples({{2, 3, 4, 2}}),
               [](const Tensors& x) { return ag::image::resize(x[0], {5, 3}); }});
  c.push_back({"resize_nearest", kFloating, samples({{1, 3, 4, 2}}),
               [](const Tensors& x) { return ag::image::resize(x[0], {7, 2}, "nearest"); }});
  c.push_back({"resize_bicubic", kFloating, samples({{1, 4, 4, 1}}),
               [](const Tensors& x) { return ag::image::resize(x[0], {6, 3}, "bicubic"); }});
  c.push_back({"depth_to_space", kAll, samples({{2, 2, 3, 8}}),
               [](const Tensors& x) { return ag::depth_to_space(x[0], 2); }});
  c.push_back({"space_to_depth", kAll, samples({{1, 3, 4, 6}}),
               [](const Tensors& x) { return ag::space_to_depth(x[0], 2, "NCHW"); }});
  // Losses, composed of ops.
  c.push_back(
      {"sparse_categorical_crossentropy", kFloating, samples({{3, 4}}), [](const Tensors& x) {
         const Tensor labels = ag::constant(std::vector<int32_t>{3, 0, 1}, {3});
         return ag::losses::sparse_categorical_crossentropy(labels, x[0], true);
       }});
  c.push_back(
      {"categorical_crossentropy", kFloating, samples({{3, 4}, {3, 4}}), [](const Tensors& x) {
         return ag::losses::categorical_crossentropy(ag::softmax(x[0]), ag::softmax(x[1]), false,
                                                     0.2);
       }});
  c.push_back({"binary_crossentropy", kFloating, samples({{3, 4}, {3, 4}}), [](const Tensors& x) {
                 return ag::losses::binary_crossentropy(ag::sigmoid(x[0]), x[1], true);
               }});
  c.push_back({"mean_squared_error", kNumeric, samples({{3, 4}, {3, 4}}),
               [](const Tensors& x) { return ag::losses::mean_squared_error(x[0], x[1]); }});
  // Each mode, padding every dimension (a scalar: none), and pad_grad.
  for (const char* mode : {"CONSTANT", "REFLECT", "SYMMETRIC", "EDGE"}) {
    c.push_back({std::string("pad_") + mode, kAll, samples({{3, 4, 2}}), [mode](const Tensors& x) {
                   return ag::pad(x[0], {{1, 2}, {3, 0}, {1, 1}}, mode, 7);
                 }});
  }
  c.push_back({"pad_scalar", kAll, samples({{}}),
               [](const Tensors& x) { return as_intermediate(ag::pad(x[0], {})); }});
  // pad_grad: the gradient of sum(pad(x) * w) by x, w weighing each copy.
  c.push_back({"pad_grad", kDifferentiable, samples({{3, 4, 2}, {6, 7, 4}}), [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::pad(x[0], {{1, 2}, {3, 0}, {1, 1}}, "SYMMETRIC") * x[1];
                 return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
               }});
  // Normalisation: batch_norm by given statistics (channels last and first)
  // and by the batch's (fused_batch_norm's training), layer_norm, moments.
  auto norm_inputs = [](Shape x, int64_t channels) {
    return [x, channels](DType d) {
      return Tensors{sample(d, x, 1), sample(d, {channels}, 2), positive(d, {channels}, 3),
                     sample(d, {channels}, 4), sample(d, {channels}, 5)};
    };
  };
  c.push_back({"batch_normalization", kFloating, norm_inputs({2, 3, 4}, 4), [](const Tensors& x) {
                 return ag::batch_normalization(x[0], x[1], x[2], x[3], x[4], 0.001);
               }});
  c.push_back(
      {"fused_batch_norm_nchw", kFloating, norm_inputs({2, 3, 2, 2}, 3), [](const Tensors& x) {
         return ag::fused_batch_norm(x[0], x[4], x[3], x[1], x[2], 0.01, "NCHW", false).y;
       }});
  c.push_back(
      {"fused_batch_norm_training", kFloating, norm_inputs({3, 2, 2, 3}, 3), [](const Tensors& x) {
         const auto [y, mean, variance] = ag::fused_batch_norm(x[0], x[4], x[3]);
         return ag::concat({ag::reshape(y, {-1}), mean, variance}, 0);
       }});
  c.push_back({"fused_batch_norm_grad", kDifferentiable, samples({{4, 3, 2}, {2}, {4, 3, 2}}),
               [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::fused_batch_norm(x[0], x[1], x[1] * 0.5, {}, {}, 0.01).y;
                 return tape.gradient(ag::reduce_sum(y * x[2]), std::vector<Tensor>{x[0]})[0];
               }});
  c.push_back({"moments", kNumeric, samples({{3, 4, 2}}), [](const Tensors& x) {
                 const auto [mean, variance] = ag::moments(x[0], {0, 2}, true);
                 return ag::concat({mean, variance}, 0);
               }});
  c.push_back({"layer_normalization", kFloating, samples({{2, 3, 4}, {3, 4}, {3, 4}}),
               [](const Tensors& x) { return ag::layer_normalization(x[0], x[1], x[2], 1); }});
  c.push_back({"layer_normalization_last", kFloating, samples({{3, 5}, {5}}),
               [](const Tensors& x) { return ag::layer_normalization(x[0], x[1], {}, -1, 1e-5); }});
  c.push_back({"layer_norm_grad", kDifferentiable, samples({{2, 3, 4}, {4}, {2, 3, 4}}),
               [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::layer_normalization(x[0], x[1], {}, -1) * x[2];
                 return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
               }});
  // An LSTM over a sequence (ag::rnn::lstm's op), forwards and in reverse,
  // and its gradient op through a tape.
  auto lstm_inputs = [](DType d) {
    return Tensors{sample(d, {2, 3, 2}, 1), sample(d, {2, 12}, 2) * 0.25,
                   sample(d, {3, 12}, 3) * 0.25, sample(d, {12}, 4), sample(d, {2, 3}, 5)};
  };
  auto lstm_run = [](const Tensors& x, bool reverse) {
    ag::rnn::RNNOptions options;
    options.reverse = reverse;
    const ag::rnn::RNNOutput out =
        ag::rnn::lstm(x[0], {x[4], x[4] * 0.5}, {x[1], x[2], x[3], Tensor()}, {}, options);
    return ag::concat({out.outputs, ag::expand_dims(out.states[1], 1)}, 1);
  };
  c.push_back({"lstm", kFloating, lstm_inputs,
               [lstm_run](const Tensors& x) { return lstm_run(x, false); }});
  c.push_back({"lstm_reverse", kFloating, lstm_inputs,
               [lstm_run](const Tensors& x) { return lstm_run(x, true); }});
  c.push_back({"lstm_grad", kDifferentiable, lstm_inputs, [lstm_run](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[1]);
                 const Tensor y = lstm_run(x, false);
                 return tape.gradient(ag::reduce_sum(y * y), std::vector<Tensor>{x[1]})[0];
               }});
  // A GRU (both reset_after forms) and a simple RNN (tanh, relu) over a
  // sequence (ag::rnn::gru's and simple_rnn's ops), and their gradient ops.
  auto gru_inputs = [](DType d) {
    return Tensors{sample(d, {2, 3, 2}, 1), sample(d, {2, 9}, 2) * 0.25,
                   sample(d, {3, 9}, 3) * 0.25, sample(d, {2, 9}, 4), sample(d, {2, 3}, 5)};
  };
  auto gru_run = [](const Tensors& x, bool reset_after, bool reverse) {
    ag::rnn::RNNOptions options;
    options.reverse = reverse;
    ag::rnn::GRUOptions cell;
    cell.reset_after = reset_after;
    const ag::rnn::RNNOutput out = ag::rnn::gru(x[0], {x[4]}, {x[1], x[2], x[3]}, cell, options);
    return ag::concat({out.outputs, ag::expand_dims(out.states[0], 1)}, 1);
  };
  c.push_back({"gru", kFloating, gru_inputs,
               [gru_run](const Tensors& x) { return gru_run(x, true, false); }});
  c.push_back({"gru_reset_before_reverse", kFloating, gru_inputs,
               [gru_run](const Tensors& x) { return gru_run(x, false, true); }});
  c.push_back({"gru_grad", kDifferentiable, gru_inputs, [gru_run](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[1]);
                 const Tensor y = gru_run(x, true, false);
                 return tape.gradient(ag::reduce_sum(y * y), std::vector<Tensor>{x[1]})[0];
               }});
  auto simple_rnn_inputs = [](DType d) {
    return Tensors{sample(d, {2, 3, 2}, 1), sample(d, {2, 3}, 2) * 0.25,
                   sample(d, {3, 3}, 3) * 0.25, sample(d, {3}, 4), sample(d, {2, 3}, 5)};
  };
  auto simple_rnn_run = [](const Tensors& x, const char* activation, bool reverse) {
    ag::rnn::RNNOptions options;
    options.reverse = reverse;
    ag::rnn::SimpleRNNOptions cell;
    cell.activation = ag::rnn::activation(activation);
    const ag::rnn::RNNOutput out =
        ag::rnn::simple_rnn(x[0], {x[4]}, {x[1], x[2], x[3]}, cell, options);
    return ag::concat({out.outputs, ag::expand_dims(out.states[0], 1)}, 1);
  };
  c.push_back({"simple_rnn", kFloating, simple_rnn_inputs,
               [simple_rnn_run](const Tensors& x) { return simple_rnn_run(x, "tanh", false); }});
  c.push_back({"simple_rnn_relu_reverse", kFloating, simple_rnn_inputs,
               [simple_rnn_run](const Tensors& x) { return simple_rnn_run(x, "relu", true); }});
  c.push_back(
      {"simple_rnn_grad", kDifferentiable, simple_rnn_inputs, [simple_rnn_run](const Tensors& x) {
         ag::GradientTape tape;
         tape.watch(x[1]);
         const Tensor y = simple_rnn_run(x, "sigmoid", false);
         return tape.gradient(ag::reduce_sum(y * y), std::vector<Tensor>{x[1]})[0];
       }});
  // The ops of softmax's gradients, through a tape.
  c.push_back({"softmax_grad", kDifferentiable, samples({{3, 4}, {3, 4}}), [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::softmax(x[0], 0) * x[1];
                 return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
               }});
  c.push_back(
      {"log_softmax_grad", kDifferentiable, samples({{2, 3, 4}, {2, 3, 4}}), [](const Tensors& x) {
         ag::GradientTape tape;
         tape.watch(x[0]);
         const Tensor y = ag::log_softmax(x[0], 1) * x[1];
         return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
       }});
  add_layout_selection_cases(c);
  add_sorting_cases(c);
  add_collective_cases(c);
  // Overlapping boxes, corners in either order, with repeated scores.
  c.push_back({"non_max_suppression", kFloating, samples({{8, 4}, {8}}),
               [](const Tensors& x) { return ag::non_max_suppression(x[0], x[1], 8, 0.3); }});
  c.push_back({"non_max_suppression_thresholds", kFloating, samples({{8, 4}, {8}}),
               [](const Tensors& x) { return ag::non_max_suppression(x[0], x[1], 2, 0.5, 0.0); }});
  // float64 scores apart by less than float32 tells (0.1 + k 1e-12), of
  // boxes 0 to 2 that overlap, and a score threshold between box 3's score
  // and the others': the highest, box 2, is picked (rounded to float32, they
  // would tie at the threshold and none be picked). In float32 and bfloat16
  // all four tie above the threshold (boxes 0 and 3 are picked); in float16
  // they are below it.
  c.push_back(
      {"non_max_suppression_close_scores", kFloating,
       [](DType d) {
         return Tensors{
             ag::cast(ag::constant({{0.0, 0.0, 1.0, 1.0},
                                    {0.0, 0.01, 1.0, 1.01},
                                    {0.01, 0.0, 1.01, 1.0},
                                    {5.0, 5.0, 6.0, 6.0}}),
                      d),
             ag::cast(ag::constant({0.1, 0.1 + 1e-12, 0.1 + 2e-12, 0.1 - 1e-12}, ag::float64), d)};
       },
       [](const Tensors& x) { return ag::non_max_suppression(x[0], x[1], 4, 0.5, 0.1 - 5e-13); }});
  // Samples repeat values (and rows, along axis 0 of a [6, 2]).
  c.push_back({"unique_first_indices", kAll, samples({{4, 6}}),
               [](const Tensors& x) { return ag::unique_first_indices(x[0]); }});
  c.push_back({"unique_first_indices_sorted_axis", kAll,
               [](DType d) { return Tensors{ag::tile(sample(d, {3, 2}), {2, 1})}; },
               [](const Tensors& x) { return ag::unique_first_indices(x[0], 0, true); }});
  c.push_back({"unique", kAll, samples({{12}}), [](const Tensors& x) {
                 const ag::UniqueResult u = ag::unique(x[0]);
                 return ag::concat({ag::cast(u.y, ag::float64), ag::cast(u.idx, ag::float64)}, 0);
               }});
  add_quantize_cases(c);
  add_string_cases(c);
  return c;
}

}  // namespace

void use_single_process_collectives() {
  if (!ag::distribute::current_backend())
    ag::distribute::set_backend(std::make_shared<SingleProcessCollectives>());
}

const std::vector<OpCase>& all_op_cases() {
  static const std::vector<OpCase> cases = make_cases();
  return cases;
}

}  // namespace ag_test
