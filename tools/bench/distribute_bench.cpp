// distribute_bench: a data-parallel training step (ag::distribute) on
// however many ranks mpirun starts; run.sh runs it on 1 and on 2 ranks, one
// intra-op thread each, and summarize.py turns the two runs into the scaling
// efficiency, throughput(2) / (2 * throughput(1)).
//   dp_mlp_step/ranks:N/graph          the step in ag::function: forward,
//                                      backward, the gradients' all_reduces
//                                      and SGD's update
//   dp_mlp_step/ranks:N/eager          the step op by op, gradients
//                                      combined after the backward
//   dp_mlp_step/ranks:N/eager_overlap  the same, each buffer's all_reduce
//                                      on a communication thread as soon as
//                                      the backward has completed it
//   dp_lenet_step/ranks:N/graph        LeNet-5's step (model_workloads.h,
//                                      64 images per rank) in ag::function,
//                                      its gradients averaged the same way
//   all_reduce_mlp_grads/ranks:N/ag    ag::distribute::all_reduce (sum) of a
//                                      tensor of the MLP's weight count,
//                                      eager: its input is kept
//   all_reduce_mlp_grads/ranks:N/mpi   MPI_Allreduce of the same floats from
//                                      one buffer into another, called
//                                      directly: what the transport gives
//   .../mpi_in_place                   MPI_Allreduce in place (MPI_IN_PLACE),
//                                      as a graph's all_reduce of a buffer
//                                      that dies there runs
//   all_reduce_mlp_grads/ranks:N/memcpy  one memcpy of them: the memory
//                                      traffic of a single copy
// The model: x [64 rows per rank, 784] -> dense 1024 -> relu -> dense 1024
// -> relu -> dense 10 -> softmax cross-entropy; float32; SGD 0.01. Every
// row has DistributedOptimizer's default fusion (1 MiB buffers), so the two
// large weights (3.1 and 4 MiB) are reduced alone, the rest in one buffer.
// Every rank runs the same fixed number of steps (collectives must match),
// so the iteration count is fixed and rows are not interleaved at random;
// times are real time (a step waits for the other ranks). The MLP has 1.9 M
// weights for 64 rows of 784 inputs, LeNet 61 k for 64 images of 28x28: on
// 2 ranks about a fifth of the one's step is its all_reduce, the other's is
// almost all convolution. The counter `examples` is the global batch of one
// step. Rank 0 reports; the other
// ranks run silently. Before timing, one step of each row from the same
// weights is checked: eager and eager_overlap agree bit for bit, graph
// within float32 rounding, and every rank holds the same weights.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include <ag/ag.h>
#include <ag/distribute.h>

#include "bench_util.h"
#include "model_workloads.h"

namespace {

using ag::Tensor;
using ag::Variable;

constexpr int64_t kRowsPerRank = 64, kIn = 784, kHidden = 1024, kOut = 10;
constexpr float kLearningRate = 0.01f;
constexpr int kIterations = 20;

Tensor softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  Tensor shifted = logits - ag::reduce_max(logits, 1, /*keepdims=*/true);
  Tensor log_probs = shifted - ag::log(ag::reduce_sum(ag::exp(shifted), 1, /*keepdims=*/true));
  return -ag::reduce_mean(ag::reduce_sum(labels * log_probs, 1));
}

// The initial weights (the same on every rank) and this rank's rows.
struct Inputs {
  std::vector<Tensor> weights;
  Tensor x, one_hot;
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

void prepare_inputs() {
  Inputs& in = inputs();
  const uint64_t seed = 10 + uint64_t(ag::distribute::rank());
  in.x = ag::random_uniform({kRowsPerRank, kIn}, 0.0, 1.0, ag::float32, seed);
  in.one_hot = ag::one_hot(
      ag::cast(ag::random_uniform({kRowsPerRank}, 0.0, kOut, ag::float32, seed + 100), ag::int32),
      kOut);
  const int64_t dims[] = {kIn, kHidden, kHidden, kOut};
  for (int layer = 0; layer < 3; ++layer) {
    const double scale = std::sqrt(2.0 / double(dims[layer]));
    in.weights.push_back(ag::random_normal({dims[layer], dims[layer + 1]}, 0.0, scale, ag::float32,
                                           uint64_t(layer + 1)));
    in.weights.push_back(ag::zeros({dims[layer + 1]}));
  }
}

struct Trainer {
  std::vector<Variable> variables;
  ag::optimizers::SGD sgd{{.learning_rate = kLearningRate}};
  ag::distribute::DistributedOptimizer optimizer;
  bool overlap;

