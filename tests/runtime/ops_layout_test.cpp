#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag_test::expect_error;
using ag_test::values;

// Layout ops move bytes; cover each element size (bool 1, int32/float 4,
// int64/double 8).
template <class T>
class Layout : public ::testing::Test {
 protected:
  static ag::Tensor iota(ag::Shape shape) {
    return ag::cast(ag::reshape(ag::range(int32_t(shape.num_elements())),
                                std::vector<int64_t>(shape.begin(), shape.end())),
                    ag::dtype_v<T>);
  }
  static std::vector<T> v(std::initializer_list<int> xs) {
    std::vector<T> out;
    for (int x : xs) out.push_back(T(x));
    return out;
  }
};
using AllTypes = ::testing::Types<float, double, int32_t, int64_t, bool>;
TYPED_TEST_SUITE(Layout, AllTypes);

TYPED_TEST(Layout, TransposeMatrix) {
  using T = TypeParam;
  ag::Tensor x = this->iota({2, 3});
  ag::Tensor t = ag::transpose(x);
  EXPECT_EQ(t.shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(values<T>(t), this->v({0, 3, 1, 4, 2, 5}));
}

TYPED_TEST(Layout, ReshapeExpandSqueezeKeepTheBytes) {
  using T = TypeParam;
  ag::Tensor x = this->iota({2, 3});
  EXPECT_EQ(ag::reshape(x, {3, -1}).shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(values<T>(ag::reshape(x, {6})), this->v({0, 1, 2, 3, 4, 5}));
  ag::Tensor e = ag::expand_dims(x, 1);
  EXPECT_EQ(e.shape(), (ag::Shape{2, 1, 3}));
  EXPECT_EQ(values<T>(ag::squeeze(e)), values<T>(x));
}

TYPED_TEST(Layout, BroadcastToRepeatsRowsAndElements) {
  using T = TypeParam;
  ag::Tensor row = this->iota({3});
  EXPECT_EQ(ag::broadcast_to(row, {2, 3}).shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(values<T>(ag::broadcast_to(row, {2, 3})), this->v({0, 1, 2, 0, 1, 2}));
  ag::Tensor column = this->iota({2, 1});
  EXPECT_EQ(values<T>(ag::broadcast_to(column, {2, 3})), this->v({0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values<T>(ag::broadcast_to(column, {2, 2, 2})), this->v({0, 0, 1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(values<T>(ag::broadcast_to(ag::cast(ag::constant(1), ag::dtype_v<T>), {2, 2})),
            this->v({1, 1, 1, 1}));
  EXPECT_EQ(values<T>(ag::broadcast_to(row, {3})), values<T>(row));
  EXPECT_EQ(ag::broadcast_to(row, {0, 3}).shape(), (ag::Shape{0, 3}));
}

TYPED_TEST(Layout, ConcatAndStack) {
  using T = TypeParam;
  ag::Tensor a = this->iota({2, 2});
  ag::Tensor b = ag::reshape(this->iota({2}), {2, 1});
  EXPECT_EQ(values<T>(ag::concat({a, b}, 1)), this->v({0, 1, 0, 2, 3, 1}));
  EXPECT_EQ(values<T>(ag::stack({a, a}, 2)), this->v({0, 0, 1, 1, 2, 2, 3, 3}));
}

TYPED_TEST(Layout, GatherAndSlice) {
  using T = TypeParam;
  ag::Tensor x = this->iota({3, 2});
  EXPECT_EQ(values<T>(ag::gather(x, ag::constant({2, 0}))), this->v({4, 5, 0, 1}));
  EXPECT_EQ(values<T>(ag::slice(x, {1, 1}, {2, 1})), this->v({3, 5}));
}

// ---- transpose ----------------------------------------------------------------

TEST(Transpose, EveryPermutationOfThreeAxes) {
  ag::Tensor x = ag::reshape(ag::range(24), {2, 3, 4});
  std::vector<int64_t> perm = {0, 1, 2};
  int64_t dims[] = {2, 3, 4};
  do {
    ag::Tensor t = ag::transpose(x, perm);
    ASSERT_EQ(t.shape(), (ag::Shape{dims[perm[0]], dims[perm[1]], dims[perm[2]]}));
    std::vector<int32_t> got = t.to_vector<int32_t>();
    int64_t strides[] = {12, 4, 1};
    size_t o = 0;
    for (int64_t i = 0; i < dims[perm[0]]; ++i)
      for (int64_t j = 0; j < dims[perm[1]]; ++j)
        for (int64_t k = 0; k < dims[perm[2]]; ++k, ++o)
          ASSERT_EQ(got[o], i * strides[perm[0]] + j * strides[perm[1]] + k * strides[perm[2]])
              << "perm " << perm[0] << perm[1] << perm[2] << " at " << o;
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(Transpose, SizeOneAxesAndMergedAxes) {
  ag::Tensor x = ag::reshape(ag::range(6), {2, 1, 3});
  EXPECT_EQ(ag::transpose(x, {0, 1, 2}).to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ag::transpose(x, {1, 0, 2}).to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ag::transpose(x, {2, 1, 0}).to_vector<int>(), (std::vector<int>{0, 3, 1, 4, 2, 5}));
  ag::Tensor y = ag::reshape(ag::range(24), {2, 3, 4});
  // Axes 1 and 2 stay adjacent: a [2, 12] -> [12, 2] transpose.
  ag::Tensor t = ag::transpose(y, {1, 2, 0});
  EXPECT_EQ(t.shape(), (ag::Shape{3, 4, 2}));
  EXPECT_EQ(t.to_vector<int>()[0], 0);
  EXPECT_EQ(t.to_vector<int>()[1], 12);
  EXPECT_EQ(t.to_vector<int>()[2], 1);
}

TEST(Transpose, LargeMatrixCrossesTiles) {
  ag::Tensor x = ag::reshape(ag::range(70 * 45), {70, 45});
  std::vector<int> got = ag::transpose(x).to_vector<int>();
  for (int c = 0; c < 45; ++c)
    for (int r = 0; r < 70; ++r) ASSERT_EQ(got[size_t(c * 70 + r)], r * 45 + c);
}

TEST(Transpose, NegativeAxesAndErrors) {
  ag::Tensor x = ag::zeros(ag::Shape{2, 3});
  EXPECT_EQ(ag::transpose(x, {-1, 0}).shape(), (ag::Shape{3, 2}));
  expect_error<ag::InvalidArgumentError>([&] { ag::transpose(x, {0}); },
                                         "transpose: perm has 1 entries for a tensor of rank 2");
  expect_error<ag::InvalidArgumentError>([&] { ag::transpose(x, {1, 1}); },
                                         "transpose: perm is not a permutation");
}

// ---- reshape, expand_dims, squeeze -------------------------------------------------

TEST(Reshape, Errors) {
  ag::Tensor x = ag::zeros(ag::Shape{2, 3});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::reshape(x, {4}); },
      "reshape: cannot reshape a tensor of shape [2,3] (6 elements) to shape [4]");
  expect_error<ag::InvalidArgumentError>([&] { ag::reshape(x, {-1, -1}); },
                                         "reshape: only one dimension may be -1");
  expect_error<ag::InvalidArgumentError>([&] { ag::reshape(x, {4, -1}); },
                                         "reshape: cannot reshape a tensor of 6 elements to shape");
}

TEST(BroadcastTo, Errors) {
  ag::Tensor x = ag::zeros(ag::Shape{2, 3});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::broadcast_to(x, {3, 3}); },
      "broadcast_to: cannot broadcast a tensor of shape [2,3] to shape [3,3] (each dim, aligned "
      "from the last, must be 1 or the target's)");
  expect_error<ag::InvalidArgumentError>([&] { ag::broadcast_to(x, {3}); },
                                         "broadcast_to: cannot broadcast a tensor of shape [2,3] "
                                         "to shape [3]");
  expect_error<ag::InvalidArgumentError>([&] { ag::broadcast_to(x, {-1, 3}); },
                                         "broadcast_to: the shape must be fully defined");
}

TEST(ExpandDims, AtEveryPosition) {
  ag::Tensor x = ag::zeros(ag::Shape{2, 3});
  EXPECT_EQ(ag::expand_dims(x, 0).shape(), (ag::Shape{1, 2, 3}));
  EXPECT_EQ(ag::expand_dims(x, 2).shape(), (ag::Shape{2, 3, 1}));
  EXPECT_EQ(ag::expand_dims(x, -1).shape(), (ag::Shape{2, 3, 1}));
  EXPECT_EQ(ag::expand_dims(ag::constant(1), 0).to_vector<int>(), (std::vector<int>{1}));
  expect_error<ag::InvalidArgumentError>([&] { ag::expand_dims(x, 4); },
                                         "expand_dims: axis 4 is out of range");
}

TEST(Squeeze, AllOrGivenAxes) {
  ag::Tensor x = ag::zeros(ag::Shape{1, 2, 1, 3});
  EXPECT_EQ(ag::squeeze(x).shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(ag::squeeze(x, {2}).shape(), (ag::Shape{1, 2, 3}));
  EXPECT_EQ(ag::squeeze(x, {0, -2}).shape(), (ag::Shape{2, 3}));
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::squeeze(x, {1}); },
      "squeeze: cannot squeeze dim 1, expected a dimension of 1, got 2");
}

// ---- concat, stack --------------------------------------------------------------

TEST(Concat, AlongEachAxis) {
  ag::Tensor a = ag::constant({{1, 2}, {3, 4}});
  ag::Tensor b = ag::constant({{5, 6}});
  ag::Tensor r = ag::concat({a, b}, 0);
  EXPECT_EQ(r.shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(values<int32_t>(r), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  ag::Tensor c = ag::concat({a, ag::constant({{7}, {8}}), a}, -1);
  EXPECT_EQ(c.shape(), (ag::Shape{2, 5}));
  EXPECT_EQ(values<int32_t>(c), (std::vector<int32_t>{1, 2, 7, 1, 2, 3, 4, 8, 3, 4}));
  EXPECT_EQ(values<int32_t>(ag::concat({a}, 1)), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(ag::concat({a, ag::zeros(ag::Shape{0, 2}, ag::int32)}, 0).shape(), (ag::Shape{2, 2}));
}

TEST(Concat, Errors) {
  ag::Tensor a = ag::zeros(ag::Shape{2, 2});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::concat({a, ag::zeros(ag::Shape{2})}, 0); },
      "concat: ranks of all inputs should match: shape[0] = [2,2] vs. shape[1] = [2]");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::concat({a, ag::zeros(ag::Shape{3, 3})}, 0); },
      "concat: dimensions of inputs should match: shape[0] = [2,2] vs. shape[1] = [3,3]");
  expect_error<ag::InvalidArgumentError>([] { ag::concat({}, 0); },
                                         "concat: needs at least one tensor");
  expect_error<ag::InvalidArgumentError>([] { ag::concat({ag::constant(1)}, 0); },
                                         "concat: cannot concatenate scalars; use stack");
}

TEST(Stack, AlongEachAxis) {
  ag::Tensor a = ag::constant({1, 2, 3}), b = ag::constant({4, 5, 6});
  ag::Tensor s0 = ag::stack({a, b});
  EXPECT_EQ(s0.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(s0), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  ag::Tensor s1 = ag::stack({a, b}, 1);
  EXPECT_EQ(s1.shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(values<int32_t>(s1), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values<int32_t>(ag::stack({a, b}, -1)), values<int32_t>(s1));
  ag::Tensor scalars = ag::stack({ag::constant(7), ag::constant(8)});
  EXPECT_EQ(scalars.shape(), (ag::Shape{2}));
  EXPECT_EQ(values<int32_t>(scalars), (std::vector<int32_t>{7, 8}));
}

TEST(Stack, ShapesMustMatch) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::stack({ag::zeros(ag::Shape{2}), ag::zeros(ag::Shape{3})}); },
      "stack: shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]");
}

// ---- gather and indexing ---------------------------------------------------------

TEST(Gather, AlongAxisZeroAndOne) {
  ag::Tensor x = ag::constant({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(values<int32_t>(ag::gather(x, ag::constant({1, 1, 0}))),
            (std::vector<int32_t>{4, 5, 6, 4, 5, 6, 1, 2, 3}));
  ag::Tensor g = ag::gather(x, ag::constant({2, 0}, ag::int64), 1);
  EXPECT_EQ(g.shape(), (ag::Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(g), (std::vector<int32_t>{3, 1, 6, 4}));
  EXPECT_EQ(values<int32_t>(ag::gather(x, ag::constant({0}), -1)), (std::vector<int32_t>{1, 4}));
}

TEST(Gather, MultiDimensionalAndScalarIndices) {
  ag::Tensor x = ag::constant({10, 20, 30});
  ag::Tensor g = ag::gather(x, ag::constant({{0, 2}, {1, 1}}));
  EXPECT_EQ(g.shape(), (ag::Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(g), (std::vector<int32_t>{10, 30, 20, 20}));
  ag::Tensor s = ag::gather(x, ag::constant(2));
  EXPECT_EQ(s.shape(), ag::Shape{});
  EXPECT_EQ(s.item<int>(), 30);
}

TEST(Gather, IndexErrorsAreLikeTensorFlows) {
  expect_error<ag::InvalidArgumentError>([] { ag::gather(ag::constant({5}), ag::constant({1})); },
                                         "gather: indices[0] = 1 is not in [0, 1)");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::gather(ag::constant({5, 6}), ag::constant({0, -1})); },
      "gather: indices[1] = -1 is not in [0, 2)");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::gather(ag::constant({1, 2, 3}), ag::constant({{0, 1}, {5, 0}}, ag::int64)); },
      "gather: indices[1,0] = 5 is not in [0, 3)");
  expect_error<ag::InvalidArgumentError>([] { ag::gather(ag::constant({1, 2}), ag::constant(2)); },
                                         "gather: indices = 2 is not in [0, 2)");
  expect_error<ag::InvalidArgumentError>([] { ag::gather(ag::constant({1}), ag::constant({0.0})); },
                                         "gather: indices must be int32 or int64, got float32");
}

TEST(Indexing, FirstAxis) {
  ag::Tensor x = ag::constant({{1, 2}, {3, 4}, {5, 6}});
  EXPECT_EQ(values<int32_t>(x[1]), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(values<int32_t>(x[-1]), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(x[0][1].item<int>(), 2);
  EXPECT_EQ(values<int32_t>(x[ag::constant(2)]), (std::vector<int32_t>{5, 6}));
  expect_error<ag::OutOfRangeError>([&] { x[3]; },
                                    "index 3 is out of range for a first axis of size 3");
  expect_error<ag::InvalidArgumentError>([] { ag::constant(1)[0]; },
                                         "cannot index a scalar tensor");
}

TEST(Indexing, IterationOverTheFirstAxis) {
  std::vector<int> sums;
  for (ag::Tensor row : ag::constant({{1, 2}, {3, 4}}))
    sums.push_back(ag::reduce_sum(row).item<int>());
  EXPECT_EQ(sums, (std::vector<int>{3, 7}));
}

// ---- slice ------------------------------------------------------------------------

TEST(Slice, InnerOuterAndFullAxes) {
  ag::Tensor x = ag::reshape(ag::range(24), {2, 3, 4});
  ag::Tensor a = ag::slice(x, {0, 1, 0}, {2, 2, 4});
  EXPECT_EQ(a.shape(), (ag::Shape{2, 2, 4}));
  EXPECT_EQ(values<int32_t>(a),
            (std::vector<int32_t>{4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}));
  ag::Tensor b = ag::slice(x, {1, 0, 1}, {1, -1, 2});
  EXPECT_EQ(b.shape(), (ag::Shape{1, 3, 2}));
  EXPECT_EQ(values<int32_t>(b), (std::vector<int32_t>{13, 14, 17, 18, 21, 22}));
  EXPECT_EQ(values<int32_t>(ag::slice(x, {0, 0, 0}, {-1, -1, -1})), values<int32_t>(x));
  EXPECT_EQ(ag::slice(x, {0, 3, 0}, {2, 0, 4}).shape(), (ag::Shape{2, 0, 4}));
}

TEST(Slice, Errors) {
  ag::Tensor x = ag::zeros(ag::Shape{2, 3});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::slice(x, {0, 2}, {1, 2}); },
      "slice: expected begin[1] + size[1] <= 3, got begin 2 and size 2");
  expect_error<ag::InvalidArgumentError>([&] { ag::slice(x, {0}, {1}); },
                                         "slice: begin and size must each have 2 entries");
  expect_error<ag::InvalidArgumentError>([&] { ag::slice(x, {0, 0}, {1}); },
                                         "slice: begin has 2 entries but size has 1");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::slice(x, {-1, 0}, {1, 1}); },
      "slice: begin and size must be non-negative (size may be -1)");
}

// ---- one_hot -------------------------------------------------------------------------

TEST(OneHot, DefaultsAreFloat32OnesAndZerosOnTheLastAxis) {
  ag::Tensor h = ag::one_hot(ag::constant({0, 2, 1}), 3);
  EXPECT_EQ(h.shape(), (ag::Shape{3, 3}));
  EXPECT_EQ(values<float>(h), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 1, 0}));
}

