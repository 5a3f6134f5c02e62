// The storage dtypes (ag/dtype.h): float16 and bfloat16 rounding, casts,
// integer wrap-around, promotion errors, printing, and the same results and
// errors eagerly and in a graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag::DType;
using ag::Tensor;
using ag_test::expect_error;

// A tensor of the given bit patterns as float16 or bfloat16.
Tensor from_bits(const std::vector<uint16_t>& bits, DType dtype) {
  Tensor t = ag::empty({int64_t(bits.size())}, dtype);
  std::memcpy(t.raw_mutable_data(), bits.data(), bits.size() * 2);
  return t;
}

std::vector<uint16_t> bits_of(const Tensor& t) {
  std::vector<uint16_t> bits(size_t(t.num_elements()));
  std::memcpy(bits.data(), t.raw_data(), bits.size() * 2);
  return bits;
}

TEST(DTypes, NamesAndSizesMatchTheirCppTypes) {
  auto check = [](auto v, const char* name) {
    const DType d = ag::dtype_v<decltype(v)>;
    EXPECT_EQ(ag::dtype_name(d), name);
    EXPECT_EQ(ag::dtype_size(d), sizeof(v));
  };
  check(uint8_t{}, "uint8");
  check(int8_t{}, "int8");
  check(int16_t{}, "int16");
  check(uint16_t{}, "uint16");
  check(uint32_t{}, "uint32");
  check(uint64_t{}, "uint64");
  check(ag::float16_t{}, "float16");
  check(ag::bfloat16_t{}, "bfloat16");
  // Every dtype but string, whose elements are not numbers (ag/dtype.h).
  EXPECT_EQ(std::size(ag::kAllDTypes) + 1, size_t(ag::kNumDTypes));
  EXPECT_EQ(ag::dtype_name(ag::string), "string");
  EXPECT_EQ(int(ag::string), ag::kNumDTypes - 1);
}

// Every finite value of a 16-bit float reads back to its bits; every midpoint
// between neighbours rounds to the one with an even mantissa, and a value
// just off a midpoint to the nearer one. `H` is float16_t or bfloat16_t.
template <class H>
void check_round_to_nearest_even() {
  for (uint32_t b = 0; b < 0x7fff; ++b) {
    const H lo = H::from_bits(uint16_t(b)), hi = H::from_bits(uint16_t(b + 1));
    const double a = float(lo), c = float(hi);
    if (std::isinf(c) || std::isnan(c)) break;
    ASSERT_EQ(H(a).bits, b);
    ASSERT_EQ(H(-a).bits, b | 0x8000);
    const double mid = (a + c) / 2;  // exact in double
    ASSERT_EQ(H(mid).bits, (b % 2 == 0) ? b : b + 1) << "midpoint above bits " << b;
    ASSERT_EQ(H(std::nextafter(mid, a)).bits, b);
    ASSERT_EQ(H(std::nextafter(mid, c)).bits, b + 1);
  }
}