  explicit Trainer(ag::distribute::DistributedOptions options)
      : optimizer(sgd, options), overlap(options.overlap) {
    for (const Tensor& w : inputs().weights) variables.emplace_back(w);
  }

  Tensor loss(const Tensor& x, const Tensor& labels) const {
    Tensor h = x;
    for (size_t i = 0; i < variables.size(); i += 2) {
      h = ag::matmul(h, variables[i].read()) + variables[i + 1].read();
      if (i + 2 < variables.size()) h = ag::relu(h);
    }
    return softmax_cross_entropy(h, labels);
  }

  Tensor train_step(const Tensor& x, const Tensor& labels) {
    ag::GradientTape tape;
    Tensor l = loss(x, labels);
    optimizer.minimize(tape, l, variables);
    return l;
  }

  std::vector<float> weights() const {
    std::vector<float> all;
    for (const Variable& v : variables) {
      const std::vector<float> w = v.read().to_vector<float>();
      all.insert(all.end(), w.begin(), w.end());
    }
    return all;
  }
};

std::unique_ptr<Trainer> make_eager(bool overlap) {
  return std::make_unique<Trainer>(ag::distribute::DistributedOptions{.overlap = overlap});
}

auto make_graph_step(Trainer& trainer) {
  return ag::function(
      [&trainer](const Tensor& x, const Tensor& labels) { return trainer.train_step(x, labels); });
}

// The largest difference of these weights between any two ranks.
float spread_over_ranks(const std::vector<float>& weights) {
  const Tensor w = ag::constant(weights, {int64_t(weights.size())});
  const Tensor spread = ag::distribute::all_reduce(w, ag::distribute::ReduceOp::Max) -
                        ag::distribute::all_reduce(w, ag::distribute::ReduceOp::Min);
  return ag::reduce_max(spread).item<float>();
}

void check_rows_agree() {
  const Inputs& in = inputs();
  auto eager = make_eager(false), overlapped = make_eager(true);
  Trainer graph(ag::distribute::DistributedOptions{});
  eager->train_step(in.x, in.one_hot);
  overlapped->train_step(in.x, in.one_hot);
  make_graph_step(graph)(in.x, in.one_hot);
  const std::vector<float> e = eager->weights(), o = overlapped->weights(), g = graph.weights();
  if (std::memcmp(e.data(), o.data(), e.size() * sizeof(float)) != 0)
    ag_bench::fail("eager_overlap's weights differ from eager's");
  ag_bench::check_close("graph's weights", e, g, {1e-6, 1e-4});
  if (spread_over_ranks(o) != 0.0f) ag_bench::fail("the ranks' weights differ");
}

void set_examples(benchmark::State& state) {
  state.counters["examples"] = double(kRowsPerRank * ag::distribute::size());
}

void bm_eager(benchmark::State& state, bool overlap) {
  const Inputs& in = inputs();
  auto trainer = make_eager(overlap);
  for (auto _ : state) benchmark::DoNotOptimize(trainer->train_step(in.x, in.one_hot));
  set_examples(state);
}

void bm_graph(benchmark::State& state) {
  const Inputs& in = inputs();
  Trainer trainer(ag::distribute::DistributedOptions{});
  auto step = make_graph_step(trainer);
  step(in.x, in.one_hot);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(step(in.x, in.one_hot));
  set_examples(state);
}

// LeNet-5 trained by SGD through DistributedOptimizer (its default fusion).
struct DistributedLenet {
  ag_models::Lenet model;
  ag::optimizers::SGD sgd{{.learning_rate = ag_models::kLenetLearningRate}};
  ag::distribute::DistributedOptimizer optimizer{sgd, ag::distribute::DistributedOptions{}};

  DistributedLenet() {
    for (const Tensor& w : ag_models::lenet_inputs().weights) model.weights.emplace_back(w);
  }

