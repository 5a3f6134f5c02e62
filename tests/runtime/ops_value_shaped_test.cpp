// The ops whose output's length depends on the values:
// non_max_suppression (tf.image.non_max_suppression), unique (tf.unique) and
// unique_first_indices, against results worked out by hand, eagerly and in
// a graph, and their errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag_test::expect_error;
using ag_test::values;

// Box 3 is box 0 with its corners swapped; boxes 1 and 4 overlap boxes 0
// and 2 with an IoU of 0.9 / 1.1.
Tensor boxes() {
  return ag::constant(std::vector<float>{0, 0, 1, 1, 0, 0.1f,  1, 1.1f,  0, 10,  1, 11,
                                         1, 1, 0, 0, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101},
                      Shape{6, 4});
}

Tensor scores() {
  return ag::constant(std::vector<float>{0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}, Shape{6});
}

TEST(NonMaxSuppression, PicksByScoreSkippingBoxesThatOverlapAPick) {
  EXPECT_EQ(values<int32_t>(ag::non_max_suppression(boxes(), scores(), 10)),
            (std::vector<int32_t>{3, 2, 5}));
  EXPECT_EQ(values<int32_t>(ag::non_max_suppression(boxes(), scores(), 2)),
            (std::vector<int32_t>{3, 2}));
  // Above an IoU of 0.818 only box 0, box 3 itself, is too close.
  EXPECT_EQ(values<int32_t>(ag::non_max_suppression(boxes(), scores(), 10, 0.85)),
            (std::vector<int32_t>{3, 1, 2, 4, 5}));
  EXPECT_EQ(values<int32_t>(ag::non_max_suppression(boxes(), scores(), 10, 0.5, 0.55)),
            (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(ag::non_max_suppression(boxes(), scores(), 0).shape(), (Shape{0}));
}

TEST(NonMaxSuppression, EqualScoresGoByIndex) {
  const Tensor same = ag::constant(std::vector<double>{1, 1, 1}, Shape{3});
  const Tensor far =
      ag::constant(std::vector<double>{0, 0, 1, 1, 0, 5, 1, 6, 0, 9, 1, 10}, Shape{3, 4});
  EXPECT_EQ(values<int32_t>(ag::non_max_suppression(far, same, 3)),
            (std::vector<int32_t>{0, 1, 2}));
}

TEST(NonMaxSuppression, InAGraphItsLengthIsKnownWhenItRuns) {
  auto f = ag::function(
      [](const Tensor& b, const Tensor& s) { return ag::non_max_suppression(b, s, 10); });
  auto concrete = f.get_concrete_function(ag::TensorSpec(Shape{6, 4}, ag::float32),
                                          ag::TensorSpec(Shape{6}, ag::float32));
  const std::string type = concrete.function_type();
  EXPECT_NE(type.find("-> TensorSpec(shape=(None,), dtype=int32)"), std::string::npos) << type;
  EXPECT_EQ(values<int32_t>(f(boxes(), scores())), (std::vector<int32_t>{3, 2, 5}));
}

TEST(NonMaxSuppression, BoxesAndScoresOfTheWrongShapeOrTypeAreErrors) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::non_max_suppression(boxes(), ag::constant({1.0f, 2.0f}), 3); },
      "non_max_suppression: scores must have shape [num_boxes] = [6], got [2]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::non_max_suppression(ag::reshape(boxes(), {8, 3}), scores(), 3); },
      "non_max_suppression: boxes must have shape [num_boxes, 4], got [8,3]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::non_max_suppression(ag::cast(boxes(), ag::int32), scores(), 3); },
      "non_max_suppression: boxes must be float32 or float64, got int32");
  auto traced =
      ag::function([](const Tensor& b) { return ag::non_max_suppression(b, scores(), 3); });
  expect_error<ag::InvalidArgumentError>(
      [&] { traced(ag::reshape(boxes(), {8, 3})); },
      "non_max_suppression: boxes must have shape [num_boxes, 4], got [8,3]");
}

TEST(Unique, GivesTheValuesInFirstOrderAndEachElementsSlot) {
  const Tensor x = ag::constant({1, 1, 2, 4, 4, 4, 7, 8, 8});
  const auto [y, idx] = ag::unique(x);
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{1, 2, 4, 7, 8}));
  EXPECT_EQ(values<int32_t>(idx), (std::vector<int32_t>{0, 0, 1, 2, 2, 2, 3, 4, 4}));
  const auto shuffled =
      ag::unique(ag::cast(ag::constant({3.5f, -1.0f, 3.5f, 0.0f}), ag::float64), ag::int64);
  EXPECT_EQ(values<double>(shuffled.y), (std::vector<double>{3.5, -1, 0}));
  EXPECT_EQ(values<int64_t>(shuffled.idx), (std::vector<int64_t>{0, 1, 0, 2}));
}

TEST(Unique, InAGraphItsLengthIsKnownWhenItRuns) {
  auto f = ag::function([](const Tensor& x) { return ag::unique(x).y; });
  const std::string type =
      f.get_concrete_function(ag::TensorSpec(Shape{4}, ag::int32)).function_type();
  EXPECT_NE(type.find("-> TensorSpec(shape=(None,), dtype=int32)"), std::string::npos) << type;
  EXPECT_EQ(values<int32_t>(f(ag::constant({5, 5, 6, 5}))), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(values<int32_t>(f(ag::constant({1, 2, 3, 4}))), (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(Unique, FirstIndicesSortTheSlicesAlongAnAxis) {
  const Tensor x = ag::constant({{2, 1}, {1, 3}, {2, 1}, {1, 2}});
  EXPECT_EQ(values<int64_t>(ag::unique_first_indices(x, 0, true)), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(values<int64_t>(ag::unique_first_indices(x, 0, false)),
            (std::vector<int64_t>{0, 1, 3}));
  // Flattened: 2 1 1 3 2 1 1 2.
  EXPECT_EQ(values<int64_t>(ag::unique_first_indices(x, std::nullopt, true)),
            (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(values<int64_t>(ag::unique_first_indices(x, 1, false)), (std::vector<int64_t>{0, 1}));
}

TEST(Unique, ErrorsNameTheOpAndTheArgument) {
  expect_error<ag::InvalidArgumentError>([] { ag::unique(ag::constant({{1, 2}})); },
                                         "unique: x must be 1-D, got shape [1,2]");
  expect_error<ag::InvalidArgumentError>([] { ag::unique_first_indices(ag::constant({1, 2}), 1); },
                                         "unique_first_indices");
}

}  // namespace
