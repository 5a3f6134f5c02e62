// The layout and selection ops: tile, reverse, split, repeat, gather_nd, the
// scatters, argsort, sort, top_k and cumprod, against values worked out by
// hand, and their errors, eagerly and in graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag_test::expect_error;
using ag_test::values;

Tensor ints(const std::vector<int32_t>& v, Shape shape) {
  return ag::constant(v, shape);
}

TEST(Tile, RepeatsWholeCopiesAlongEachDim) {
  const Tensor x = ints({1, 2, 3, 4}, {2, 2});
  const Tensor y = ag::tile(x, {2, 3});
  EXPECT_EQ(y.shape(), (Shape{4, 6}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                      1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(ag::tile(x, {0, 1}).shape(), (Shape{0, 2}));
  const Tensor flags = ag::tile(ag::constant({true, false}), {2});
  EXPECT_EQ(values<bool>(flags), (std::vector<bool>{true, false, true, false}));
}

TEST(Tile, GradientSumsTheCopies) {
  const Tensor x = ag::constant(std::vector<float>{1, 2}, Shape{2});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::tile(x, {3}) * ag::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{6});
  const Tensor dx = tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x})[0];
  EXPECT_EQ(values<float>(dx), (std::vector<float>{1 + 3 + 5, 2 + 4 + 6}));
}

TEST(Tile, Errors) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::tile(ag::ones({2, 3}), {2}); },
      "tile: multiples has 1 entries for an input of shape [2,3]; give one per dim");
  expect_error<ag::InvalidArgumentError>([] { ag::tile(ag::ones({2}), {-1}); },
                                         "tile: multiples[0] = -1 is negative");
}

TEST(Reverse, ReversesTheGivenAxes) {
  const Tensor x = ints({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values<int32_t>(ag::reverse(x, {1})), (std::vector<int32_t>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(values<int32_t>(ag::reverse(x, {0})), (std::vector<int32_t>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(values<int32_t>(ag::reverse(x, {-1, 0})), (std::vector<int32_t>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(values<int32_t>(ag::reverse(x, {})), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Reverse, Errors) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::reverse(ag::ones({2, 3}), {2}); },
      "reverse: axis 2 is out of range for a tensor of shape [2,3]; use an axis in [-2, 2)");
  expect_error<ag::InvalidArgumentError>([] { ag::reverse(ag::ones({2, 3}), {1, -1}); },
                                         "reverse: axis -1 (dim 1) is given twice");
}

TEST(Split, EvenPartsAndSizes) {
  const Tensor x = ints({0, 1, 2, 3, 4, 5}, {6});
  const std::vector<Tensor> thirds = ag::split(x, 3);
  ASSERT_EQ(thirds.size(), 3u);
  EXPECT_EQ(values<int32_t>(thirds[1]), (std::vector<int32_t>{2, 3}));
  const std::vector<Tensor> parts = ag::split(x, std::vector<int64_t>{1, -1, 2});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(values<int32_t>(parts[0]), (std::vector<int32_t>{0}));
  EXPECT_EQ(values<int32_t>(parts[1]), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(values<int32_t>(parts[2]), (std::vector<int32_t>{4, 5}));
  const std::vector<Tensor> columns = ag::split(ints({1, 2, 3, 4}, {2, 2}), 2, -1);
  EXPECT_EQ(values<int32_t>(columns[1]), (std::vector<int32_t>{2, 4}));
}

TEST(Split, Errors) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::split(ag::ones({5}), 2); },
      "split: axis 0 of length 5 does not split evenly into 2 parts");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::split(ag::ones({5}), std::vector<int64_t>{2, 2}); },
      "split: size_splits add up to 4, not to the length 5 of axis 0");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::split(ag::ones({5}), std::vector<int64_t>{-1, -1}); },
      "split: size_splits[1] = -1 is negative");
}

TEST(Repeat, RepeatsEachElement) {
  const Tensor x = ints({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(values<int32_t>(ag::repeat(x, 2)), (std::vector<int32_t>{1, 1, 2, 2, 3, 3, 4, 4}));
  const Tensor rows = ag::repeat(x, {2, 1}, 0);
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int32_t>(rows), (std::vector<int32_t>{1, 2, 1, 2, 3, 4}));
  EXPECT_EQ(values<int32_t>(ag::repeat(x, {0, 3}, 1)), (std::vector<int32_t>{2, 2, 2, 4, 4, 4}));
  expect_error<ag::InvalidArgumentError>([&] { ag::repeat(x, {1, 2, 3}, 1); },
                                         "repeat: repeats has 3 entries for an axis of length 2");
}

TEST(GatherNd, GathersSlicesAndElements) {
  const Tensor params = ints({0, 1, 2, 3, 4, 5}, {3, 2});
  EXPECT_EQ(values<int32_t>(ag::gather_nd(params, ints({2, 0}, {2, 1}))),
            (std::vector<int32_t>{4, 5, 0, 1}));
  EXPECT_EQ(values<int32_t>(ag::gather_nd(params, ints({2, 1, 0, 0}, {2, 2}))),
            (std::vector<int32_t>{5, 0}));
  const Tensor scalar = ag::gather_nd(params, ag::constant(std::vector<int64_t>{1, 1}, Shape{2}));
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.item<int32_t>(), 3);
}