  Tensor train_step(const Tensor& x, const Tensor& labels) {
    ag::GradientTape tape;
    Tensor loss = ag::reduce_mean(ag::sparse_softmax_cross_entropy_with_logits(labels, model(x)));
    optimizer.minimize(tape, loss, model.weights);
    return loss;
  }
};

void bm_lenet_graph(benchmark::State& state) {
  const ag_models::LenetInputs& in = ag_models::lenet_inputs();
  DistributedLenet trainer;
  auto step = ag::function(
      [&trainer](const Tensor& x, const Tensor& labels) { return trainer.train_step(x, labels); });
  step(in.x, in.labels);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(step(in.x, in.labels));
  state.counters["examples"] = double(ag_models::kLenetBatch * ag::distribute::size());
}

// The MLP's weights, as many floats as its gradients' all_reduces move.
constexpr int64_t kMlpWeights =
    kIn * kHidden + kHidden + kHidden * kHidden + kHidden + kHidden * kOut + kOut;

void set_bytes(benchmark::State& state) {
  state.SetBytesProcessed(int64_t(state.iterations()) * kMlpWeights * int64_t(sizeof(float)));
}

void bm_all_reduce_ag(benchmark::State& state) {
  const Tensor grads = ag::random_normal({kMlpWeights}, 0.0, 1.0, ag::float32, 21);
  for (auto _ : state) benchmark::DoNotOptimize(ag::distribute::all_reduce(grads));
  set_bytes(state);
}

void bm_all_reduce_mpi(benchmark::State& state, bool in_place) {
  std::vector<float> grads(size_t(kMlpWeights), 1.0f), sums(grads.size());
  const void* send = in_place ? MPI_IN_PLACE : grads.data();
  float* receive = in_place ? grads.data() : sums.data();
  for (auto _ : state) {
    MPI_Allreduce(send, receive, int(grads.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    benchmark::DoNotOptimize(receive);
  }
  set_bytes(state);
}

void bm_memcpy(benchmark::State& state) {
  std::vector<float> from(size_t(kMlpWeights), 1.0f), to(from.size());
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), from.size() * sizeof(float));
    benchmark::DoNotOptimize(to.data());
  }
  set_bytes(state);
}

// The other ranks' reports go nowhere.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// argv without --benchmark_out... (rank 0 alone writes the results file).
std::vector<char*> without_output_file(int argc, char** argv) {
  std::vector<char*> kept;
  for (int i = 0; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_out", 15) != 0) kept.push_back(argv[i]);
  return kept;
}

}  // namespace

int main(int argc, char** argv) {
  ag::distribute::Context context;
  ag::set_intra_op_threads(1);
  std::vector<char*> args(argv, argv + argc);
  if (context.rank() != 0) args = without_output_file(argc, argv);
  int count = int(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  prepare_inputs();
  check_rows_agree();
  const std::string prefix = "dp_mlp_step/ranks:" + std::to_string(context.size());
  const std::string graph = prefix + "/graph", eager = prefix + "/eager",
                    overlap = prefix + "/eager_overlap";
  const std::string lenet = "dp_lenet_step/ranks:" + std::to_string(context.size()) + "/graph";
  const std::string reduce = "all_reduce_mlp_grads/ranks:" + std::to_string(context.size());
  const std::string reduce_ag = reduce + "/ag", reduce_mpi = reduce + "/mpi",
                    reduce_in_place = reduce + "/mpi_in_place", copy = reduce + "/memcpy";
  for (auto* b : {benchmark::RegisterBenchmark(graph.c_str(), bm_graph),
                  benchmark::RegisterBenchmark(eager.c_str(), bm_eager, false),
                  benchmark::RegisterBenchmark(overlap.c_str(), bm_eager, true),
                  benchmark::RegisterBenchmark(lenet.c_str(), bm_lenet_graph),
                  benchmark::RegisterBenchmark(reduce_ag.c_str(), bm_all_reduce_ag),
                  benchmark::RegisterBenchmark(reduce_mpi.c_str(), bm_all_reduce_mpi, false),
                  benchmark::RegisterBenchmark(reduce_in_place.c_str(), bm_all_reduce_mpi, true),
                  benchmark::RegisterBenchmark(copy.c_str(), bm_memcpy)})
    b->Unit(benchmark::kMillisecond)->Iterations(kIterations)->UseRealTime();
  if (context.rank() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    SilentReporter silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  return 0;
}
