// The collectives across ranks, run under mpirun (-np 2 and -np 3): each
// eagerly and in a traced ag::function against values computed here; the
// gradients of traced functions through them against finite differences of
// the total loss (the sum of the ranks' losses); and N ranks training on
// 1/N of the batch each against one model trained on the whole batch (an
// MLP of ops, and Keras layers on a sharded dataset in a staged loop).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>
#include <ag/distribute.h>

namespace {

using ag::DType;
using ag::Shape;
using ag::Tensor;
using ag::distribute::ReduceOp;
using Tensors = std::vector<Tensor>;

int rank() {
  return ag::distribute::rank();
}
int ranks() {
  return ag::distribute::size();
}

// Rank r's element i: small integers, exact in every dtype, whose largest
// and smallest come from different ranks along the tensor.
double value_of(int r, int64_t i) {
  return double(((i + 1) * (r + 2)) % 7) - double(r);
}

std::vector<double> values_of(int r, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(value_of(r, i));
  return v;
}

Tensor tensor_of(const std::vector<double>& values, const Shape& shape, DType dtype) {
  return ag::cast(ag::constant(values, shape), dtype);
}

std::vector<double> combined(ReduceOp op, int64_t n) {
  std::vector<double> out = values_of(0, n);
  for (int r = 1; r < ranks(); ++r) {
    for (int64_t i = 0; i < n; ++i) {
      const double v = value_of(r, i);
      double& o = out[size_t(i)];
      o = op == ReduceOp::Max ? std::max(o, v) : op == ReduceOp::Min ? std::min(o, v) : o + v;
    }
  }
  if (op == ReduceOp::Mean)
    for (double& o : out) o /= ranks();
  return out;
}

// `f` eagerly and traced give `expected` (as float64) and x's dtype.
void expect_both_modes(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                       const std::vector<double>& expected, const Shape& shape,
                       const std::string& what) {
  auto traced = ag::function(f);
  for (const Tensor& result : {f(x), traced(x), traced(x)}) {
    EXPECT_EQ(result.dtype(), x.dtype()) << what;
    EXPECT_EQ(result.shape(), shape) << what;
    // Exact but for a mean's division (by 3: float32 rounds it).
    const std::vector<double> got = ag::cast(result, ag::float64).to_vector<double>();
    ASSERT_EQ(got.size(), expected.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], expected[i], 1e-6 * std::abs(expected[i])) << what << " element " << i;
  }
}

const DType kDtypes[] = {ag::float32, ag::float64, ag::int32, ag::int64};

TEST(Collectives, AllReduceSumMeanMaxMin) {
  for (DType dtype : kDtypes) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
      if (op == ReduceOp::Mean && !ag::is_floating(dtype)) continue;
      const Tensor x = tensor_of(values_of(rank(), 6), {2, 3}, dtype);
      expect_both_modes([op](const Tensor& t) { return ag::distribute::all_reduce(t, op); }, x,
                        combined(op, 6), {2, 3},
                        std::string(ag::distribute::reduce_op_name(op)) + " of " +
                            std::string(ag::dtype_name(dtype)));
    }
  }
}

TEST(Collectives, BroadcastFromEachEnd) {
  for (DType dtype : kDtypes) {
    for (int root : {0, ranks() - 1}) {
      const Tensor x = tensor_of(values_of(rank(), 5), {5}, dtype);
      expect_both_modes([root](const Tensor& t) { return ag::distribute::broadcast(t, root); }, x,
                        values_of(root, 5), {5}, "root " + std::to_string(root));
    }
  }
}

TEST(Collectives, AllGatherConcatenatesInRankOrder) {
  for (DType dtype : kDtypes) {
    const Tensor x = tensor_of(values_of(rank(), 6), {2, 3}, dtype);
    std::vector<double> expected;
    for (int r = 0; r < ranks(); ++r) {
      const std::vector<double> part = values_of(r, 6);
      expected.insert(expected.end(), part.begin(), part.end());
    }
    expect_both_modes([](const Tensor& t) { return ag::distribute::all_gather(t); }, x, expected,
                      {2 * ranks(), 3}, std::string(ag::dtype_name(dtype)));
  }
}