TEST(DTypes, Float16RoundsToNearestEvenIncludingSubnormals) {
  check_round_to_nearest_even<ag::float16_t>();
  // The largest finite float16 is 65504; from halfway to the next power of
  // two (65520) on, a value overflows to infinity.
  EXPECT_EQ(float(ag::float16_t(65519.0)), 65504.0f);
  EXPECT_TRUE(std::isinf(float(ag::float16_t(65520.0))));
  EXPECT_EQ(float(ag::float16_t::from_bits(1)), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(ag::float16_t(std::ldexp(1.0, -26)).bits, 0);                // below half of it
}

TEST(DTypes, BFloat16RoundsToNearestEvenIncludingSubnormals) {
  check_round_to_nearest_even<ag::bfloat16_t>();
  // bfloat16 is float32's top half: rounding it agrees with float32's bits.
  for (float f : {1.00390625f, 3.14159265f, -1e-40f, 3e38f}) {
    uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    const uint32_t rounded = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
    EXPECT_EQ(ag::bfloat16_t(f).bits, rounded) << f;
  }
}

TEST(DTypes, CastsKeepNaNInfinitySignedZeroAndSubnormals) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {std::nan(""), inf, -inf, -0.0, 1e-7, -3e-8, 65504, 1e6};
  for (DType d : {ag::float16, ag::bfloat16}) {
    SCOPED_TRACE(std::string(ag::dtype_name(d)));
    const std::vector<double> back =
        ag::cast(ag::cast(ag::constant(v, {int64_t(v.size())}), d), ag::float64)
            .to_vector<double>();
    EXPECT_TRUE(std::isnan(back[0]));
    EXPECT_EQ(back[1], inf);
    EXPECT_EQ(back[2], -inf);
    EXPECT_TRUE(back[3] == 0 && std::signbit(back[3]));
    for (size_t i = 4; i < v.size(); ++i) {
      const double want = d == ag::float16 ? double(float(ag::float16_t(v[i])))
                                           : double(float(ag::bfloat16_t(v[i])));
      EXPECT_EQ(back[i], want) << v[i];
    }
  }
  // 1e-7 is a float16 subnormal (below 2^-14): kept, not flushed to zero.
  EXPECT_GT(ag::cast(ag::constant(1e-7), ag::float16).item<double>(), 0);
}

// float64 to float16 rounds once: through float32 first, 1 + 2^-11 + 2^-40
// would become the midpoint 1 + 2^-11 and round down to 1.
TEST(DTypes, Float64ToFloat16RoundsOnce) {
  const double x = 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const Tensor h = ag::cast(ag::constant(x, ag::float64), ag::float16);
  EXPECT_EQ(h.item<double>(), 1 + std::ldexp(1.0, -10));
  auto traced = ag::function([](const Tensor& t) { return ag::cast(t, ag::float16); });
  EXPECT_EQ(traced(ag::constant(x, ag::float64)).item<double>(), 1 + std::ldexp(1.0, -10));
}

TEST(DTypes, EveryFloat16PatternSurvivesFloat32AndBack) {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = uint16_t(i);
  for (DType d : {ag::float16, ag::bfloat16}) {
    const std::vector<uint16_t> back =
        bits_of(ag::cast(ag::cast(from_bits(bits, d), ag::float32), d));
    for (size_t i = 0; i < bits.size(); ++i) {
      const float f = d == ag::float16 ? float(ag::float16_t::from_bits(bits[i]))
                                       : float(ag::bfloat16_t::from_bits(bits[i]));
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(d == ag::float16 ? float(ag::float16_t::from_bits(back[i]))
                                                : float(ag::bfloat16_t::from_bits(back[i]))));
      } else {
        ASSERT_EQ(back[i], bits[i]) << ag::dtype_name(d) << " bits " << i;
      }
    }
  }
}

