// reshape, broadcast_to, tile and fill by shapes given as tensors
// (tf.reshape(x, tf.shape(y)) and its kin): eagerly, and in a graph where
// the shape is computed from a dim unknown while tracing, at two batch sizes,
// against values worked out by hand; and their errors, the same eagerly and
// when the graph runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag::TensorSpec;
using ag_test::expect_error;
using ag_test::values;

// 0, 1, ..., n - 1 as a float32 [rows, cols].
Tensor counting(int64_t rows, int64_t cols) {
  std::vector<float> v(size_t(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return ag::constant(v, Shape{rows, cols});
}

// x [batch, 4] as [batch, 2, 2], a shape whose first entry is x's batch.
Tensor batch_by_two_by_two(const Tensor& x) {
  const Tensor batch = ag::slice(ag::shape(x, ag::int64), {0}, {1});
  return ag::reshape(x, ag::concat({batch, ag::constant(std::vector<int64_t>{2, 2}, {2})}, 0));
}

TEST(DynamicReshape, ReadsTheShapeWhenTheGraphRuns) {
  auto f = ag::function(batch_by_two_by_two);
  auto concrete = f.get_concrete_function(TensorSpec({ag::kUnknownDim, 4}, ag::float32));
  const std::string type = concrete.function_type();
  EXPECT_NE(type.find("-> TensorSpec(shape=(None, None, None), dtype=float32)"), std::string::npos)
      << type;
  const std::vector<std::string> ops = concrete.graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "dynamic_reshape"), ops.end());
  for (int64_t batch : {3, 5}) {
    const Tensor x = counting(batch, 4);
    const Tensor graph = f(x), eager = batch_by_two_by_two(x);
    EXPECT_EQ(graph.shape(), (Shape{batch, 2, 2}));
    EXPECT_EQ(eager.shape(), (Shape{batch, 2, 2}));
    EXPECT_EQ(values<float>(graph), values<float>(x));
    EXPECT_EQ(values<float>(eager), values<float>(x));
  }
}

// Strings move as numbers do: by a shape computed when the graph runs too.
TEST(DynamicReshape, MovesStringsAsTheStaticOpsDo) {
  auto f = ag::function(batch_by_two_by_two);
  f.get_concrete_function(TensorSpec({ag::kUnknownDim, 4}, ag::string));
  const std::vector<std::string> words = {"a", "bb", "", "ccc", "d", "e", "f", "g"};
  const Tensor x = ag::constant(words, Shape{2, 4});
  const Tensor graph = f(x), eager = batch_by_two_by_two(x);
  EXPECT_EQ(graph.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(ag::strings::to_vector(graph), words);
  EXPECT_EQ(ag::strings::to_vector(eager), words);
}

TEST(DynamicReshape, AShapeKnownWhileTracingIsTheStaticReshape) {
  auto f = ag::function([](const Tensor& x) { return ag::reshape(x, ag::constant({3, -1})); });
  auto concrete = f.get_concrete_function(TensorSpec({2, 3}, ag::float32));
  const std::vector<std::string> ops = concrete.graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "reshape"), ops.end());
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "dynamic_reshape"), ops.end());
  EXPECT_EQ(f(counting(2, 3)).shape(), (Shape{3, 2}));
}

// x [batch, 1] repeated to [batch, 3]: a tf.broadcast_to and a tf.tile by
// shapes computed from the batch, and tf.fill of that shape.
TEST(DynamicBroadcastToTileAndFill, RepeatToShapesComputedWhenTheGraphRuns) {
  auto repeated = [](const Tensor& x) {
    const Tensor batch = ag::slice(ag::shape(x), {0}, {1});
    const Tensor shape = ag::concat({batch, ag::constant({3})}, 0);
    return std::vector<Tensor>{ag::broadcast_to(x, shape), ag::tile(x, ag::constant({1, 3})),
                               ag::fill(shape, Tensor(2.5f)),
                               ag::tile(x, ag::concat({ag::constant({1}), batch}, 0))};
  };
  auto f = ag::function(repeated);
  f.get_concrete_function(TensorSpec({ag::kUnknownDim, 1}, ag::float32));
  for (int64_t batch : {2, 4}) {
    const Tensor x = counting(batch, 1);
    const std::vector<Tensor> graph = f(x), eager = repeated(x);
    std::vector<float> rows, filled(size_t(batch * 3), 2.5f), tiled;
    for (int64_t i = 0; i < batch; ++i) {
      rows.insert(rows.end(), 3, float(i));
      tiled.insert(tiled.end(), size_t(batch), float(i));
    }
    for (const std::vector<Tensor>& out : {graph, eager}) {
      EXPECT_EQ(out[0].shape(), (Shape{batch, 3}));
      EXPECT_EQ(values<float>(out[0]), rows);
      EXPECT_EQ(values<float>(out[1]), rows);
      EXPECT_EQ(values<float>(out[2]), filled);
      EXPECT_EQ(out[3].shape(), (Shape{batch, batch}));
      EXPECT_EQ(values<float>(out[3]), tiled);
    }
  }
}

// A shape that does not fit x: the same error eagerly and when the graph runs.
TEST(DynamicReshape, AShapeThatDoesNotFitIsTheSameErrorEagerlyAndInAGraph) {
  auto wrong = [](const Tensor& x) {
    return ag::reshape(x, ag::shape(x, ag::int64) + ag::constant(std::vector<int64_t>{1, 0}, {2}));
  };
  const std::string text =
      "reshape: cannot reshape a tensor of shape [2,3] (6 elements) to shape [3,3]";
  expect_error<ag::InvalidArgumentError>([&] { wrong(counting(2, 3)); }, text);
  auto f = ag::function(wrong);
  f.get_concrete_function(TensorSpec({ag::kUnknownDim, 3}, ag::float32));
  expect_error<ag::InvalidArgumentError>([&] { f(counting(2, 3)); }, text);
}

TEST(DynamicShapeErrors, ShapesMustBeIntegerVectorsWithoutNegativeDims) {
  const Tensor x = counting(2, 3);
  expect_error<ag::InvalidArgumentError>([&] { ag::reshape(x, ag::constant({3.0f, 2.0f})); },
                                         "reshape: shape must be int32 or int64, got float32");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::broadcast_to(x, ag::constant({{2, 3}})); },
      "broadcast_to: shape must be a 1-D tensor whose length is known while tracing, "
      "got shape [1,2]");
  auto negative = ag::function(
      [](const Tensor& x) { return ag::broadcast_to(x, ag::shape(x) - ag::constant({3, 0})); });
  negative.get_concrete_function(TensorSpec({ag::kUnknownDim, 3}, ag::float32));
  expect_error<ag::InvalidArgumentError>([&] { negative(x); },
                                         "broadcast_to: shape[0] = -1 is negative");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::tile(x, ag::constant({2})); },
      "tile: multiples has 1 entries for an input of shape [2,3]");
  expect_error<ag::InvalidArgumentError>([&] { ag::fill(ag::constant({2}), x); },
                                         "fill: value must be a scalar, got shape [2,3]");
}

}  // namespace