TEST(OneHot, IndicesOutOfRangeGiveARowOfOffValues) {
  ag::Tensor indices = ag::cast(ag::constant({-1, 3, 1, 100}), ag::int64);
  EXPECT_EQ(values<int32_t>(ag::one_hot(indices, 3, 5, -1)),
            (std::vector<int32_t>{-1, -1, -1, -1, -1, -1, -1, 5, -1, -1, -1, -1}));
}

TEST(OneHot, TheNewAxisGoesWhereAxisSays) {
  ag::Tensor indices = ag::constant({{0, 2}, {1, 0}});
  // axis 0: out[d][i][j] = indices[i][j] == d.
  ag::Tensor first = ag::one_hot(indices, 3, 1, 0, 0);
  EXPECT_EQ(first.shape(), (ag::Shape{3, 2, 2}));
  EXPECT_EQ(values<int32_t>(first), (std::vector<int32_t>{1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0}));
  // axis 1: out[i][d][j].
  ag::Tensor middle = ag::one_hot(indices, 3, 1, 0, 1);
  EXPECT_EQ(middle.shape(), (ag::Shape{2, 3, 2}));
  EXPECT_EQ(values<int32_t>(middle), (std::vector<int32_t>{1, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0}));
  // axis 2 (the last) is the same as -1.
  EXPECT_EQ(values<int32_t>(ag::one_hot(indices, 3, 1, 0, 2)),
            values<int32_t>(ag::one_hot(indices, 3, 1, 0, -1)));
}

