#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag_test::expect_error;
using ag_test::values;

template <class T>
ag::Tensor vec(std::initializer_list<ag::NestedValues> v) {
  return ag::constant(ag::NestedValues(v), ag::dtype_v<T>);
}

// ---- Every numeric dtype -----------------------------------------------------

template <class T>
class NumericOps : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(NumericOps, NumericTypes);

TYPED_TEST(NumericOps, AddSubMul) {
  using T = TypeParam;
  ag::Tensor a = vec<T>({1, -2, 30}), b = vec<T>({4, 5, -6});
  EXPECT_EQ(values<T>(a + b), (std::vector<T>{5, 3, 24}));
  EXPECT_EQ(values<T>(a - b), (std::vector<T>{-3, -7, 36}));
  EXPECT_EQ(values<T>(a * b), (std::vector<T>{4, -10, -180}));
  EXPECT_EQ(values<T>(ag::subtract(a, b)), (std::vector<T>{-3, -7, 36}));
  EXPECT_EQ(values<T>(ag::multiply(a, b)), (std::vector<T>{4, -10, -180}));
}

TYPED_TEST(NumericOps, MaximumMinimum) {
  using T = TypeParam;
  ag::Tensor a = vec<T>({1, -2, 30}), b = vec<T>({4, -5, 30});
  EXPECT_EQ(values<T>(ag::maximum(a, b)), (std::vector<T>{4, -2, 30}));
  EXPECT_EQ(values<T>(ag::minimum(a, b)), (std::vector<T>{1, -5, 30}));
}

TYPED_TEST(NumericOps, NegAbsRelu) {
  using T = TypeParam;
  ag::Tensor x = vec<T>({-3, 0, 7});
  EXPECT_EQ(values<T>(-x), (std::vector<T>{3, 0, -7}));
  EXPECT_EQ(values<T>(ag::negative(x)), (std::vector<T>{3, 0, -7}));
  EXPECT_EQ(values<T>(ag::abs(x)), (std::vector<T>{3, 0, 7}));
  EXPECT_EQ(values<T>(ag::relu(x)), (std::vector<T>{0, 0, 7}));
  EXPECT_EQ(values<T>(ag::square(x)), (std::vector<T>{9, 0, 49}));
}

TYPED_TEST(NumericOps, FloorDivAndModFollowTheDivisorsSign) {
  using T = TypeParam;
  ag::Tensor a = vec<T>({-7, 7, -7, 7, 6, 0});
  ag::Tensor b = vec<T>({2, 2, -2, -2, 3, 5});
  EXPECT_EQ(values<T>(ag::floordiv(a, b)), (std::vector<T>{-4, 3, 3, -4, 2, 0}));
  EXPECT_EQ(values<T>(ag::mod(a, b)), (std::vector<T>{1, 1, -1, -1, 0, 0}));
  EXPECT_EQ(values<T>(a % b), (std::vector<T>{1, 1, -1, -1, 0, 0}));
}

TYPED_TEST(NumericOps, Pow) {
  using T = TypeParam;
  EXPECT_EQ(values<T>(ag::pow(vec<T>({2, 3, -2, 5}), vec<T>({3, 2, 3, 0}))),
            (std::vector<T>{8, 9, -8, 1}));
}