TEST(Collectives, ReduceScatterGivesEachRankItsRows) {
  for (DType dtype : kDtypes) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean}) {
      if (op == ReduceOp::Mean && !ag::is_floating(dtype)) continue;
      const int64_t n = 4 * ranks();  // rows of 2: two rows per rank
      const Tensor x = tensor_of(values_of(rank(), n), {2 * ranks(), 2}, dtype);
      const std::vector<double> all = combined(op, n);
      const std::vector<double> mine(all.begin() + 4 * rank(), all.begin() + 4 * (rank() + 1));
      expect_both_modes([op](const Tensor& t) { return ag::distribute::reduce_scatter(t, op); }, x,
                        mine, {2, 2}, std::string(ag::dtype_name(dtype)));
    }
  }
}

// ---- Gradients against finite differences ---------------------------------------------

// A float64 tensor (ag::constant makes C++ doubles float32, as TensorFlow).
Tensor float64_tensor(const std::vector<double>& values, const Shape& shape) {
  Tensor t = ag::empty(shape, ag::float64);
  std::copy(values.begin(), values.end(), t.mutable_data<double>());
  return t;
}

// Rank r's loss: sum(w_r * y) of y = f(x_r), with weights that differ by rank.
Tensor local_loss(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  const Tensor y = f(x);
  const Tensor w = float64_tensor(values_of(rank() + 3, y.num_elements()), y.shape()) * 0.25 + 1.0;
  return ag::reduce_sum(y * w);
}

// The total loss, summed over the ranks, with element k of rank p's x moved
// by h: every rank evaluates it.
double total_loss(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, int p, int64_t k,
                  double h) {
  std::vector<double> moved = x.to_vector<double>();
  if (rank() == p) moved[size_t(k)] += h;
  const Tensor mine = local_loss(f, float64_tensor(moved, x.shape()));
  return ag::distribute::all_reduce(mine, ReduceOp::Sum).item<double>();
}

void expect_gradient_matches_differences(const std::function<Tensor(const Tensor&)>& f,
                                         const std::string& what) {
  // Distinct values on every rank, so that max and min have no ties.
  std::vector<double> start;
  for (int64_t i = 0; i < 6; ++i) start.push_back(0.3 * value_of(rank(), i) + 0.01 * rank() + 0.1);
  const Tensor x = float64_tensor(start, {2, 3});
  auto traced = ag::function([&f](const Tensor& t) {
    ag::GradientTape tape;
    tape.watch(t);
    return tape.gradient(local_loss(f, t), Tensors{t})[0];
  });
  const std::vector<double> gradient = traced(x).to_vector<double>();
  const double h = 1e-6;
  for (int p = 0; p < ranks(); ++p) {
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      const double difference = (total_loss(f, x, p, k, h) - total_loss(f, x, p, k, -h)) / (2 * h);
      if (rank() == p) {
        EXPECT_NEAR(gradient[size_t(k)], difference, 1e-6 * (1 + std::abs(difference)))
            << what << ": rank " << p << " element " << k;
      }
    }
  }
}

TEST(CollectiveGradients, TracedMatchFiniteDifferencesOfTheTotalLoss) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
    expect_gradient_matches_differences(
        [op](const Tensor& x) { return ag::distribute::all_reduce(x * x, op); },
        "all_reduce " + std::string(ag::distribute::reduce_op_name(op)));
  }
  expect_gradient_matches_differences(
      [](const Tensor& x) { return ag::square(ag::distribute::broadcast(x, ranks() - 1)); },
      "broadcast");
  expect_gradient_matches_differences(
      [](const Tensor& x) { return ag::tanh(ag::distribute::all_gather(x)); }, "all_gather");
  expect_gradient_matches_differences(
      [](const Tensor& x) {
        const Tensor rows = ag::tile(x, {ranks(), 1});
        return ag::square(ag::distribute::reduce_scatter(rows, ReduceOp::Mean));
      },
      "reduce_scatter");
}

// ---- Training: N ranks on 1/N of the batch each, against one on all of it -------------

constexpr int64_t kBatch = 12;  // divides by 2 and 3
constexpr int64_t kFeatures = 3, kHidden = 8;

struct Mlp {
  std::vector<ag::Variable> variables;
  explicit Mlp(const Tensors& initial) {
    for (const Tensor& t : initial) variables.emplace_back(t);
  }
  Tensor loss(const Tensor& x, const Tensor& y) const {
    const Tensor h = ag::tanh(ag::matmul(x, variables[0].read()) + variables[1].read());
    const Tensor prediction = ag::matmul(h, variables[2].read()) + variables[3].read();
    return ag::reduce_mean(ag::square(prediction - y));
  }
  Tensors values() const {
    Tensors out;
    for (const ag::Variable& v : variables) out.push_back(v.read());
    return out;
  }
};