TEST(GatherNd, BatchDimsIndexEachBatchOnItsOwn) {
  // params [2, 3]: batch 0 picks its element 2, batch 1 its elements 0 and 1.
  const Tensor params = ints({10, 11, 12, 20, 21, 22}, {2, 3});
  const Tensor picked = ag::gather_nd(params, ints({2, 2, 0, 1}, {2, 2, 1}), 1);
  EXPECT_EQ(picked.shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(picked), (std::vector<int32_t>{12, 12, 20, 21}));
}

TEST(GatherNd, IndexOutOfRangeIsAnErrorEagerlyAndInAGraph) {
  const Tensor params = ag::ones({3, 2});
  const Tensor bad = ints({0, 1, 3, 0}, {2, 2});
  const std::string message =
      "gather_nd: indices[1][0] = 3 is not in [0, 3), the range of dim 0 of shape [3,2]";
  expect_error<ag::InvalidArgumentError>([&] { ag::gather_nd(params, bad); }, message);
  auto traced =
      ag::function([](const Tensor& p, const Tensor& i) { return ag::gather_nd(p, i) * 2.0f; });
  expect_error<ag::InvalidArgumentError>([&] { traced(params, bad); }, message);
  expect_error<ag::InvalidArgumentError>([&] { ag::gather_nd(params, ints({-1, 0}, {1, 2})); },
                                         "gather_nd: indices[0][0] = -1 is not in [0, 3)");
}

TEST(GatherNd, ShapeErrors) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::gather_nd(ag::ones({3, 2}), ints({0, 0, 0}, {1, 3})); },
      "gather_nd: indices of shape [1,3] hold 3 coordinates, more than the 2 dims of params");
  expect_error<ag::InvalidArgumentError>([] { ag::gather_nd(ag::ones({3, 2}), ag::ones({1, 1})); },
                                         "gather_nd: indices must be int32 or int64, got float32");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::gather_nd(ag::ones({3, 2}), ints({0, 0}, {2, 1}), 1); },
      "gather_nd: batch dim 0 of indices (shape [2,1]) is not that of params (shape [3,2])");
}

TEST(TensorScatterNd, UpdateReplacesAndAddAccumulates) {
  const Tensor tensor = ints({1, 1, 1, 1, 1, 1}, {3, 2});
  const Tensor rows = ints({2, 0}, {2, 1});
  const Tensor updates = ints({7, 8, 9, 10}, {2, 2});
  EXPECT_EQ(values<int32_t>(ag::tensor_scatter_nd_update(tensor, rows, updates)),
            (std::vector<int32_t>{9, 10, 1, 1, 7, 8}));
  const Tensor twice = ints({1, 1}, {2, 1});
  EXPECT_EQ(values<int32_t>(ag::tensor_scatter_nd_add(tensor, twice, updates)),
            (std::vector<int32_t>{1, 1, 17, 19, 1, 1}));
  const Tensor element = ints({0, 1}, {1, 2});
  EXPECT_EQ(values<int32_t>(ag::tensor_scatter_nd_update(tensor, element, ints({5}, {1}))),
            (std::vector<int32_t>{1, 5, 1, 1, 1, 1}));
  EXPECT_EQ(values<int32_t>(ag::scatter_nd(twice, updates, {3, 2})),
            (std::vector<int32_t>{0, 0, 16, 18, 0, 0}));
}

TEST(TensorScatterNd, Errors) {
  const Tensor tensor = ag::zeros({3, 2});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::tensor_scatter_nd_update(tensor, ints({0}, {1, 1}), ag::ones({3})); },
      "tensor_scatter_nd_update: updates have shape [3]; indices of shape [1,1] into a tensor of "
      "shape [3,2] take updates of shape [1,2]");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::tensor_scatter_nd_add(tensor, ints({0}, {1, 1}), ag::ones({1, 2}, ag::int32)); },
      "tensor_scatter_nd_add: updates have dtype int32, tensor float32");
  auto traced = ag::function([](const Tensor& t, const Tensor& i, const Tensor& u) {
    return ag::tensor_scatter_nd_add(t, i, u);
  });
  expect_error<ag::InvalidArgumentError>(
      [&] { traced(tensor, ints({0, 5}, {2, 1}), ag::ones({2, 2})); },
      "tensor_scatter_nd_add: indices[1][0] = 5 is not in [0, 3)");
}