TYPED_TEST(NumericOps, Comparisons) {
  using T = TypeParam;
  ag::Tensor a = vec<T>({1, 2, 3}), b = vec<T>({2, 2, 2});
  EXPECT_EQ(values<bool>(a == b), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(values<bool>(a != b), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(values<bool>(a < b), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(values<bool>(a <= b), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(values<bool>(a > b), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(values<bool>(a >= b), (std::vector<bool>{false, true, true}));
}

TYPED_TEST(NumericOps, Where) {
  using T = TypeParam;
  ag::Tensor c = ag::constant({true, false, true});
  EXPECT_EQ(values<T>(ag::where(c, vec<T>({1, 2, 3}), vec<T>({-1, -2, -3}))),
            (std::vector<T>{1, -2, 3}));
}

TYPED_TEST(NumericOps, CastToEveryDtype) {
  using T = TypeParam;
  ag::Tensor x = vec<T>({0, 3, -2});
  EXPECT_EQ(values<float>(ag::cast(x, ag::float32)), (std::vector<float>{0, 3, -2}));
  EXPECT_EQ(values<double>(ag::cast(x, ag::float64)), (std::vector<double>{0, 3, -2}));
  EXPECT_EQ(values<int32_t>(ag::cast(x, ag::int32)), (std::vector<int32_t>{0, 3, -2}));
  EXPECT_EQ(values<int64_t>(ag::cast(x, ag::int64)), (std::vector<int64_t>{0, 3, -2}));
  EXPECT_EQ(values<bool>(ag::cast(x, ag::bool_)), (std::vector<bool>{false, true, true}));
}

TYPED_TEST(NumericOps, IdentityCopiesValues) {
  using T = TypeParam;
  EXPECT_EQ(values<T>(ag::identity(vec<T>({4, 5}))), (std::vector<T>{4, 5}));
}

TYPED_TEST(NumericOps, LogicalOpsRejectNumbers) {
  using T = TypeParam;
  std::string name(ag::dtype_name(ag::dtype_v<T>));
  expect_error<ag::InvalidArgumentError>([] { ag::logical_and(vec<T>({1}), vec<T>({1})); },
                                         "logical_and: expected a bool tensor, got " + name);
  expect_error<ag::InvalidArgumentError>([] { ag::logical_not(vec<T>({1})); },
                                         "logical_not: expected a bool tensor, got " + name);
}

// ---- Floating point ---------------------------------------------------------

template <class T>
class FloatingOps : public ::testing::Test {};
using FloatingTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FloatingOps, FloatingTypes);

TYPED_TEST(FloatingOps, TranscendentalFunctions) {
  using T = TypeParam;
  ag::Tensor x = vec<T>({0.0, 1.0, 4.0});
  std::vector<T> e = values<T>(ag::exp(x)), l = values<T>(ag::log(vec<T>({1.0, 2.0})));
  std::vector<T> s = values<T>(ag::sqrt(x)), t = values<T>(ag::tanh(x));
  std::vector<T> g = values<T>(ag::sigmoid(x));
  EXPECT_EQ(e[0], T(1));
  EXPECT_NEAR(e[1], 2.718281828, 1e-6);
  EXPECT_EQ(l[0], T(0));
  EXPECT_NEAR(l[1], 0.693147181, 1e-6);
  EXPECT_EQ(s, (std::vector<T>{0, 1, 2}));
  EXPECT_EQ(t[0], T(0));
  EXPECT_NEAR(t[1], 0.761594156, 1e-6);
  EXPECT_EQ(g[0], T(0.5));
  EXPECT_NEAR(g[1], 0.731058579, 1e-6);
  EXPECT_NEAR(g[2], 0.982013790, 1e-6);
}

TYPED_TEST(FloatingOps, TrueDivisionAndDivisionByZero) {
  using T = TypeParam;
  std::vector<T> q = values<T>(vec<T>({7.0, 1.0, -1.0}) / vec<T>({2.0, 0.0, 0.0}));
  EXPECT_EQ(q[0], T(3.5));
  EXPECT_EQ(q[1], std::numeric_limits<T>::infinity());
  EXPECT_EQ(q[2], -std::numeric_limits<T>::infinity());
}

TYPED_TEST(FloatingOps, FractionalFloorDivAndMod) {
  using T = TypeParam;
  ag::Tensor a = vec<T>({-7.5, 7.5}), b = vec<T>({2.0, -2.0});
  EXPECT_EQ(values<T>(ag::floordiv(a, b)), (std::vector<T>{-4, -4}));
  EXPECT_EQ(values<T>(ag::mod(a, b)), (std::vector<T>{0.5, -0.5}));
}

TYPED_TEST(FloatingOps, SignedZeros) {
  using T = TypeParam;
  EXPECT_TRUE(std::signbit(values<T>(-vec<T>({0.0}))[0]));
  EXPECT_FALSE(std::signbit(values<T>(ag::abs(vec<T>({-0.0})))[0]));
}

TYPED_TEST(FloatingOps, FractionalPow) {
  using T = TypeParam;
  EXPECT_EQ(values<T>(ag::pow(vec<T>({4.0, 2.0}), vec<T>({0.5, -1.0}))), (std::vector<T>{2, 0.5}));
}

// ---- Integers ---------------------------------------------------------------

template <class T>
class IntegerOps : public ::testing::Test {};
using IntegerTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(IntegerOps, IntegerTypes);

TYPED_TEST(IntegerOps, DivisionByZeroIsAnError) {
  using T = TypeParam;
  expect_error<ag::InvalidArgumentError>([] { ag::floordiv(vec<T>({1, 2}), vec<T>({1, 0})); },
                                         "floordiv: integer division by zero");
  expect_error<ag::InvalidArgumentError>([] { ag::mod(vec<T>({1}), vec<T>({0})); },
                                         "mod: integer division by zero");
}

TYPED_TEST(IntegerOps, OverflowWraps) {
  using T = TypeParam;
  constexpr T kMax = std::numeric_limits<T>::max(), kMin = std::numeric_limits<T>::min();
  ag::Tensor big = ag::constant(std::vector<T>{kMax}, ag::Shape{1});
  ag::Tensor small = ag::constant(std::vector<T>{kMin}, ag::Shape{1});
  EXPECT_EQ(values<T>(big + 1), (std::vector<T>{kMin}));
  EXPECT_EQ(values<T>(small - 1), (std::vector<T>{kMax}));
  EXPECT_EQ(values<T>(big * 2), (std::vector<T>{T(-2)}));
  EXPECT_EQ(values<T>(-small), (std::vector<T>{kMin}));
  EXPECT_EQ(values<T>(ag::abs(small)), (std::vector<T>{kMin}));
  EXPECT_EQ(values<T>(ag::floordiv(small, -1)), (std::vector<T>{kMin}));
  EXPECT_EQ(values<T>(ag::mod(small, -1)), (std::vector<T>{0}));
  EXPECT_EQ(values<T>(ag::pow(ag::constant(std::vector<T>{2}, ag::Shape{1}), T(sizeof(T) * 8))),
            (std::vector<T>{0}));
}

TYPED_TEST(IntegerOps, NegativePowerIsAnError) {
  using T = TypeParam;
  expect_error<ag::InvalidArgumentError>(
      [] { ag::pow(vec<T>({2}), vec<T>({-1})); },
      "pow: integers to negative integer powers are not allowed");
}

TYPED_TEST(IntegerOps, FloatingOnlyOpsRejectIntegers) {
  using T = TypeParam;
  std::string name(ag::dtype_name(ag::dtype_v<T>));
  expect_error<ag::InvalidArgumentError>([] { ag::exp(vec<T>({1})); },
                                         "exp: unsupported dtype " + name);
  expect_error<ag::InvalidArgumentError>([] { ag::sqrt(vec<T>({1})); },
                                         "sqrt: unsupported dtype " + name);
}

// ---- Scalar spot checks --------------------------------------------------------

TEST(Elementwise, FloorDivAndModOfScalars) {
  EXPECT_EQ(ag::floordiv(ag::constant(-7), 2).item<int>(), -4);
  EXPECT_EQ(ag::mod(ag::constant(-7), 2).item<int>(), 1);
  EXPECT_EQ(ag::mod(ag::constant(7), -2).item<int>(), -1);
  EXPECT_EQ(ag::floordiv(-7, ag::constant(2)).item<int>(), -4);
}

// ---- Bool ---------------------------------------------------------------------

TEST(Elementwise, LogicalOps) {
  ag::Tensor a = ag::constant({true, true, false, false});
  ag::Tensor b = ag::constant({true, false, true, false});
  EXPECT_EQ(values<bool>(ag::logical_and(a, b)), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(values<bool>(ag::logical_or(a, b)), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(values<bool>(!a), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(values<bool>(ag::logical_and(a, true)), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(values<bool>(ag::logical_or(false, b)), (std::vector<bool>{true, false, true, false}));
}

TEST(Elementwise, BoolComparisonsAndWhere) {
  ag::Tensor a = ag::constant({true, false}), b = ag::constant({false, false});
  EXPECT_EQ(values<bool>(a == b), (std::vector<bool>{false, true}));
  EXPECT_EQ(values<bool>(a > b), (std::vector<bool>{true, false}));
  EXPECT_EQ(values<bool>(ag::where(a, b, a)), (std::vector<bool>{false, false}));
}

TEST(Elementwise, ArithmeticRejectsBool) {
  ag::Tensor t = ag::constant({true});
  expect_error<ag::InvalidArgumentError>([&] { -t; }, "neg: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([&] { ag::abs(t); }, "abs: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([&] { t + t; }, "add: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([&] { ag::maximum(t, t); },
                                         "maximum: unsupported dtype bool");
}

TEST(Elementwise, WhereNeedsABoolCondition) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::where(ag::constant({1}), ag::constant({1}), ag::constant({2})); },
      "where: expected a bool tensor, got int32");
}

TEST(Elementwise, CastRejectsAnInvalidDtype) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::cast(ag::constant({1}), static_cast<ag::DType>(42)); }, "cast: unsupported dtype");
}

TEST(Elementwise, CastFloatToIntTruncatesAndBoolToNumber) {
  EXPECT_EQ(values<int32_t>(ag::cast(ag::constant({1.9, -1.9}), ag::int32)),
            (std::vector<int32_t>{1, -1}));
  EXPECT_EQ(values<float>(ag::cast(ag::constant({true, false}), ag::float32)),
            (std::vector<float>{1, 0}));
}

TEST(Elementwise, OperandsMustBeDefined) {
  expect_error<ag::FailedPreconditionError>([] { ag::Tensor() + ag::constant(1); }, "undefined");
}

TEST(Elementwise, CompoundAssignment) {
  ag::Tensor t = ag::constant({1, 2});
  ag::Tensor alias = t;
  t += 3;
  t *= ag::constant({2, 10});
  t -= 1;
  t %= 4;
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(values<int32_t>(alias), (std::vector<int32_t>{1, 2}));
  t /= 2;
  EXPECT_EQ(values<double>(t), (std::vector<double>{1.5, 0.5}));
}

// ---- Bitwise ops, their operators, ++ and --, NaN and infinity tests -------------------

TYPED_TEST(IntegerOps, BitwiseOpsAndTheirOperators) {
  using T = TypeParam;
  ag::Tensor a = vec<T>({12, -1, 5}), b = vec<T>({10, 6, -8});
  EXPECT_EQ(values<T>(ag::bitwise_and(a, b)), (std::vector<T>{8, 6, 0}));
  EXPECT_EQ(values<T>(ag::bitwise_or(a, b)), (std::vector<T>{14, -1, -3}));
  EXPECT_EQ(values<T>(ag::bitwise_xor(a, b)), (std::vector<T>{6, -7, -3}));
  EXPECT_EQ(values<T>(ag::invert(a)), (std::vector<T>{-13, 0, -6}));
  EXPECT_EQ(values<T>(a & b), values<T>(ag::bitwise_and(a, b)));
  EXPECT_EQ(values<T>(a | 1), (std::vector<T>{13, -1, 5}));
  EXPECT_EQ(values<T>(3 ^ a), (std::vector<T>{15, -4, 6}));
  EXPECT_EQ(values<T>(~a), (std::vector<T>{-13, 0, -6}));
}

TYPED_TEST(IntegerOps, ShiftsOutsideTheWidthShiftEverythingOut) {
  using T = TypeParam;
  const T bits = T(sizeof(T) * 8);
  ag::Tensor a = vec<T>({3, -8, 1, -1, 5});
  ag::Tensor count = vec<T>({2, 1, bits, bits + 1, -1});
  EXPECT_EQ(values<T>(a << count), (std::vector<T>{12, -16, 0, 0, 0}));
  EXPECT_EQ(values<T>(a >> count), (std::vector<T>{0, -4, 0, -1, 0}));
  EXPECT_EQ(values<T>(ag::left_shift(vec<T>({1}), bits - 1)),
            (std::vector<T>{std::numeric_limits<T>::min()}));
}

TEST(Elementwise, AndOrXorInvertOfBoolAreTheLogicalOps) {
  ag::Tensor a = ag::constant({true, true, false, false});
  ag::Tensor b = ag::constant({true, false, true, false});
  EXPECT_EQ(values<bool>(a & b), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(values<bool>(a | b), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(values<bool>(a ^ b), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(values<bool>(ag::logical_xor(a, b)), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(values<bool>(~a), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(values<bool>(a & true), (std::vector<bool>{true, true, false, false}));
}

TEST(Elementwise, BitwiseOpsRejectFloats) {
  ag::Tensor x = ag::constant({1.5f});
  expect_error<ag::InvalidArgumentError>(
      [&] { x & x; }, "bitwise_and: unsupported dtype float32; it takes int32 or int64");
  expect_error<ag::InvalidArgumentError>([&] { ~x; }, "invert: unsupported dtype float32");
  expect_error<ag::InvalidArgumentError>([&] { x << 1; }, "left_shift: unsupported dtype float32");
}

TEST(Elementwise, CompoundBitwiseAssignment) {
  ag::Tensor t = ag::constant({6, 9});
  t &= 3;
  t |= ag::constant({8, 4});
  t ^= 1;
  t <<= 2;
  t >>= 1;
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{22, 8}));
  ag::Tensor flags = ag::constant({true, false});
  flags |= ag::constant({false, false});
  flags ^= true;
  EXPECT_EQ(values<bool>(flags), (std::vector<bool>{false, true}));
}

TEST(Elementwise, IncrementAndDecrementKeepTheDtype) {
  ag::Tensor i = ag::constant({1, 5});
  ag::Tensor alias = i;
  ++i;
  EXPECT_EQ(values<int32_t>(i), (std::vector<int32_t>{2, 6}));
  EXPECT_EQ(values<int32_t>(i++), (std::vector<int32_t>{2, 6}));
  EXPECT_EQ(values<int32_t>(i), (std::vector<int32_t>{3, 7}));
  EXPECT_EQ(values<int32_t>(--i), (std::vector<int32_t>{2, 6}));
  EXPECT_EQ(values<int32_t>(i--), (std::vector<int32_t>{2, 6}));
  EXPECT_EQ(values<int32_t>(i), (std::vector<int32_t>{1, 5}));
  EXPECT_EQ(values<int32_t>(alias), (std::vector<int32_t>{1, 5}));
  ag::Tensor x = ag::constant(0.5f);
  ++x;
  EXPECT_EQ(values<float>(x), (std::vector<float>{1.5f}));
  ag::Tensor flag = ag::constant(true);
  expect_error<ag::InvalidArgumentError>([&] { ++flag; }, "++ of a bool tensor");
}

TEST(Elementwise, NanAndInfinityTests) {
  const double inf = std::numeric_limits<double>::infinity();
  ag::Tensor x = ag::constant({1.0, std::nan(""), inf, -inf, -0.0});
  EXPECT_EQ(values<bool>(ag::is_nan(x)), (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(values<bool>(ag::is_inf(x)), (std::vector<bool>{false, false, true, true, false}));
  EXPECT_EQ(values<bool>(ag::is_finite(x)), (std::vector<bool>{true, false, false, false, true}));
  expect_error<ag::InvalidArgumentError>(
      [] { ag::is_nan(ag::constant({1})); },
      "is_nan: unsupported dtype int32; it takes float32 or float64, as tf.math.is_nan");
}

// ---- Broadcasting ---------------------------------------------------------------

TEST(Broadcasting, ScalarWithTensorOnEitherSide) {
  ag::Tensor x = ag::constant({{1, 2}, {3, 4}});
  ag::Tensor s = ag::constant(10);
  EXPECT_EQ((x + s).shape(), (ag::Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(x + s), (std::vector<int32_t>{11, 12, 13, 14}));
  EXPECT_EQ(values<int32_t>(s - x), (std::vector<int32_t>{9, 8, 7, 6}));
  EXPECT_EQ((s + s).shape(), ag::Shape{});
}

TEST(Broadcasting, RowAgainstMatrix) {
  ag::Tensor x = ag::constant({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(values<int32_t>(x * ag::constant({1, 10, 100})),
            (std::vector<int32_t>{1, 20, 300, 4, 50, 600}));
}

// A row broadcast along the leading dims (a bias), on either side of a
// non-commuting op, for rows shorter and longer than the kernel's tile, with
// leading ones on the row: each element against a loop over the values,
// eagerly and in a graph.
TEST(Broadcasting, TrailingRowOnEitherSideOfEveryLength) {
  for (int64_t len : {2, 5, 6, 127, 128, 129, 300}) {
    const ag::Shape full_shape{3, 7, len};
    const ag::Tensor full = ag::random_uniform(full_shape, -5.0, 5.0, ag::float64, int(len));
    const ag::Tensor row = ag::random_uniform({1, len}, -5.0, 5.0, ag::float64, int(len) + 1);
    const std::vector<double> f = full.to_vector<double>(), r = row.to_vector<double>();
    std::vector<double> minus_row(f.size()), row_minus(f.size());
    for (size_t i = 0; i < f.size(); ++i) {
      minus_row[i] = f[i] - r[i % size_t(len)];
      row_minus[i] = r[i % size_t(len)] - f[i];
    }
    auto staged = ag::function([](ag::Tensor a, ag::Tensor b) { return a - b; });
    EXPECT_EQ((full - row).to_vector<double>(), minus_row) << "row of " << len;
    EXPECT_EQ((row - full).to_vector<double>(), row_minus) << "row of " << len;
    EXPECT_EQ(staged(full, row).to_vector<double>(), minus_row) << "row of " << len;
    EXPECT_EQ(staged(row, full).to_vector<double>(), row_minus) << "row of " << len;
  }
}

TEST(Broadcasting, ColumnAgainstRowGivesOuterProduct) {
  ag::Tensor col = ag::constant({{1}, {2}});
  ag::Tensor row = ag::constant({{10, 20, 30}});
  ag::Tensor out = col * row;
  EXPECT_EQ(out.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{10, 20, 30, 20, 40, 60}));
}

TEST(Broadcasting, RankMismatchPrependsOnes) {
  ag::Tensor a = ag::reshape(ag::range(6), {2, 1, 3});
  ag::Tensor b = ag::constant({{100}, {200}});
  ag::Tensor out = a + b;
  EXPECT_EQ(out.shape(), (ag::Shape{2, 2, 3}));
  EXPECT_EQ(values<int32_t>(out),
            (std::vector<int32_t>{100, 101, 102, 200, 201, 202, 103, 104, 105, 203, 204, 205}));
}

TEST(Broadcasting, SizeOneDimsOnBothSides) {
  ag::Tensor a = ag::reshape(ag::range(2), {2, 1, 1});
  ag::Tensor b = ag::reshape(ag::range(3), {1, 3, 1});
  ag::Tensor out = ag::maximum(a, b);
  EXPECT_EQ(out.shape(), (ag::Shape{2, 3, 1}));
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{0, 1, 2, 1, 1, 2}));
}

TEST(Broadcasting, EmptyDimsStayEmpty) {
  ag::Tensor out = ag::zeros(ag::Shape{0, 3}) + ag::ones(ag::Shape{3});
  EXPECT_EQ(out.shape(), (ag::Shape{0, 3}));
  EXPECT_EQ(out.num_elements(), 0);
}

TEST(Broadcasting, IncompatibleShapesAreAnError) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::zeros(ag::Shape{2, 3}) + ag::zeros(ag::Shape{4}); },
      "Incompatible shapes: [2,3] vs. [4]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::zeros(ag::Shape{2, 1}) < ag::zeros(ag::Shape{3, 2}); },
      "Incompatible shapes: [2,1] vs. [3,2]");
}

TEST(Broadcasting, WhereBroadcastsAllThree) {
  ag::Tensor cond = ag::constant({{true}, {false}});
  ag::Tensor out = ag::where(cond, ag::constant({1, 2, 3}), ag::constant(0));
  EXPECT_EQ(out.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{1, 2, 3, 0, 0, 0}));
}

TEST(Broadcasting, LongRowsTakeTheGeneralPath) {
  ag::Tensor a = ag::reshape(ag::range(40), {4, 1, 10});
  ag::Tensor b = ag::reshape(ag::range(3), {3, 1});
  std::vector<int32_t> got = values<int32_t>(a - b);
  ASSERT_EQ(got.size(), 120u);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 10; ++k) EXPECT_EQ(got[size_t((i * 3 + j) * 10 + k)], i * 10 + k - j);
    }
  }
}

// Integer floordiv and mod by a scalar power of two take a shift-and-mask
// path; it must give the floor semantics of the general path exactly,
// negative numbers and the extremes included.
template <class T>
void expect_power_of_two_divisors_match() {
  std::vector<T> xs;
  for (int i = -40; i <= 40; ++i) xs.push_back(T(i));
  xs.push_back(std::numeric_limits<T>::min());
  xs.push_back(std::numeric_limits<T>::max());
  const ag::Tensor x = ag::constant(xs, ag::Shape{int64_t(xs.size())});
  for (T b : {T(1), T(2), T(4), T(8), T(64)}) {
    std::vector<T> q = values<T>(ag::floordiv(x, ag::constant(std::vector<T>{b}, ag::Shape{})));
    std::vector<T> r = values<T>(ag::mod(x, ag::constant(std::vector<T>{b}, ag::Shape{})));
    for (size_t i = 0; i < xs.size(); ++i) {
      // The general path, element by element (scalar operands).
      const ag::Tensor a = ag::constant(std::vector<T>{xs[i]}, ag::Shape{});
      const ag::Tensor d = ag::constant(std::vector<T>{b}, ag::Shape{});
      EXPECT_EQ(q[i], ag::floordiv(a, d).item<T>()) << xs[i] << " // " << b;
      EXPECT_EQ(r[i], ag::mod(a, d).item<T>()) << xs[i] << " % " << b;
    }
  }
}

TEST(Elementwise, FloorDivAndModByAPowerOfTwoMatchTheGeneralPath) {
  expect_power_of_two_divisors_match<int32_t>();
  expect_power_of_two_divisors_match<int64_t>();
}

// ---- round, floor, ceil, sign, clip_by_value (TensorFlow's semantics) ---------

TYPED_TEST(FloatingOps, RoundIsHalfToEven) {
  using T = TypeParam;
  ag::Tensor x = vec<T>({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.4, 2.6, -2.6, -7.0});
  EXPECT_EQ(values<T>(ag::round(x)), (std::vector<T>{-2, -2, 0, 0, 2, 2, 4, 0, 3, -3, -7}));
  // A zero result keeps x's sign, as rint does: round(-0.5) and round(-0.4) are -0.0.
  std::vector<T> zeros = values<T>(ag::round(vec<T>({-0.5, -0.4, 0.4, -0.0})));
  EXPECT_EQ(zeros, (std::vector<T>{0, 0, 0, 0}));
  EXPECT_TRUE(std::signbit(zeros[0]));
  EXPECT_TRUE(std::signbit(zeros[1]));
  EXPECT_FALSE(std::signbit(zeros[2]));
  EXPECT_TRUE(std::signbit(zeros[3]));
  // The largest value below one half does not round up (x + 0.5 would).
  const T below_half = std::nextafter(T(0.5), T(0));
  EXPECT_EQ(ag::round(vec<T>({below_half})).template item<T>(), T(0));
  // Past 2^mantissa every value is whole.
  const T big = std::ldexp(T(1), std::numeric_limits<T>::digits) + T(2);
  EXPECT_EQ(ag::round(vec<T>({big})).template item<T>(), big);
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> special = values<T>(ag::round(vec<T>({inf, -inf, NAN})));
  EXPECT_EQ(special[0], inf);
  EXPECT_EQ(special[1], -inf);
  EXPECT_TRUE(std::isnan(special[2]));
}

TYPED_TEST(FloatingOps, FloorAndCeil) {
  using T = TypeParam;
  ag::Tensor x = vec<T>({-2.5, -1.0, -0.2, 0.0, 0.2, 1.0, 2.5});
  EXPECT_EQ(values<T>(ag::floor(x)), (std::vector<T>{-3, -1, -1, 0, 0, 1, 2}));
  EXPECT_EQ(values<T>(ag::ceil(x)), (std::vector<T>{-2, -1, 0, 0, 1, 1, 3}));
  EXPECT_TRUE(std::signbit(ag::ceil(vec<T>({-0.2})).template item<T>()));
  EXPECT_TRUE(std::isnan(ag::floor(vec<T>({NAN})).template item<T>()));
  EXPECT_EQ(ag::ceil(vec<T>({-INFINITY})).template item<T>(), -std::numeric_limits<T>::infinity());
}

TYPED_TEST(FloatingOps, SignOfZerosInfinitiesAndNaN) {
  using T = TypeParam;
  std::vector<T> s = values<T>(ag::sign(vec<T>({-3.5, -0.0, 0.0, 0.25, INFINITY, -INFINITY, NAN})));
  EXPECT_EQ(std::vector<T>(s.begin(), s.end() - 1), (std::vector<T>{-1, 0, 0, 1, 1, -1}));
  EXPECT_FALSE(std::signbit(s[1]));
  EXPECT_TRUE(std::isnan(s.back()));
}

TYPED_TEST(FloatingOps, ClipByValuePassesNaNThrough) {
  using T = TypeParam;
  std::vector<T> c = values<T>(ag::clip_by_value(vec<T>({NAN, -5.0, 0.5, 5.0}), -1.0, 1.0));
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(std::vector<T>(c.begin() + 1, c.end()), (std::vector<T>{-1, 0.5, 1}));
  // A NaN bound gives NaN everywhere, as TensorFlow's NaN-propagating minimum and maximum.
  for (T v : values<T>(ag::clip_by_value(vec<T>({-5.0, 0.5}), vec<T>({NAN}), vec<T>({1.0})))) {
    EXPECT_TRUE(std::isnan(v));
  }
  for (T v : values<T>(ag::clip_by_value(vec<T>({-5.0, 0.5}), -1, NAN))) EXPECT_TRUE(std::isnan(v));
}

TYPED_TEST(IntegerOps, RoundPassesIntegersThrough) {
  using T = TypeParam;
  std::vector<T> x = {std::numeric_limits<T>::min(), -3, 0, 7, std::numeric_limits<T>::max()};
  ag::Tensor t = ag::constant(x, ag::Shape{5});
  EXPECT_EQ(values<T>(ag::round(t)), x);
}

TYPED_TEST(IntegerOps, FloorAndCeilRejectIntegersAsTensorFlowDoes) {
  using T = TypeParam;
  const std::string name(ag::dtype_name(ag::dtype_v<T>));
  ag::Tensor x = vec<T>({1, 2});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::floor(x); }, "floor: unsupported dtype " + name +
                                 "; it takes float32 or float64, as tf.math.floor (an integer "
                                 "tensor is already whole: use it as it is, or ag::cast it)");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::ceil(x); }, "ceil: unsupported dtype " + name + "; it takes float32 or float64");
}

