// The promotion rules written down in include/ag/dtype.h.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag_test::expect_error;
using ag_test::values;

// ---- Rule 1: two tensors ----------------------------------------------------------

struct TensorPair {
  ag::DType a, b, result;
};

class TensorPromotion : public ::testing::TestWithParam<TensorPair> {};

TEST_P(TensorPromotion, TakesTheLargerTypeOnTheLattice) {
  const TensorPair& p = GetParam();
  EXPECT_EQ(ag::promote_types(p.a, p.b), p.result);
  EXPECT_EQ(ag::promote_types(p.b, p.a), p.result);
  if (p.result != ag::bool_) {
    ag::Tensor sum = ag::ones(ag::Shape{2}, p.a) + ag::ones(ag::Shape{2}, p.b);
    EXPECT_EQ(sum.dtype(), p.result);
    EXPECT_EQ(sum.to_vector<int>(), (std::vector<int>{2, 2}));
  }
}

INSTANTIATE_TEST_SUITE_P(Lattice, TensorPromotion,
                         ::testing::Values(TensorPair{ag::bool_, ag::bool_, ag::bool_},
                                           TensorPair{ag::bool_, ag::int32, ag::int32},
                                           TensorPair{ag::bool_, ag::float64, ag::float64},
                                           TensorPair{ag::int32, ag::int32, ag::int32},
                                           TensorPair{ag::int32, ag::int64, ag::int64},
                                           TensorPair{ag::int32, ag::float32, ag::float32},
                                           TensorPair{ag::int64, ag::float32, ag::float32},
                                           TensorPair{ag::int64, ag::float64, ag::float64},
                                           TensorPair{ag::float32, ag::float64, ag::float64}));

// ---- Rule 2: a tensor and a weak C++ scalar ------------------------------------------

TEST(ScalarPromotion, IntTensorTimesIntStaysInt32) {
  ag::Tensor t = ag::constant({1, 2}) * 2;
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{2, 4}));
}

TEST(ScalarPromotion, Int64TensorWithIntStaysInt64) {
  ag::Tensor t = ag::constant({1, 2}, ag::int64) + 1;
  EXPECT_EQ(values<int64_t>(t), (std::vector<int64_t>{2, 3}));
}

TEST(ScalarPromotion, Float32PlusDoubleStaysFloat32) {
  ag::Tensor t = ag::constant({1.0f}) + 1.5;
  EXPECT_EQ(values<float>(t), (std::vector<float>{2.5f}));
}

TEST(ScalarPromotion, Float64TensorWithIntStaysFloat64) {
  ag::Tensor t = 2 * ag::constant({1.25}, ag::float64);
  EXPECT_EQ(values<double>(t), (std::vector<double>{2.5}));
}

TEST(ScalarPromotion, IntTensorTimesDoubleGivesFloat32) {
  ag::Tensor t = ag::constant({1, 2}) * 1.5;
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, 3.0f}));
}

TEST(ScalarPromotion, BoolTensorPlusIntGivesInt32) {
  ag::Tensor t = ag::constant({true, false}) + 1;
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{2, 1}));
}

TEST(ScalarPromotion, BoolTensorPlusDoubleGivesFloat32) {
  ag::Tensor t = ag::constant({true, false}) + 0.5;
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, 0.5f}));
}

TEST(ScalarPromotion, BoolScalarKeepsTheTensorType) {
  EXPECT_EQ(ag::promote_with_scalar(ag::int64, ag::ScalarKind::boolean), ag::int64);
  EXPECT_EQ(values<bool>(ag::constant({true, false}) == true), (std::vector<bool>{true, false}));
}

TEST(ScalarPromotion, ScalarOnTheLeft) {
  EXPECT_EQ(values<int32_t>(10 - ag::constant({1, 2})), (std::vector<int32_t>{9, 8}));
  EXPECT_EQ(values<float>(1.0 - ag::constant({0.25f})), (std::vector<float>{0.75f}));
}

TEST(ScalarPromotion, ComparisonsGiveBool) {
  EXPECT_EQ(values<bool>(ag::constant({1.5, 2.5}) > 2), (std::vector<bool>{false, true}));
  EXPECT_EQ(values<bool>(ag::constant({1, 2}) == ag::constant({1.0, 2.5})),
            (std::vector<bool>{true, false}));
}

// ---- Rule 3: fixed result types ---------------------------------------------------------

TEST(FixedResultType, IntegerDivisionGivesFloat64) {
  ag::Tensor t = ag::constant({7, 1}) / ag::constant({2, 4});
  EXPECT_EQ(values<double>(t), (std::vector<double>{3.5, 0.25}));
  EXPECT_EQ(values<double>(ag::constant({7}) / 2), (std::vector<double>{3.5}));
  EXPECT_EQ(values<double>(7 / ag::constant({2}, ag::int64)), (std::vector<double>{3.5}));
}

TEST(FixedResultType, FloatDivisionKeepsTheFloatType) {
  EXPECT_EQ(values<float>(ag::constant({1.0f}) / 4), (std::vector<float>{0.25f}));
  EXPECT_EQ(values<float>(ag::constant({1}) / 4.0), (std::vector<float>{0.25f}));
  EXPECT_EQ(values<double>(ag::divide(ag::constant({1.0}, ag::float64), ag::constant({4}))),
            (std::vector<double>{0.25}));
}

TEST(FixedResultType, CastGivesTheAskedType) {
  EXPECT_EQ(ag::cast(ag::constant({1.5}), ag::int64).dtype(), ag::int64);
}

// ---- Other ops that promote ------------------------------------------------------------

TEST(OpPromotion, WhereWithMixedBranches) {
  ag::Tensor c = ag::constant({true, false});
  EXPECT_EQ(values<float>(ag::where(c, ag::constant({1, 2}), 1.5)),
            (std::vector<float>{1.0f, 1.5f}));
  EXPECT_EQ(values<float>(ag::where(c, 1, 2.5)), (std::vector<float>{1.0f, 2.5f}));
  EXPECT_EQ(values<int32_t>(ag::where(c, 1, 2)), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(values<bool>(ag::where(c, false, true)), (std::vector<bool>{false, true}));
  EXPECT_EQ(values<int64_t>(ag::where(c, ag::constant({1}, ag::int64), ag::constant({2}))),
            (std::vector<int64_t>{1, 2}));
}

TEST(OpPromotion, MatmulConcatStackPromote) {
  ag::Tensor i = ag::constant({{2}});
  ag::Tensor f = ag::constant({{1.5}});
  EXPECT_EQ(values<float>(ag::matmul(i, f)), (std::vector<float>{3.0f}));
  EXPECT_EQ(values<float>(ag::concat({i, f}, 0)), (std::vector<float>{2.0f, 1.5f}));
  EXPECT_EQ(values<int64_t>(ag::stack({ag::constant(1), ag::Tensor(int64_t{2})})),
            (std::vector<int64_t>{1, 2}));
}

TEST(OpPromotion, LogicalOpsDoNotPromote) {
  expect_error<ag::InvalidArgumentError>([] { ag::logical_or(ag::constant({true}), 1); },
                                         "logical_or: expected a bool tensor, got int32");
}

}  // namespace