// Integer arithmetic wraps at the dtype's width, as in TensorFlow and ONNX;
// the reference is the same sum in uint64 reduced to the width.
TEST(DTypes, IntegerArithmeticWrapsEagerlyAndInAGraph) {
  struct Case {
    DType dtype;
    int64_t a, b;
    int bits;
    bool is_signed;
  };
  const Case cases[] = {{ag::uint8, 255, 1, 8, false},          {ag::int8, 127, 1, 8, true},
                        {ag::int16, -32768, -1, 16, true},      {ag::uint16, 65535, 3, 16, false},
                        {ag::uint32, 4294967295, 2, 32, false}, {ag::uint64, -1, 5, 64, false}};
  auto traced = ag::function(
      [](const Tensor& x, const Tensor& y) { return ag::concat({x + y, x * y, x - y}, 0); });
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(ag::dtype_name(c.dtype)));
    auto wrap = [&](uint64_t v) {
      const uint64_t mask = c.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << c.bits) - 1;
      v &= mask;
      if (c.is_signed && (v >> (c.bits - 1)) & 1) return double(int64_t(v | ~mask));
      return double(v);
    };
    const uint64_t a = uint64_t(c.a), b = uint64_t(c.b);
    const std::vector<double> want = {wrap(a + b), wrap(a * b), wrap(a - b)};
    const Tensor x = ag::cast(ag::constant({c.a}), c.dtype);
    const Tensor y = ag::cast(ag::constant({c.b}), c.dtype);
    const Tensor eager = ag::concat({x + y, x * y, x - y}, 0);
    EXPECT_EQ(eager.dtype(), c.dtype);
    EXPECT_EQ(eager.to_vector<double>(), want);
    EXPECT_EQ(traced(x, y).to_vector<double>(), want);
  }
  // A weak C++ scalar takes the tensor's dtype.
  const Tensor u = ag::cast(ag::constant({250, 3}), ag::uint8) + 10;
  EXPECT_EQ(u.dtype(), ag::uint8);
  EXPECT_EQ(u.to_vector<int>(), (std::vector<int>{4, 13}));
}

// uint64 values as a uint64 tensor (a C++ vector's constant is int64, as a
// Python int's is; the cast keeps the bits).
Tensor u64(const std::vector<uint64_t>& values, ag::Shape shape) {
  return ag::cast(ag::constant(values, std::move(shape)), ag::uint64);
}

// uint64 is computed on int64's bits (ag/dtype.h). Ops that only order
// values are exact on all of uint64, 2^63 and above included; the reference
// is std's uint64 order.
TEST(DTypes, Uint64OrderingIsExactOnEveryValueEagerlyAndInAGraph) {
  const std::vector<uint64_t> v = {12345,        0, (uint64_t{1} << 63) - 1, uint64_t{1} << 63,
                                   ~uint64_t{0}, 7, (uint64_t{1} << 63) + 9};
  const uint64_t pivot = uint64_t{1} << 63;
  std::vector<uint64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  std::vector<bool> less;
  std::vector<uint64_t> clipped, max_with_pivot;
  for (uint64_t x : v) {
    less.push_back(x < pivot);
    clipped.push_back(std::clamp(x, uint64_t{7}, pivot));
    max_with_pivot.push_back(std::max(x, pivot));
  }
  const int64_t argmax = std::max_element(v.begin(), v.end()) - v.begin();
  const int64_t argmin = std::min_element(v.begin(), v.end()) - v.begin();
  const Tensor x = u64(v, ag::Shape{int64_t(v.size())});
  auto ordered = [](const Tensor& t) {
    const Tensor p = u64({uint64_t{1} << 63}, ag::Shape{});
    const Tensor seven = u64({7}, ag::Shape{});
    return std::vector<Tensor>{ag::less(t, p),        ag::clip_by_value(t, seven, p),
                               ag::maximum(t, p),     ag::reduce_max(t),
                               ag::reduce_min(t),     ag::argmax(t),
                               ag::argmin(t),         ag::sort(t),
                               ag::top_k(t, 2).values};
  };
  auto traced = ag::function([&](const Tensor& t) { return ordered(t); });
  for (const std::vector<Tensor>& got : {ordered(x), traced(x)}) {
    EXPECT_EQ(got[0].to_vector<bool>(), less);
    EXPECT_EQ(got[1].to_vector<uint64_t>(), clipped);
    EXPECT_EQ(got[2].to_vector<uint64_t>(), max_with_pivot);
    EXPECT_EQ(got[3].item<uint64_t>(), sorted.back());
    EXPECT_EQ(got[4].item<uint64_t>(), sorted.front());
    EXPECT_EQ(got[5].item<int64_t>(), argmax);
    EXPECT_EQ(got[6].item<int64_t>(), argmin);
    EXPECT_EQ(got[7].to_vector<uint64_t>(), sorted);
    EXPECT_EQ(got[8].to_vector<uint64_t>(),
              (std::vector<uint64_t>{sorted.back(), sorted[sorted.size() - 2]}));
    for (const Tensor& t : {got[1], got[2], got[3], got[7], got[8]})
      EXPECT_EQ(t.dtype(), ag::uint64);
  }
}