// Deterministic values in [-scale, scale), different for each seed.
Tensor pseudo_random(const Shape& shape, double seed, double scale) {
  std::vector<double> values;
  for (int64_t i = 0; i < shape.num_elements(); ++i)
    values.push_back(scale * std::sin(double(i) * 12.9898 + seed * 78.233));
  return ag::constant(values, shape);
}

Tensors initial_weights(double seed) {
  return {pseudo_random({kFeatures, kHidden}, seed, 0.8), pseudo_random({kHidden}, seed + 1, 0.1),
          pseudo_random({kHidden, 1}, seed + 2, 0.5), ag::zeros({1})};
}

// The largest difference relative to 1 + |reference|.
double largest_difference(const Tensors& a, const Tensors& reference) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<float> x = a[i].to_vector<float>(), r = reference[i].to_vector<float>();
    for (size_t k = 0; k < x.size(); ++k)
      worst = std::max(worst, double(std::abs(x[k] - r[k])) / (1 + std::abs(double(r[k]))));
  }
  return worst;
}

// docs/distributed.md quotes it: float32 sums in another order, 20 steps.
constexpr double kTrainingTolerance = 1e-5;

// How the shards' step combines its gradients: apply_gradients after the
// backward, or minimize with the all_reduces overlapping the backward.
enum class Combine { AfterBackward, Overlapped };

void expect_training_matches_one_process(ag::optimizers::Optimizer& local_optimizer,
                                         ag::optimizers::Optimizer& shard_optimizer, bool traced,
                                         Combine combine, const std::string& what) {
  const Tensor x = pseudo_random({kBatch, kFeatures}, 11, 1.0);
  const Tensor y = ag::sin(ag::reduce_sum(x, {1}, true) * 2.0f);
  const int64_t rows = kBatch / ranks();
  const Tensor x_shard = ag::slice(x, {rank() * rows, 0}, {rows, kFeatures});
  const Tensor y_shard = ag::slice(y, {rank() * rows, 0}, {rows, 1});

  Mlp shard_model(initial_weights(100 + 10 * rank()));  // differs by rank
  ag::distribute::broadcast_variables(shard_model.variables, 0);
  EXPECT_EQ(largest_difference(shard_model.values(), initial_weights(100)), 0.0)
      << what << ": broadcast_variables";
  Mlp whole_model(initial_weights(100));

  ag::distribute::DistributedOptimizer distributed(shard_optimizer,
                                                   {.fusion_threshold_bytes = 128});
  auto step = [&](const Tensor& xs, const Tensor& ys) {
    ag::GradientTape tape;
    const Tensor loss = shard_model.loss(xs, ys);
    if (combine == Combine::Overlapped)
      distributed.minimize(tape, loss, shard_model.variables);
    else
      distributed.apply_gradients(tape.gradient(loss, shard_model.variables),
                                  shard_model.variables);
    return loss;
  };
  auto traced_step = ag::function(step);
  for (int i = 0; i < 20; ++i) {
    ag::GradientTape tape;
    const Tensor loss = whole_model.loss(x, y);
    local_optimizer.apply_gradients(tape.gradient(loss, whole_model.variables),
                                    whole_model.variables);
    traced ? traced_step(x_shard, y_shard) : step(x_shard, y_shard);
  }
  const double difference = largest_difference(shard_model.values(), whole_model.values());
  EXPECT_LE(difference, kTrainingTolerance) << what;
  EXPECT_GT(largest_difference(whole_model.values(), initial_weights(100)), 1e-3)
      << what << ": the weights moved";
  if (rank() == 0) std::printf("%s: largest relative difference %.3g\n", what.c_str(), difference);
}

TEST(DistributedTraining, ShardsMatchOneProcessOnTheWholeBatch) {
  ag::optimizers::SGD sgd_local({.learning_rate = 0.1, .momentum = 0.9});
  ag::optimizers::SGD sgd_shards({.learning_rate = 0.1, .momentum = 0.9});
  expect_training_matches_one_process(sgd_local, sgd_shards, false, Combine::AfterBackward,
                                      "SGD with momentum, eager");
  ag::optimizers::Adam adam_local({.learning_rate = 0.01});
  ag::optimizers::Adam adam_shards({.learning_rate = 0.01});
  expect_training_matches_one_process(adam_local, adam_shards, true, Combine::AfterBackward,
                                      "Adam, traced step");
}

