// ag::layers: Dense, Flatten, Dropout and Sequential against references
// computed by plain loops, eager against traced, gradients against finite
// differences; build on the first call, names and variable paths, the
// errors, initializers, and a Checkpoint of a Sequential.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "layers_test_util.h"

namespace {

using ag_test::error_of;
using layers_test::as_doubles;
using layers_test::expect_near;
using layers_test::expect_same;
using layers_test::Vec;
using layers_test::wavy;
namespace L = ag::layers;

// inputs [rows, in] @ kernel [in, units] + bias, by loops.
Vec dense_reference(const Vec& x, const Vec& kernel, const Vec& bias, int64_t rows, int64_t in,
                    int64_t units) {
  Vec out(static_cast<size_t>(rows * units));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t u = 0; u < units; ++u) {
      double sum = bias.empty() ? 0.0 : bias[size_t(u)];
      for (int64_t i = 0; i < in; ++i) sum += x[size_t(r * in + i)] * kernel[size_t(i * units + u)];
      out[size_t(r * units + u)] = sum;
    }
  }
  return out;
}

TEST(LayersDense, BuildsOnFirstCallAndMatchesLoops) {
  L::Dense dense(3, {.activation = "relu", .bias_initializer = "ones"});
  EXPECT_FALSE(dense.built());
  EXPECT_TRUE(dense.variables().empty());
  ag::Tensor x = wavy({4, 5});
  ag::Tensor y = dense(x);
  ASSERT_TRUE(dense.built());
  ASSERT_EQ(dense.variables().size(), 2u);
  ag::Variable kernel = dense.variables()[0], bias = dense.variables()[1];
  EXPECT_EQ(kernel.shape(), ag::Shape({5, 3}));
  EXPECT_EQ(bias.shape(), ag::Shape({3}));
  EXPECT_EQ(y.shape(), ag::Shape({4, 3}));
  Vec expected =
      dense_reference(as_doubles(x), as_doubles(kernel.read()), as_doubles(bias.read()), 4, 5, 3);
  for (double& v : expected) v = std::max(v, 0.0);
  expect_near(as_doubles(y), expected, 1e-6, "Dense(3, relu)");
}

TEST(LayersDense, AppliesToTheLastAxisOfHigherRanks) {
  L::Dense dense(2, {.use_bias = false});
  ag::Tensor x = wavy({2, 3, 4});
  ag::Tensor y = dense(x);
  ASSERT_EQ(y.shape(), ag::Shape({2, 3, 2}));
  EXPECT_EQ(dense.variables().size(), 1u);
  expect_near(as_doubles(y),
              dense_reference(as_doubles(x), as_doubles(dense.variables()[0].read()), {}, 6, 4, 2),
              1e-6, "Dense on [2, 3, 4]");
}

TEST(LayersDense, GlorotUniformKernelIsSeededAndWithinItsLimit) {
  L::Dense a(30, {.kernel_initializer = {"glorot_uniform", 7}});
  L::Dense b(30, {.kernel_initializer = {"glorot_uniform", 7}});
  L::Dense c(30, {.kernel_initializer = {"glorot_uniform", 8}});
  ag::Tensor x = ag::ones({1, 20});
  a(x), b(x), c(x);
  Vec ka = as_doubles(a.variables()[0].read());
  EXPECT_EQ(ka, as_doubles(b.variables()[0].read())) << "the same seed, the same kernel";
  EXPECT_NE(ka, as_doubles(c.variables()[0].read())) << "another seed, another kernel";
  const double limit = std::sqrt(6.0 / (20 + 30));
  double max_abs = 0, mean = 0;
  for (double v : ka) {
    max_abs = std::max(max_abs, std::abs(v));
    mean += v / double(ka.size());
  }
  EXPECT_LE(max_abs, limit);
  EXPECT_GT(max_abs, 0.9 * limit) << "600 values spread over [-limit, limit]";
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_EQ(as_doubles(a.variables()[1].read()), Vec(30, 0.0)) << "bias_initializer zeros";
}

