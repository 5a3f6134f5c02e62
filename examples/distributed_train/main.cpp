// Data-parallel training on several processes, Horovod's recipe:
//
//   mpirun -np 2 ./distributed_train
//
// Every rank runs this program. ag::distribute::Context starts MPI (as
// hvd.init()); each rank builds the model with its own random weights, and
// broadcast_variables gives everyone rank 0's; each rank trains on its
// share of the batch (1/N of the rows), and DistributedOptimizer averages
// the gradients over the ranks before Adam applies them, so every rank
// takes the same step: the one a single process would take on the whole
// batch. train_step is marked: agc makes it an ag::function, whose graph
// holds the forward pass, the backward pass, the gradients' all_reduce (one,
// the four small gradients fused into one buffer) and Adam's updates.
//
// The model and data are train_mlp's: a 1-16-1 MLP fits a noisy sine.
// Rank 0 prints the loss over the whole batch (the mean of the ranks'
// losses) and, at the end, whether every rank holds the same weights.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/distribute.h>

constexpr int64_t kPoints = 64;
constexpr int64_t kHidden = 16;
constexpr int kSteps = 500;
constexpr int kPrintEvery = 100;

class Regressor : public ag::Module {
 public:
  ag::Variable w1, b1, w2, b2;
  ag::optimizers::Adam adam{{.learning_rate = 0.02}};
  ag::distribute::DistributedOptimizer optimizer{adam};

  explicit Regressor(uint64_t seed)
      : w1(ag::random_normal({1, kHidden}, 0.0, 1.0, ag::float32, seed), "w1"),
        b1(ag::zeros({kHidden}), "b1"),
        w2(ag::random_normal({kHidden, 1}, 0.0, 0.25, ag::float32, seed + 1), "w2"),
        b2(ag::zeros({1}), "b2") {}

  std::vector<ag::Variable> variables() const { return {w1, b1, w2, b2}; }

  ag::Tensor predict(const ag::Tensor& x) const {
    ag::Tensor h = ag::relu(ag::matmul(x, w1.read()) + b1.read());
    return ag::matmul(h, w2.read()) + b2.read();
  }

  // One step on this rank's rows; returns the mean of the ranks' losses.
  AG_FUNCTION ag::Tensor train_step(ag::Tensor x, ag::Tensor y) {
    std::vector<ag::Variable> vars = variables();
    ag::GradientTape tape;
    ag::Tensor loss = ag::reduce_mean(ag::square(predict(x) - y));
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    return ag::distribute::all_reduce(loss, ag::distribute::ReduceOp::Mean);
  }
};

namespace {

// The whole data set, the same on every rank: x in [-3, 3], y = sin(x)
// plus a deterministic wiggle standing in for noise.
std::vector<ag::Tensor> whole_batch() {
  std::vector<float> xs, ys;
  for (int64_t i = 0; i < kPoints; ++i) {
    const float x = -3.0f + 6.0f * float(i) / float(kPoints - 1);
    xs.push_back(x);
    ys.push_back(std::sin(x) + 0.1f * std::sin(37.0f * x));
  }
  return {ag::constant(xs, {kPoints, 1}), ag::constant(ys, {kPoints, 1})};
}

// Rows [rank * n, (rank + 1) * n) of t: this rank's share.
ag::Tensor shard(const ag::Tensor& t, int rank, int ranks) {
  const int64_t rows = t.shape()[0] / ranks;
  return ag::slice(t, {rank * rows, 0}, {rows, t.shape()[1]});
}

std::string fixed(float value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, double(value));
  return buf;
}

}  // namespace

int main() {
  ag::distribute::Context context;
  const int rank = context.rank(), ranks = context.size();
  const bool chief = rank == 0;  // prints

  const std::vector<ag::Tensor> data = whole_batch();
  const ag::Tensor x = shard(data[0], rank, ranks), y = shard(data[1], rank, ranks);
  if (chief) {
    std::cout << ranks << " ranks, " << kPoints / ranks << " of the " << kPoints
              << " points each; a 1-" << kHidden << "-1 MLP, Adam, " << kSteps << " steps\n";
  }

  Regressor model(/*seed=*/10 + uint64_t(rank));  // different weights on each rank...
  ag::distribute::broadcast_variables(model.variables(), /*root=*/0);  // ...until rank 0's win

  for (int step = 1; step <= kSteps; ++step) {
    const ag::Tensor loss = model.train_step(x, y);
    if (chief && (step == 1 || step % kPrintEvery == 0))
      std::cout << "step " << step << ": loss " << fixed(loss.item<float>(), 4) << "\n";
  }

  // Each rank's largest difference from rank 0's weights, the largest over the ranks.
  ag::Tensor difference = ag::constant(0.0f);
  for (const ag::Variable& v : model.variables()) {
    const ag::Tensor theirs = ag::distribute::broadcast(v.read(), 0);
    difference = ag::maximum(difference, ag::reduce_max(ag::abs(v.read() - theirs)));
  }
  difference = ag::distribute::all_reduce(difference, ag::distribute::ReduceOp::Max);
  if (chief) {
    std::cout << "the same weights on all " << ranks
              << " ranks: " << (difference.item<float>() == 0.0f ? "yes" : "no") << "\n";
  }
}