TEST(DistributedTraining, OverlappedShardsMatchOneProcessOnTheWholeBatch) {
  ag::optimizers::SGD sgd_local({.learning_rate = 0.1, .momentum = 0.9});
  ag::optimizers::SGD sgd_shards({.learning_rate = 0.1, .momentum = 0.9});
  expect_training_matches_one_process(sgd_local, sgd_shards, false, Combine::Overlapped,
                                      "SGD with momentum, eager, overlapped");
  ag::optimizers::Adam adam_local({.learning_rate = 0.01});
  ag::optimizers::Adam adam_shards({.learning_rate = 0.01});
  expect_training_matches_one_process(adam_local, adam_shards, true, Combine::Overlapped,
                                      "Adam, traced step, minimize");
}

// ---- Keras layers on a sharded dataset, an epoch as one staged loop ----------------

using Batches = ag::data::Dataset<std::tuple<Tensor, Tensor>>;

constexpr int64_t kExamples = 48, kGlobalBatch = 12, kClasses = 3;

// A 4-8-3 classifier; its initial weights come from `seed`.
ag::layers::Sequential classifier(uint64_t seed) {
  ag::layers::Sequential model;
  model.add(
      ag::layers::Dense(8, {.activation = "tanh", .kernel_initializer = {"glorot_uniform", seed}}));
  model.add(ag::layers::Dense(kClasses, {.kernel_initializer = {"glorot_uniform", seed + 1}}));
  model.build({ag::kUnknownDim, 4});
  return model;
}

Tensors values_of(const std::vector<ag::Variable>& variables) {
  Tensors out;
  for (const ag::Variable& v : variables) out.push_back(v.read());
  return out;
}

// The examples shuffled the same way on every rank (one seed, anew on each
// pass), then every ranks()-th of them, batched: a rank's k-th batch is its
// share of the whole data set's k-th batch of kGlobalBatch.
Batches examples(int64_t shards, int64_t index) {
  const Tensor x = pseudo_random({kExamples, 4}, 21, 1.0);
  const Tensor labels = ag::cast(ag::abs(pseudo_random({kExamples}, 22, 2.99)), ag::int32);
  return ag::data::from_tensor_slices(std::tuple{x, labels})
      .shuffle(kExamples, /*seed=*/5)
      .shard(shards, index)
      .batch(kGlobalBatch / shards);
}

// The lines of staged_epoch's apply_gradients and all_reduce, which a
// collective's error names.
int epoch_step_line = 0, epoch_reduce_line = 0;

// One pass over a rank's dataset as one staged loop, a step per batch
// (softmax cross-entropy, gradients combined by `distributed`): the mean over
// the ranks of the sum of the batches' losses.
auto staged_epoch(ag::layers::Sequential& model,
                  ag::distribute::DistributedOptimizer& distributed) {
  return ag::function(
      [&model, &distributed](const Batches& dataset) {
        const ag::losses::SparseCategoricalCrossentropy cross_entropy(/*from_logits=*/true);
        Tensor total = ag::constant(0.0f);
        ag::for_stmt(
            dataset, ag::no_extra_test,
            [&](std::tuple<Tensor, Tensor> batch) {
              auto [x, labels] = batch;
              ag::GradientTape tape;
              const Tensor loss = cross_entropy(labels, model(x, true));
              const std::vector<ag::Variable> variables = model.trainable_variables();
              epoch_step_line = __LINE__ + 1;
              distributed.apply_gradients(tape.gradient(loss, variables), variables);
              total = total + loss;
            },
            ag::state({"total"}, total));
        epoch_reduce_line = __LINE__ + 1;
        return ag::distribute::all_reduce(total, ReduceOp::Mean);
      },
      {.name = "epoch"});
}