TEST(LayersDense, EagerAndTracedAgreeWhenTheTraceBuildsTheLayer) {
  L::Dense traced_layer(4, {.activation = "tanh", .kernel_initializer = {"glorot_uniform", 3}});
  L::Dense eager_layer(4, {.activation = "tanh", .kernel_initializer = {"glorot_uniform", 3}});
  auto f = ag::function([&](ag::Tensor x) { return traced_layer(x); });
  ag::Tensor x = wavy({3, 6});
  ag::Tensor traced = f(x);  // the first call, inside the trace, makes the weights
  EXPECT_TRUE(traced_layer.built());
  EXPECT_FALSE(traced_layer.variables()[0].read().is_symbolic());
  expect_same(traced, eager_layer(x), "traced vs eager Dense");
  expect_same(f(x), traced_layer(x), "the traced layer called eagerly");
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(LayersDense, EachLayerPassedToAFunctionBuildsInItsOwnFirstTrace) {
  // A layer is an ag::Module: a function taking one traces per layer, and
  // each layer's first trace may make its variables.
  auto f = ag::function([](L::Dense* layer, ag::Tensor x) { return (*layer)(x); });
  L::Dense a(2, {.kernel_initializer = {"glorot_uniform", 1}});
  L::Dense b(3, {.kernel_initializer = {"glorot_uniform", 2}});
  ag::Tensor x = wavy({2, 4});
  ag::Tensor ya = f(&a, x), yb = f(&b, x);
  EXPECT_EQ(f.tracing_count(), 2);
  expect_same(ya, a(x), "layer a traced vs eager");
  expect_same(yb, b(x), "layer b traced vs eager");
  EXPECT_EQ(yb.shape(), ag::Shape({2, 3}));
}

TEST(LayersDense, ALayerFirstCalledInARetraceSaysToBuildItBefore) {
  L::Dense late(2);
  bool use_late = false;
  auto f = ag::function([&](ag::Tensor x) { return use_late ? late(x) : x * 2.0f; });
  f(wavy({1, 3}));
  use_late = true;
  std::string message = error_of([&] { f(wavy({2, 3})); });  // a new shape: a retrace
  EXPECT_CONTAINS(message, "layer 'dense");
  EXPECT_CONTAINS(message, "(Dense) called at layers_core_test.cpp:");
  EXPECT_CONTAINS(message, "Call the layer once eagerly, or call build(input_shape)");
  EXPECT_FALSE(late.built());
  late.build(ag::Shape({ag::kUnknownDim, 3}));
  EXPECT_EQ(f(wavy({2, 3})).shape(), ag::Shape({2, 2})) << "built before: the retrace works";
}

TEST(LayersDense, GradientsMatchFiniteDifferences) {
  L::Dense dense(3, {.activation = "sigmoid", .bias_initializer = {"uniform", 2}});
  layers_test::check_gradients(dense, wavy({2, 4}, 1.0, 0.3, ag::float64));
  EXPECT_EQ(dense.variables()[0].dtype(), ag::float64) << "weights of the input's dtype";
}

TEST(LayersDense, ErrorsSayWhatWhereAndWhatToDo) {
  L::Dense dense(3);
  std::string rank = error_of([&] { dense(ag::ones({4})); });
  EXPECT_CONTAINS(rank, "ValueError");
  EXPECT_CONTAINS(rank, "(Dense) called at layers_core_test.cpp:");
  EXPECT_CONTAINS(rank, "expected an input of rank 2 or more, but got one of shape (4,)");
  EXPECT_CONTAINS(rank, "reshape it");
  EXPECT_FALSE(dense.built());
  dense(ag::ones({2, 5}));
  std::string features = error_of([&] { dense(ag::ones({2, 6})); });
  EXPECT_CONTAINS(features,
                  "its weights were built for inputs with 5 at axis -1, but got an "
                  "input of shape (2, 6)");
  EXPECT_CONTAINS(features, "use a new layer for these inputs");
  EXPECT_CONTAINS(error_of([] { L::Dense(3, {.activation = "swishy"}); }),
                  "unknown activation 'swishy'");
  EXPECT_CONTAINS(error_of([] { L::Dense(0); }), "units must be positive");
  L::Dense bad_init(2, {.kernel_initializer = "golden"});
  EXPECT_CONTAINS(error_of([&] { bad_init(ag::ones({1, 2})); }), "unknown initializer 'golden'");
}

TEST(LayersNames, AreKerasLikeAndUniqueAndMakeTheVariablePaths) {
  L::Dense a(2), b(2), named(2, {.name = "head"});
  EXPECT_EQ(a.name().substr(0, 5), "dense");
  EXPECT_NE(a.name(), b.name());
  EXPECT_EQ(b.name().substr(0, 6), "dense_") << "a later Dense is numbered";
  named(ag::ones({1, 3}));
  auto paths = named.named_variables();
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0].first, "head/kernel");
  EXPECT_EQ(paths[1].first, "head/bias");
  EXPECT_EQ(paths[0].second.name(), "head/kernel");
}