TEST(OneHot, TheDtypeComesFromDtypeElseFromTheValues) {
  ag::Tensor i = ag::constant({1});
  EXPECT_EQ(ag::one_hot(i, 2, 7).dtype(), ag::int32);
  EXPECT_EQ(ag::one_hot(i, 2, std::nullopt, 0.5).dtype(), ag::float32);
  EXPECT_EQ(values<bool>(ag::one_hot(i, 2, true, false)), (std::vector<bool>{false, true}));
  EXPECT_EQ(values<double>(ag::one_hot(i, 2, 3, 0, -1, ag::float64)), (std::vector<double>{0, 3}));
  EXPECT_EQ(values<bool>(ag::one_hot(i, 2, std::nullopt, std::nullopt, -1, ag::bool_)),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(values<int64_t>(ag::one_hot(i, 2, std::nullopt, std::nullopt, -1, ag::int64)),
            (std::vector<int64_t>{0, 1}));
}

TEST(OneHot, ScalarAndEmptyIndicesAndDepthZero) {
  ag::Tensor scalar = ag::one_hot(ag::constant(2), 4);
  EXPECT_EQ(scalar.shape(), ag::Shape{4});
  EXPECT_EQ(values<float>(scalar), (std::vector<float>{0, 0, 1, 0}));
  EXPECT_EQ(ag::one_hot(ag::zeros(ag::Shape{0}, ag::int32), 3).shape(), (ag::Shape{0, 3}));
  EXPECT_EQ(ag::one_hot(ag::constant({0, 1}), 0).shape(), (ag::Shape{2, 0}));
}

TEST(OneHot, Errors) {
  ag::Tensor i = ag::constant({0, 1});
  expect_error<ag::InvalidArgumentError>([&] { ag::one_hot(ag::constant({0.0f}), 2); },
                                         "one_hot: indices must be int32 or int64, got float32");
  expect_error<ag::InvalidArgumentError>([&] { ag::one_hot(i, -1); },
                                         "one_hot: depth must be non-negative, got -1");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::one_hot(i, 2, 1, 0, -2); },
      "one_hot: axis -2 is out of range for indices of rank 1; expected -1 or a value in [0, 1]");
  expect_error<ag::InvalidArgumentError>([&] { ag::one_hot(i, 2, 1, 0, 2); },
                                         "one_hot: axis 2 is out of range");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::one_hot(i, 2, 1, 0.0); },
      "one_hot: on_value and off_value must have the same dtype, got int32 and float32");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::one_hot(i, 2, 1.5, 0, -1, ag::int32); },
      "one_hot: on_value is a floating-point scalar, which does not convert to int32 (the dtype "
      "of the result)");
}