TYPED_TEST(IntegerOps, Sign) {
  using T = TypeParam;
  ag::Tensor x = ag::constant(
      std::vector<T>{std::numeric_limits<T>::min(), -4, 0, 9, std::numeric_limits<T>::max()},
      ag::Shape{5});
  EXPECT_EQ(values<T>(ag::sign(x)), (std::vector<T>{-1, -1, 0, 1, 1}));
}

TYPED_TEST(NumericOps, ClipByValueWithScalarBounds) {
  using T = TypeParam;
  ag::Tensor x = vec<T>({-5, -1, 0, 2, 9});
  ag::Tensor c = ag::clip_by_value(x, -1, 3);
  EXPECT_EQ(values<T>(c), (std::vector<T>{-1, -1, 0, 2, 3}));
  EXPECT_EQ(c.shape(), ag::Shape{5});
  // min > max: the min wins (maximum is applied last).
  EXPECT_EQ(values<T>(ag::clip_by_value(x, 4, 1)), (std::vector<T>{4, 4, 4, 4, 4}));
  // A rank-0 t, and an empty one.
  ag::Tensor scalar = ag::clip_by_value(ag::constant(std::vector<T>{7}, ag::Shape{}), 0, 5);
  EXPECT_EQ(scalar.shape(), ag::Shape{});
  EXPECT_EQ(scalar.template item<T>(), T(5));
  ag::Tensor empty = ag::clip_by_value(ag::zeros(ag::Shape{0, 3}, ag::dtype_v<T>), 0, 1);
  EXPECT_EQ(empty.shape(), (ag::Shape{0, 3}));
  EXPECT_EQ(empty.dtype(), ag::dtype_v<T>);
}