TEST(LayersFlatten, KeepsTheBatchAndFlattensTheRest) {
  L::Flatten flatten;
  ag::Tensor x = wavy({2, 3, 4, 5});
  ag::Tensor y = flatten(x);
  ASSERT_EQ(y.shape(), ag::Shape({2, 60}));
  EXPECT_EQ(as_doubles(y), as_doubles(x)) << "row-major order kept";
  EXPECT_EQ(flatten(ag::ones({3})).shape(), ag::Shape({3, 1}));
  // channels_first flattens in channels_last order: element (n, c, h, w) lands at h * C + c.
  L::Flatten first("channels_first");
  ag::Tensor z = first(ag::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, {1, 2, 3}));
  EXPECT_EQ(as_doubles(z), Vec({1, 4, 2, 5, 3, 6}));
  // Traced with an unknown batch.
  auto f = ag::function(
      [&](ag::Tensor in) { return flatten(in); },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim, 3, 4}, ag::float32)}});
  ag::Tensor x5 = wavy({5, 3, 4});
  expect_same(f(x5), flatten(x5), "traced vs eager Flatten");
  EXPECT_EQ(f(x5).shape(), ag::Shape({5, 12}));
}

TEST(LayersDropout, HonoursTheTrainingFlag) {
  L::Dropout dropout(0.5, /*seed=*/11);
  ag::Tensor x = ag::ones({1000});
  expect_same(dropout(x), x, "inference: the input itself");
  expect_same(dropout(x, false), x, "training false");
  Vec y = as_doubles(dropout(x, true));
  int kept = 0;
  for (double v : y) {
    EXPECT_TRUE(v == 0.0 || v == 2.0) << v << ": kept elements are scaled by 1 / (1 - rate)";
    kept += v != 0.0;
  }
  EXPECT_GT(kept, 400);
  EXPECT_LT(kept, 600);
  auto f = ag::function([&](ag::Tensor in, bool training) { return dropout(in, training); });
  expect_same(f(x, false), x, "traced inference");
  Vec traced = as_doubles(f(x, true));
  EXPECT_NE(traced, Vec(1000, 1.0)) << "traced training drops elements";
  EXPECT_CONTAINS(error_of([] { L::Dropout(1.0); }), "rate must be in [0, 1)");
  // The gradient is the mask times 1 / (1 - rate): y / x where x is 1.
  ag::GradientTape tape;
  tape.watch(x);
  ag::Tensor dropped = dropout(x, true);
  expect_same(tape.gradient(ag::reduce_sum(dropped), std::vector{x})[0], dropped,
              "the gradient of a dropout");
}

L::Sequential small_mlp(uint64_t seed) {
  L::Sequential model({}, "mlp");
  model.add(L::Dense(
      4, {.activation = "relu", .kernel_initializer = {"glorot_uniform", seed}, .name = "hidden"}));
  model.add(L::Dense(2, {.kernel_initializer = {"glorot_uniform", seed + 1}, .name = "out"}));
  return model;
}