TEST(DistributedTraining, LayersOnDatasetShardsMatchOneProcessOnTheWholeBatches) {
  ag::layers::Sequential whole = classifier(40);
  ag::layers::Sequential shard = classifier(40 + 10 * uint64_t(rank()));  // differs by rank
  ag::distribute::broadcast_variables(shard.variables(), 0);
  EXPECT_EQ(largest_difference(values_of(shard.variables()), values_of(whole.variables())), 0.0);

  ag::losses::SparseCategoricalCrossentropy cross_entropy(/*from_logits=*/true);
  ag::optimizers::Adam adam_whole({.learning_rate = 0.05}), adam_shard({.learning_rate = 0.05});
  ag::distribute::DistributedOptimizer distributed(adam_shard);
  auto epoch = staged_epoch(shard, distributed);
  const Batches shards = examples(ranks(), rank()), batches = examples(1, 0);
  for (int pass = 0; pass < 5; ++pass) {
    Tensor whole_total = ag::constant(0.0f);
    for (const auto& [x, labels] : batches) {
      ag::GradientTape tape;
      const Tensor loss = cross_entropy(labels, whole(x, true));
      const std::vector<ag::Variable> variables = whole.trainable_variables();
      adam_whole.apply_gradients(tape.gradient(loss, variables), variables);
      whole_total = whole_total + loss;
    }
    const Tensor shard_total = epoch(shards);
    EXPECT_NEAR(shard_total.item<float>(), whole_total.item<float>(), 1e-5) << "pass " << pass;
  }
  EXPECT_EQ(epoch.tracing_count(), 1);
  const double difference =
      largest_difference(values_of(shard.variables()), values_of(whole.variables()));
  EXPECT_LE(difference, kTrainingTolerance);
  EXPECT_GT(largest_difference(values_of(whole.variables()), values_of(classifier(40).variables())),
            1e-2)
      << "the weights moved";
  // Every rank holds the same weights, bit for bit.
  for (const Tensor& w : values_of(shard.variables()))
    EXPECT_EQ(ag::reduce_max(ag::abs(w - ag::distribute::broadcast(w, 0))).item<float>(), 0.0f);
  if (rank() == 0)
    std::printf("layers on dataset shards: largest relative difference %.3g\n", difference);
}

// 50 examples do not shard evenly over 3 ranks (17, 17, 16): the last rank
// runs out of batches a step early and goes on to the epoch's last
// all_reduce while the others are in a step's. Every rank's error names both
// calls and, as its place, the line of the user's call that made its own
// collective (staged_epoch's apply_gradients, or its all_reduce).
TEST(DistributedTraining, UnevenShardsAreAnErrorThatNamesEachRanksCall) {
  if (ranks() != 3) GTEST_SKIP() << "needs 3 ranks";
  const Tensor x = pseudo_random({50, 4}, 31, 1.0);
  const Batches shard = ag::data::from_tensor_slices(std::tuple{x, ag::zeros({50}, ag::int32)})
                            .shard(3, rank())
                            .batch(4);
  ag::layers::Sequential model = classifier(60);
  ag::optimizers::SGD sgd({.learning_rate = 0.1});
  ag::distribute::DistributedOptimizer distributed(sgd);
  auto epoch = staged_epoch(model, distributed);
  try {
    epoch(shard);
    ADD_FAILURE() << "no error";
  } catch (const ag::InvalidArgumentError& e) {
    const std::string message = e.what();
    // The collectives' numbers depend on the tests run before.
    for (const char* part : {"all_reduce: the ranks disagree: ranks 0, 1 called all_reduce(mean) "
                             "of float32 [67] (collective #",
                             "; rank 2 called all_reduce(mean) of float32 [] (collective #"})
      EXPECT_NE(message.find(part), std::string::npos) << message;
    EXPECT_NE(message.find("give every rank the same number of steps"), std::string::npos)
        << message;
    const int line = rank() == 2 ? epoch_reduce_line : epoch_step_line;
    EXPECT_NE(message.find("in op all_reduce (node 'all_reduce') of function 'epoch', defined at " +
                           std::string(__FILE__) + ":" + std::to_string(line)),
              std::string::npos)
        << message;
  }
}

// A 3-layer MLP's gradients, this rank's own, combined by `options`.
Tensors combined_mlp_gradients(const ag::distribute::DistributedOptions& options) {
  const std::vector<Shape> shapes = {{6, 40}, {40}, {40, 30}, {30}, {30, 2}, {2}};
  std::vector<ag::Variable> variables;
  for (size_t i = 0; i < shapes.size(); ++i)
    variables.emplace_back(pseudo_random(shapes[i], double(i), 0.5));
  const Tensor x = pseudo_random({8, 6}, 50 + rank(), 1.0);
  ag::GradientTape tape;
  Tensor h = x;
  for (size_t i = 0; i < variables.size(); i += 2) {
    h = ag::matmul(h, variables[i].read()) + variables[i + 1].read();
    if (i + 2 < variables.size()) h = ag::tanh(h);
  }
  const Tensor loss = ag::reduce_mean(ag::square(h));
  ag::optimizers::SGD sgd;
  return ag::distribute::DistributedOptimizer(sgd, options).gradient(tape, loss, variables);
}