// ---- shape, size, rank -----------------------------------------------------------------

TYPED_TEST(Layout, ShapeSizeAndRankOfAnyDtype) {
  ag::Tensor x = this->iota({2, 3, 4});
  ag::Tensor s = ag::shape(x);
  EXPECT_EQ(s.shape(), ag::Shape{3});
  EXPECT_EQ(values<int32_t>(s), (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(values<int32_t>(ag::size(x)), (std::vector<int32_t>{24}));
  EXPECT_EQ(ag::size(x).shape(), ag::Shape{});
  EXPECT_EQ(values<int32_t>(ag::rank(x)), (std::vector<int32_t>{3}));
  EXPECT_EQ(ag::rank(x).shape(), ag::Shape{});
}

TEST(ShapeOps, OutTypeInt64ScalarsAndEmptyTensors) {
  ag::Tensor x = ag::zeros(ag::Shape{5, 0});
  EXPECT_EQ(values<int64_t>(ag::shape(x, ag::int64)), (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(values<int64_t>(ag::size(x, ag::int64)), (std::vector<int64_t>{0}));
  ag::Tensor scalar = ag::constant(1.5);
  EXPECT_EQ(ag::shape(scalar).shape(), ag::Shape{0});
  EXPECT_EQ(ag::size(scalar).item<int32_t>(), 1);
  EXPECT_EQ(ag::rank(scalar).item<int32_t>(), 0);
  expect_error<ag::InvalidArgumentError>([&] { ag::shape(x, ag::float32); },
                                         "shape: out_type must be int32 or int64, got float32");
  expect_error<ag::InvalidArgumentError>([&] { ag::size(x, ag::bool_); },
                                         "size: out_type must be int32 or int64, got bool");
}

// [shape..., size, rank] of x, in one int32 vector.
ag::Tensor describe(const ag::Tensor& x) {
  return ag::concat({ag::shape(x), ag::stack({ag::size(x), ag::rank(x)})}, 0);
}

TEST(ShapeOps, AGraphTracedWithAnUnknownDimReadsTheShapeWhenItRuns) {
  auto f = ag::function(
      [](ag::Tensor x) { return describe(x); },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim, 3}, ag::float32)}});
  EXPECT_EQ(values<int32_t>(f(ag::zeros(ag::Shape{2, 3}))), (std::vector<int32_t>{2, 3, 6, 2}));
  EXPECT_EQ(values<int32_t>(f(ag::zeros(ag::Shape{7, 3}))), (std::vector<int32_t>{7, 3, 21, 2}));
  EXPECT_EQ(values<int32_t>(f(ag::zeros(ag::Shape{0, 3}))), (std::vector<int32_t>{0, 3, 0, 2}));
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(ShapeOps, AGraphTracedWithAStaticShapeGivesTheSameValues) {
  auto f = ag::function([](ag::Tensor x) { return describe(x); });
  EXPECT_EQ(values<int32_t>(f(ag::zeros(ag::Shape{4, 5}, ag::int64))),
            (std::vector<int32_t>{4, 5, 20, 2}));
  // The shape feeds arithmetic and an if like any value.
  auto rows = ag::function([](ag::Tensor x) {
    return ag::cond(
        ag::shape(x)[0] > 2, [&] { return ag::reduce_sum(x, 0); },
        [&] { return ag::reduce_sum(x, 1); });
  });
  EXPECT_EQ(values<int32_t>(rows(ag::constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}))),
            (std::vector<int32_t>{12, 15, 18}));
  EXPECT_EQ(values<int32_t>(rows(ag::constant({{1, 2}, {3, 4}}))), (std::vector<int32_t>{3, 7}));
}

}  // namespace