// Ops that read a uint64's magnitude compute it as int64: exact below 2^63,
// and above it an error naming the op and the value, the same text in a
// graph, rather than a negative int64's answer.
TEST(DTypes, Uint64DivisionIsExactBelow2To63AndAnErrorAbove) {
  const Tensor small = u64({(uint64_t{1} << 63) - 1, 10}, {2});
  const Tensor d = u64({3, 3}, {2});
  auto divide = ag::function([](const Tensor& a, const Tensor& b) { return ag::floordiv(a, b); });
  const std::vector<uint64_t> want = {((uint64_t{1} << 63) - 1) / 3, 3};
  EXPECT_EQ(ag::floordiv(small, d).to_vector<uint64_t>(), want);
  EXPECT_EQ(divide(small, d).to_vector<uint64_t>(), want);
  EXPECT_EQ(ag::mod(small, d).to_vector<uint64_t>(), (std::vector<uint64_t>{1, 1}));

  const Tensor big = u64({10, ~uint64_t{0}}, {2});
  const std::string text =
      "uint64 value 18446744073709551615 (element 1) is 2^63 or more, which floordiv cannot "
      "take: it computes uint64 on int64, exactly below 2^63 only";
  expect_error<ag::InvalidArgumentError>([&] { (void)ag::floordiv(big, d); }, text);
  expect_error<ag::InvalidArgumentError>([&] { (void)divide(big, d); }, text);
  expect_error<ag::InvalidArgumentError>([&] { (void)ag::mod(big, d); }, "which mod cannot take");
}

TEST(DTypes, Float16ArithmeticRoundsEachResultToFloat16) {
  const Tensor a = ag::cast(ag::constant({1.0, 2049.0, 0.1}), ag::float16);
  const Tensor sum = a + 1;
  EXPECT_EQ(sum.dtype(), ag::float16);
  const std::vector<float> in = a.to_vector<float>();
  std::vector<double> want;
  for (float f : in) want.push_back(float(ag::float16_t(double(f + 1.0f))));
  EXPECT_EQ(sum.to_vector<double>(), want);
  EXPECT_EQ(ag::sqrt(a).dtype(), ag::float16);
  EXPECT_EQ(ag::reduce_mean(a).dtype(), ag::float16);
  EXPECT_EQ(ag::less(a, a).dtype(), ag::bool_);
}

TEST(DTypes, MixingAStorageDtypeWithAnotherIsAnErrorInBothModes) {
  const Tensor u = ag::cast(ag::constant({1, 2}), ag::uint8);
  const Tensor i = ag::constant({1, 2});
  const std::string text =
      "cannot combine uint8 and int32 tensors: uint8 is promoted to no other dtype; cast one "
      "operand first, e.g. ag::cast(x, ag::uint8)";
  expect_error<ag::InvalidArgumentError>([&] { (void)(u + i); }, text);
  auto traced = ag::function([](const Tensor& a, const Tensor& b) { return a + b; });
  expect_error<ag::InvalidArgumentError>([&] { (void)traced(u, i); }, text);
  // The explicit cast works.
  EXPECT_EQ((ag::cast(u, ag::int32) + i).to_vector<int>(), (std::vector<int>{2, 4}));
}