TEST(LayersSequential, CallsItsLayersInOrderAndNamesPathsByNesting) {
  L::Sequential model = small_mlp(5);
  ag::Tensor x = wavy({3, 2});
  ag::Tensor y = model(x);
  auto hidden = model.layers()[0], out = model.layers()[1];
  expect_same(y, (*out)((*hidden)(x)), "Sequential = its layers in order");
  std::vector<std::string> paths;
  for (const auto& [path, v] : model.named_variables()) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{"mlp/hidden/kernel", "mlp/hidden/bias",
                                             "mlp/out/kernel", "mlp/out/bias"}));
  EXPECT_EQ(model.trainable_variables().size(), 4u);
  EXPECT_TRUE(model.non_trainable_variables().empty());
  EXPECT_CONTAINS(error_of([&] { model.add(L::Dense(1)); }), "after the model was built");
  EXPECT_CONTAINS(error_of([] { L::Sequential()(ag::ones({1, 2})); }), "it has no layers");
  L::Sequential twice;
  twice.add(L::Dense(1, {.name = "d"}));
  EXPECT_CONTAINS(error_of([&] { twice.add(L::Dense(1, {.name = "d"})); }),
                  "holds a layer named 'd' already");
}

TEST(LayersSequential, GradientsThroughConvPoolFlattenDenseMatchFiniteDifferences) {
  L::Sequential model;
  model.add(L::Conv2D(2, 2, {.activation = "tanh", .bias_initializer = {"uniform", 1}}));
  model.add(L::MaxPool2D());
  model.add(L::Flatten());
  model.add(L::Dense(2, {.bias_initializer = {"uniform", 2}}));
  layers_test::check_gradients(model, wavy({2, 5, 5, 1}, 1.0, 0.8, ag::float64));
  EXPECT_EQ(model.trainable_variables().size(), 4u);
}

TEST(LayersSequential, BuildMakesEveryLayersWeights) {
  L::Sequential model = small_mlp(9);
  model.build(ag::Shape({ag::kUnknownDim, 7}));
  ASSERT_EQ(model.variables().size(), 4u);
  EXPECT_EQ(model.variables()[0].shape(), ag::Shape({7, 4}));
  EXPECT_EQ(model.variables()[2].shape(), ag::Shape({4, 2}));
}

TEST(LayersCheckpoint, SavesAndRestoresASequential) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "ag_layers_checkpoint_test").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  L::Sequential model = small_mlp(21);
  ag::train::Checkpoint unbuilt;
  EXPECT_CONTAINS(error_of([&] { unbuilt.track("model", model); }),
                  "layer 'mlp' has no variables yet");
  ag::Tensor x = wavy({2, 3});
  ag::Tensor before = model(x);
  ag::train::Checkpoint ckpt;
  ckpt.track("model", model);
  std::string path = ckpt.save(dir + "/ckpt");
  for (ag::Variable v : model.variables()) v.assign(ag::fill(v.shape(), 0.5));
  EXPECT_NE(as_doubles(model(x)), as_doubles(before));
  ckpt.restore(path);
  expect_same(model(x), before, "restored model");
  // Another model of the same structure and names reads the same file.
  L::Sequential other = small_mlp(99);
  other(x);
  ag::train::Checkpoint reader;
  reader.track("model", other);
  reader.restore(path);
  expect_same(other(x), before, "another model restored from the file");
  // Variables are saved by their place in the model, not by the layers'
  // names, which count the layers made so far (Keras's "dense_1"): a model
  // of the same structure under other names reads the file too.
  L::Sequential renamed({}, "mlp2");
  renamed.add(L::Dense(4, {.activation = "relu", .name = "first"}))
      .add(L::Dense(2, {.name = "second"}));
  renamed(x);
  ag::train::Checkpoint by_place;
  by_place.track("model", renamed);
  by_place.restore(path);
  expect_same(renamed(x), before, "a model of other layer names restored from the file");
  // Another structure does not fit: the paths are named in the error.
  L::Sequential deeper({}, "mlp3");
  deeper.add(L::Dense(4)).add(L::Dense(4)).add(L::Dense(2));
  deeper(x);
  ag::train::Checkpoint wrong;
  wrong.track("model", deeper);
  const std::string error = error_of([&] { wrong.restore(path); });
  EXPECT_CONTAINS(error,
                  "tracked here but not in the file:\n    'model/layer_with_weights-2/kernel'");
  EXPECT_CONTAINS(error, "model/layer_with_weights-1/kernel' is float32 (4, 2) in the file");
  std::filesystem::remove_all(dir);
}

}  // namespace