TEST(Argsort, StableInBothDirectionsWithNaNAboveNumbers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = ag::constant(std::vector<float>{3, 1, nan, 3, 1}, Shape{5});
  EXPECT_EQ(values<int32_t>(ag::argsort(x)), (std::vector<int32_t>{1, 4, 0, 3, 2}));
  EXPECT_EQ(values<int32_t>(ag::argsort(x, -1, "DESCENDING")),
            (std::vector<int32_t>{2, 0, 3, 1, 4}));
  const Tensor columns = ints({4, 1, 2, 3}, {2, 2});
  EXPECT_EQ(values<int32_t>(ag::argsort(columns, 0)), (std::vector<int32_t>{1, 0, 0, 1}));
  EXPECT_EQ(values<int32_t>(ag::sort(columns, 0, "DESCENDING")),
            (std::vector<int32_t>{4, 3, 2, 1}));
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::sort(x, -1, "UP"); },
      "sort: direction is 'UP'; it must be 'ASCENDING' or 'DESCENDING'");
  expect_error<ag::InvalidArgumentError>([] { ag::argsort(ag::constant({true, false})); },
                                         "argsort: unsupported dtype bool");
}

TEST(TopK, LargestFirstTiesByIndex) {
  const Tensor x = ints({1, 5, 3, 5, 2, 0, 0, 9}, {2, 4});
  const auto [top, indices] = ag::top_k(x, 2);
  EXPECT_EQ(values<int32_t>(top), (std::vector<int32_t>{5, 5, 9, 2}));
  EXPECT_EQ(values<int32_t>(indices), (std::vector<int32_t>{1, 3, 3, 0}));
  EXPECT_EQ(ag::top_k(x, 0).values.shape(), (Shape{2, 0}));
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::top_k(x, 5); },
      "argsort: k = 5 is larger than the length 4 of axis 1 (shape [2,4])");
}

TEST(TopK, TheGradientReachesTheSelectedEntries) {
  const Tensor x = ag::constant(std::vector<float>{1, 4, 2, 3}, Shape{4});
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor top = ag::top_k(x, 2).values;
  const Tensor dx =
      tape.gradient(ag::reduce_sum(top * ag::constant(std::vector<float>{10, 1}, Shape{2})),
                    std::vector<Tensor>{x})[0];
  EXPECT_EQ(values<float>(dx), (std::vector<float>{0, 10, 0, 1}));
}

TEST(Cumprod, RunningProductsInEachMode) {
  const Tensor x = ints({1, 2, 3, 4}, {4});
  EXPECT_EQ(values<int32_t>(ag::cumprod(x)), (std::vector<int32_t>{1, 2, 6, 24}));
  EXPECT_EQ(values<int32_t>(ag::cumprod(x, 0, true)), (std::vector<int32_t>{1, 1, 2, 6}));
  EXPECT_EQ(values<int32_t>(ag::cumprod(x, 0, false, true)), (std::vector<int32_t>{24, 24, 12, 4}));
  EXPECT_EQ(values<int32_t>(ag::cumprod(x, 0, true, true)), (std::vector<int32_t>{24, 12, 4, 1}));
  const Tensor rows = ag::cumprod(ints({1, 2, 3, 4}, {2, 2}), 1);
  EXPECT_EQ(values<int32_t>(rows), (std::vector<int32_t>{1, 2, 3, 12}));
  expect_error<ag::InvalidArgumentError>([] { ag::cumprod(ag::ones({2}), 1); },
                                         "cumprod: axis 1 is out of range");
}

// ---- Dims unknown while tracing ------------------------------------------------------------

ag::FunctionOptions unknown_rows_of_two() {
  return {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim, 2}, ag::float32)}};
}

TEST(SelectionOps, RunOnDimsKnownOnlyWhenTheGraphRuns) {
  auto f = ag::function(
      [](const Tensor& x) {
        const Tensor tiled = ag::tile(x, {2, 1});
        const Tensor flipped = ag::reverse(tiled, {0, 1});
        const auto [top, where] = ag::top_k(flipped, 1);
        return ag::concat({ag::cumprod(flipped, 0), top, ag::cast(where, ag::float32)}, 1);
      },
      unknown_rows_of_two());
  const Tensor x = ag::constant(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  const Tensor y = f(x);
  ASSERT_EQ(y.shape(), (Shape{4, 4}));
  // flipped rows: [4, 3], [2, 1], [4, 3], [2, 1]
  EXPECT_EQ(values<float>(y),
            (std::vector<float>{4, 3, 4, 0, 8, 3, 2, 0, 32, 9, 4, 0, 64, 9, 2, 0}));
}

TEST(SelectionOps, TileGradientWithAnUnknownDim) {
  auto f = ag::function(
      [](const Tensor& x) {
        ag::GradientTape tape;
        tape.watch(x);
        const Tensor y = ag::reduce_sum(ag::tile(x, {3, 2}) * 2.0f);
        return tape.gradient(y, std::vector<Tensor>{x})[0];
      },
      unknown_rows_of_two());
  EXPECT_EQ(values<float>(f(ag::ones({3, 2}))), std::vector<float>(6, 12.0f));
}

}  // namespace