TEST(DTypes, AnOpThatRejectsTheComputeDtypeNamesTheStorageDtype) {
  const Tensor u = ag::cast(ag::constant({1, 2}), ag::uint8);
  std::string eager_message, graph_message;
  try {
    (void)ag::sqrt(u);
  } catch (const ag::Error& e) {
    eager_message = e.message();
  }
  auto traced = ag::function([](const Tensor& x) { return ag::sqrt(x); });
  try {
    (void)traced(u);
  } catch (const ag::Error& e) {
    graph_message = e.message();
  }
  EXPECT_NE(eager_message.find("unsupported dtype uint8 (computed as int32, which sqrt does not "
                               "take either); cast it to a dtype sqrt takes"),
            std::string::npos)
      << eager_message;
  EXPECT_NE(graph_message.find("unsupported dtype uint8 (computed as int32"), std::string::npos)
      << graph_message;
}

TEST(DTypes, PrintAsTensorFlowDoes) {
  EXPECT_EQ(ag::cast(ag::constant({0, 255, 7}), ag::uint8).to_string(),
            "ag::Tensor([  0 255   7], shape=(3,), dtype=uint8)");
  EXPECT_EQ(ag::cast(ag::constant({-128, 5}), ag::int8).to_string(),
            "ag::Tensor([-128    5], shape=(2,), dtype=int8)");
  // The fewest digits that read back to the same float16 (NumPy's repr).
  EXPECT_EQ(ag::cast(ag::constant({0.1, 1.5, -2.0}), ag::float16).to_string(),
            "ag::Tensor([ 0.1  1.5 -2. ], shape=(3,), dtype=float16)");
  EXPECT_EQ(ag::cast(ag::constant({0.1, 3.0}), ag::bfloat16).to_string(),
            "ag::Tensor([0.1 3. ], shape=(2,), dtype=bfloat16)");
}

TEST(DTypes, ConstantsFromCppValues) {
  const Tensor u = ag::constant({1, 200, 255}, ag::uint8);
  EXPECT_EQ(u.dtype(), ag::uint8);
  EXPECT_EQ(u.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 200, 255}));
  const Tensor h = ag::constant({0.5, 1.25}, ag::float16);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{0.5f, 1.25f}));
  EXPECT_EQ(ag::fill({2}, 3.0, ag::bfloat16).to_vector<float>(), (std::vector<float>{3, 3}));
}

TEST(DTypes, ATapeRefusesFloat16SourcesWithAReason) {
  const Tensor x = ag::cast(ag::constant({1.0, 2.0}), ag::float16);
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::reduce_sum(ag::cast(x * x, ag::float32));
  expect_error<ag::UnimplementedError>(
      [&] { (void)tape.gradient(y, x); },
      "GradientTape.gradient: source 0 is float16; gradients of float16 and bfloat16 tensors "
      "are not computed");
}

// ONNX's rules: round half to even, then saturate to the zero point's dtype.
TEST(DTypes, QuantizeLinearRoundsHalfToEvenAndSaturates) {
  const Tensor x = ag::constant({-300.0f, 0.5f, 1.5f, 2.5f, 300.0f});
  const Tensor one = ag::constant(1.0f);
  const Tensor u = ag::quantize_linear(x, one);
  EXPECT_EQ(u.dtype(), ag::uint8);
  EXPECT_EQ(u.to_vector<int>(), (std::vector<int>{0, 0, 2, 2, 255}));
  const Tensor s = ag::quantize_linear(x, one, ag::constant(1, ag::int8));
  EXPECT_EQ(s.to_vector<int>(), (std::vector<int>{-128, 1, 3, 3, 127}));
  const Tensor back = ag::dequantize_linear(s, ag::constant(0.5f), ag::constant(1, ag::int8));
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{-64.5f, 0, 1, 1, 63}));
  expect_error<ag::InvalidArgumentError>(
      [&] { (void)ag::quantize_linear(x, one, ag::constant(0)); },
      "quantize_linear: zero_point gives the output's dtype, uint8 or int8; got int32");
  expect_error<ag::InvalidArgumentError>(
      [&] { (void)ag::quantize_linear(x, ag::constant({1.0f, 2.0f}), {}, 0); },
      "a per-axis scale has one entry per slice along axis 0 (5); got 2");
}

}  // namespace
