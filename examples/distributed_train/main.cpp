// Data-parallel training on several processes, Horovod's recipe, with the
// layers and datasets of a single-process program:
//
//   mpirun -np 2 ./distributed_train [--synthetic] [--digits FILE]
//
// Every rank runs this program. ag::distribute::Context starts MPI (as
// hvd.init()). Each rank builds the CNN with its own random weights, and
// broadcast_variables gives everyone rank 0's. The training images go into
// a dataset shuffled with one seed on every rank, then sharded: each rank
// takes every N-th image of the same order, so its k-th batch is its share
// of the k-th batch one process would take. DistributedOptimizer averages
// the gradients over the ranks before Adam applies them, so every rank
// takes the step one process would take on the whole batch.
//
// train_epoch is marked: agc stages its `for (auto [images, labels] :
// dataset)` as one While loop, so an epoch is one call of one graph, the
// gradients' all_reduces inside the loop's body. Rank 0 prints each epoch's
// loss (the mean over the ranks) and the test accuracy and, at the end,
// whether every rank holds the same weights. The data is scikit-learn's 8x8
// digits, or synthetic digits (examples/common/digits_data.h).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>
#include <ag/distribute.h>

#include "digits_data.h"

namespace {

using Batches = ag::data::Dataset<std::tuple<ag::Tensor, ag::Tensor>>;

constexpr int64_t kTrain = 1440;
constexpr int64_t kGlobalBatch = 48;  // split evenly over 1, 2, 3, 4, 6, ... ranks
constexpr int kEpochs = 6;

class Classifier : public ag::Module {
 public:
  explicit Classifier(uint64_t seed) {
    auto seeded = [&](uint64_t offset) {
      return ag::layers::Initializer("glorot_uniform", seed + offset);
    };
    model.add(ag::layers::Conv2D(
        16, 3, {.padding = "same", .activation = "relu", .kernel_initializer = seeded(0)}));
    model.add(ag::layers::MaxPool2D());
    model.add(ag::layers::Flatten());
    model.add(ag::layers::Dense(10, {.kernel_initializer = seeded(1)}));
    model.build({ag::kUnknownDim, 8, 8, 1});  // the weights exist before the broadcast
  }

  // One pass over this rank's shard, a step per batch: the mean of the
  // batches' losses over the ranks.
  AG_FUNCTION ag::Tensor train_epoch(Batches dataset) {
    ag::Tensor total = 0.0f;
    ag::Tensor steps = 0.0f;
    for (auto [images, labels] : dataset) {
      total = total + step(images, labels);
      steps = steps + 1.0f;
    }
    return ag::distribute::all_reduce(total / steps, ag::distribute::ReduceOp::Mean);
  }

  // The logits of a batch of images.
  AG_FUNCTION ag::Tensor predict(ag::Tensor images) { return model(images, false); }

  ag::layers::Sequential model;
  ag::optimizers::Adam adam{{.learning_rate = 0.01}};
  ag::distribute::DistributedOptimizer optimizer{adam};  // hvd.DistributedOptimizer(adam)

 private:
  ag::Tensor step(const ag::Tensor& images, const ag::Tensor& labels) {
    ag::GradientTape tape;
    ag::Tensor loss = cross_entropy_(labels, model(images, true));
    std::vector<ag::Variable> variables = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, variables), variables);
    return loss;
  }

  ag::losses::SparseCategoricalCrossentropy cross_entropy_{/*from_logits=*/true};
};

std::string fixed(float value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, double(value));
  return text;
}

// The largest difference of any weight from rank 0's, over the ranks.
float largest_difference_from_rank_0(const ag::layers::Layer& model) {
  ag::Tensor difference = ag::constant(0.0f);
  for (const ag::Variable& v : model.variables()) {
    const ag::Tensor theirs = ag::distribute::broadcast(v.read(), 0);
    difference = ag::maximum(difference, ag::reduce_max(ag::abs(v.read() - theirs)));
  }
  return ag::distribute::all_reduce(difference, ag::distribute::ReduceOp::Max).item<float>();
}

}  // namespace

int main(int argc, char** argv) {
  ag::distribute::Context context;  // hvd.init()
  const int rank = context.rank(), ranks = context.size();
  const bool chief = rank == 0;  // prints
  std::ostringstream quiet;
  std::ostream& out = chief ? std::cout : quiet;
  if (kGlobalBatch % ranks != 0) {
    if (chief)
      std::cerr << "error: " << ranks << " ranks cannot split batches of " << kGlobalBatch
                << " evenly; run on a number of ranks that divides it\n";
    return 1;
  }

  bool synthetic = false;
  std::string path = example::kSklearnDigits;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--synthetic") synthetic = true;
    if (arg == "--digits" && i + 1 < argc) path = argv[++i];
  }
  const auto [train, test] =
      example::split_digits(example::load_digits(path, synthetic, out), kTrain);
  // Shuffled anew on each pass from one seed, the same order on every rank;
  // this rank's share of it; its share of each batch.
  const Batches shard = ag::data::from_tensor_slices(std::tuple{train.images, train.labels})
                            .shuffle(kTrain, /*seed=*/7)
                            .shard(ranks, rank)
                            .batch(kGlobalBatch / ranks);
  out << ranks << (ranks == 1 ? " rank, " : " ranks, ") << kTrain / ranks << " of the " << kTrain
      << " training images each, batches of " << kGlobalBatch / ranks << " (" << kGlobalBatch
      << " in all)\n";

  Classifier classifier(/*seed=*/10 + uint64_t(rank));  // different weights on each rank...
  ag::distribute::broadcast_variables(classifier.model.variables(),
                                      /*root=*/0);  // ...until rank 0's

  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    const ag::Tensor loss = classifier.train_epoch(shard);
    ag::metrics::SparseCategoricalAccuracy accuracy;
    accuracy.update_state(test.labels, classifier.predict(test.images));
    out << "epoch " << epoch << ": loss " << fixed(loss.item<float>(), 4) << ", test accuracy "
        << fixed(accuracy.result().item<float>() * 100, 1) << "%\n";
  }
  const bool same = largest_difference_from_rank_0(classifier.model) == 0.0f;
  out << "the same weights on all " << ranks << " ranks: " << (same ? "yes" : "no") << "\n";
}