TYPED_TEST(NumericOps, ClipByValueWithTensorBoundsThatBroadcast) {
  using T = TypeParam;
  ag::Tensor x = vec<T>({{-5, 0, 5}, {1, 2, 3}});
  ag::Tensor lo = vec<T>({-1, 1, 2});  // per column
  ag::Tensor hi = vec<T>({{0}, {2}});  // per row
  EXPECT_EQ(values<T>(ag::clip_by_value(x, lo, hi)), (std::vector<T>{-1, 1, 2, 1, 2, 2}));
  EXPECT_EQ(values<T>(ag::clip_by_value(x, lo, 4)), (std::vector<T>{-1, 1, 4, 1, 2, 3}));
  EXPECT_EQ(values<T>(ag::clip_by_value(x, 0, hi)), (std::vector<T>{0, 0, 0, 1, 2, 2}));
}

TEST(Elementwise, ClipByValueKeepsTsDtypeAndShape) {
  ag::Tensor ints = ag::constant({1, 5, 9});
  ag::Tensor floats = ag::constant({1.0f, 5.0f});
  // A C++ integer converts to any numeric t; a floating scalar only to a floating one.
  EXPECT_EQ(ag::clip_by_value(floats, 2, 3).dtype(), ag::float32);
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::clip_by_value(ints, 0.5, 3); },
      "clip_by_value: clip_value_min is a floating-point scalar, which does not convert to int32 "
      "(t's dtype)");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::clip_by_value(floats, ag::constant(0.0, ag::float64), 1); },
      "clip_by_value: clip_value_min has dtype float64 but t has dtype float32; ag::cast one of "
      "them");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::clip_by_value(ints, 0, ag::constant({{3}, {4}})); },
      "clip_by_value: clip_value_max of shape [2,1] would broadcast t of shape [3] to [2,3]; the "
      "bounds must broadcast to t's shape");
  expect_error<ag::InvalidArgumentError>([&] { ag::clip_by_value(ints, 0, ag::constant({1, 2})); },
                                         "Incompatible shapes: [3] vs. [2]");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::clip_by_value(ag::constant({true}), ag::constant(false), ag::constant(true)); },
      "clip_by_value: unsupported dtype bool");
}

TEST(Elementwise, RoundAndSignRejectBool) {
  ag::Tensor b = ag::constant({true});
  expect_error<ag::InvalidArgumentError>([&] { ag::round(b); }, "round: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([&] { ag::sign(b); }, "sign: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([&] { ag::floor(b); }, "floor: unsupported dtype bool");
}

}  // namespace