TEST(DistributedTraining, OverlappedGradientsEqualThoseReducedAfterTheBackward) {
  // 4 KiB buffers: the 9.6 KiB weight alone, the others fused in twos and threes.
  for (int64_t threshold : {int64_t{0}, int64_t{4096}, int64_t{1} << 20}) {
    const Tensors overlapped =
        combined_mlp_gradients({.fusion_threshold_bytes = threshold, .overlap = true});
    const Tensors after =
        combined_mlp_gradients({.fusion_threshold_bytes = threshold, .overlap = false});
    ASSERT_EQ(overlapped.size(), after.size());
    for (size_t i = 0; i < after.size(); ++i) {
      EXPECT_EQ(overlapped[i].shape(), after[i].shape());
      EXPECT_EQ(overlapped[i].to_vector<float>(), after[i].to_vector<float>())
          << "threshold " << threshold << ", gradient " << i;
    }
    // Every rank holds the same combined gradients.
    for (const Tensor& g : overlapped) {
      const int64_t n = g.num_elements();
      const Tensor gathered = ag::distribute::all_gather(ag::reshape(g, {1, n}));
      for (int r = 1; r < ranks(); ++r)
        EXPECT_EQ(ag::slice(gathered, {r, 0}, {1, n}).to_vector<float>(), g.to_vector<float>());
    }
  }
}

TEST(DistributedTraining, AnErrorOnTheCommunicationThreadReachesTheCaller) {
  // Rank 0's last weight has another shape: every rank's all_reduce of it fails.
  ag::Variable w(ag::ones({rank() == 0 ? int64_t{3} : int64_t{4}}));
  ag::Variable v(ag::ones({2}));
  ag::GradientTape tape;
  const Tensor loss = ag::reduce_sum(ag::square(v.read())) + ag::reduce_sum(w.read());
  ag::optimizers::SGD sgd;
  ag::distribute::DistributedOptimizer distributed(sgd, {.fusion_threshold_bytes = 0});
  try {
    distributed.gradient(tape, loss, {v, w});
    ADD_FAILURE() << "no error";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("all_reduce: the ranks disagree: rank 0 called "
                                         "all_reduce(mean) of float32 [3]"),
              std::string::npos)
        << e.what();
  }
  // The job goes on.
  EXPECT_EQ(ag::distribute::all_reduce(ag::constant({2}), ReduceOp::Max).to_vector<int32_t>(),
            std::vector<int32_t>{2});
}

TEST(DistributedTraining, FusedGradientsEqualSeparateAllReduces) {
  ag::optimizers::SGD sgd;
  Tensors grads;
  for (int64_t n : {3, 7, 1, 40}) {
    std::vector<double> values = values_of(rank(), n);
    grads.push_back(ag::constant(values, {n}) * 0.37f);
  }
  const Tensors fused = ag::distribute::DistributedOptimizer(sgd, {.fusion_threshold_bytes = 1024})
                            .reduce_gradients(grads);
  const Tensors separate = ag::distribute::DistributedOptimizer(sgd, {.fusion_threshold_bytes = 0})
                               .reduce_gradients(grads);
  for (size_t i = 0; i < grads.size(); ++i)
    EXPECT_EQ(fused[i].to_vector<float>(), separate[i].to_vector<float>()) << i;
}

TEST(Context, IsOneAtATime) {
  try {
    ag::distribute::Context second;
    ADD_FAILURE() << "a second Context";
  } catch (const ag::FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("ag::distribute::Context: one already exists"),
              std::string::npos)
        << e.what();
  }
  // The first one still works.
  EXPECT_EQ(ag::distribute::all_reduce(ag::constant({1}), ReduceOp::Max).to_vector<int32_t>(),
            std::vector<int32_t>{1});
}

}  // namespace

// The program starts MPI itself, so the Context joins it (and leaves it to
// the program to finalise); the other programs under mpirun let their
// Context start and end MPI.
int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int failed = 0;
  {
    // A failed expectation that skips a collective on one rank fails the
    // run after this wait instead of hanging it.
    ag::distribute::Context context({.timeout = std::chrono::seconds(30)});
    testing::InitGoogleTest(&argc, argv);
    failed = RUN_ALL_TESTS();
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    std::printf("FAIL: the Context finalised the MPI it joined\n");
    return 1;
  }
  MPI_Finalize();
  return failed;
}
