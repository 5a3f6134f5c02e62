// End to end: a small CNN learns scikit-learn's 8x8 digits.
//
// The images come from the digits.csv.gz that Debian's python3-sklearn ships
// (1797 images, 64 pixels from 0 to 16 and a label per row); without it, or
// with --synthetic, from a synthetic set of noisy class templates, with a
// note (examples/common/digits_data.h). A layers::Sequential (Conv2D, MaxPool2D, Conv2D, MaxPool2D,
// Flatten, Dense) trains on a shuffled, batched ag::data dataset: `train_epoch` is marked, and agc
// stages its `for (auto [x, y] : dataset)` as one loop, so an epoch is one call of one graph. A
// Checkpoint saves the model and the optimizer halfway; a second model restored from it and trained
// on for the same epochs ends with the same weights. The classifier is exported as a SavedModel and
// loaded back, its predictions those of the model.
//
//   digits [--synthetic] [--digits FILE] [--out DIR]
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>
#include <ag/saved_model.h>

#include "digits_data.h"

namespace {

using example::Digits;
using Batches = ag::data::Dataset<std::tuple<ag::Tensor, ag::Tensor>>;

constexpr int kEpochs = 6;

class Classifier : public ag::Module {
 public:
  Classifier() {
    auto seeded = [](uint64_t seed) { return ag::layers::Initializer("glorot_uniform", seed); };
    model.add(ag::layers::Conv2D(
        16, 3, {.padding = "same", .activation = "relu", .kernel_initializer = seeded(11)}));
    model.add(ag::layers::MaxPool2D());
    model.add(ag::layers::Conv2D(
        32, 3, {.padding = "same", .activation = "relu", .kernel_initializer = seeded(12)}));
    model.add(ag::layers::MaxPool2D());
    model.add(ag::layers::Flatten());
    model.add(ag::layers::Dense(10, {.kernel_initializer = seeded(13)}));
  }

  // One pass over the dataset, a step of Adam per batch: the batches' mean loss.
  AG_FUNCTION ag::Tensor train_epoch(Batches dataset) {
    ag::Tensor total = 0.0f;
    ag::Tensor steps = 0.0f;
    for (auto [images, labels] : dataset) {
      total = total + step(images, labels);
      steps = steps + 1.0f;
    }
    return total / steps;
  }

  // The logits of a batch of images.
  AG_FUNCTION ag::Tensor predict(ag::Tensor images) { return model(images, false); }

  ag::layers::Sequential model;
  ag::optimizers::Adam optimizer{{.learning_rate = 0.01}};

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

float accuracy(Classifier& classifier, const Digits& test) {
  ag::metrics::SparseCategoricalAccuracy metric;
  metric.update_state(test.labels, classifier.predict(test.images));
  return metric.result().item<float>();
}

std::string percent(float fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", double(fraction) * 100);
  return text;
}

std::string fixed(float value) {
  char text[16];
  std::snprintf(text, sizeof text, "%.4f", double(value));
  return text;
}

bool same_weights(const ag::layers::Layer& a, const ag::layers::Layer& b) {
  const std::vector<ag::Variable> va = a.trainable_variables(), vb = b.trainable_variables();
  for (size_t i = 0; i < va.size(); ++i)
    if (va[i].read().to_vector<float>() != vb[i].read().to_vector<float>()) return false;
  return va.size() == vb.size();
}

}  // namespace

int main(int argc, char** argv) {
  bool synthetic = false;
  std::string path = example::kSklearnDigits, out = "digits_out";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--synthetic") synthetic = true;
    if (arg == "--digits" && i + 1 < argc) path = argv[++i];
    if (arg == "--out" && i + 1 < argc) out = argv[++i];
  }
  const Digits data = example::load_digits(path, synthetic, std::cout);
  const int64_t n = data.labels.shape()[0], n_train = 1440;
  const auto [train, test] = example::split_digits(data, n_train);
  std::cout << "train " << n_train << ", test " << n - n_train << "\n";
  // Shuffled anew on each pass, from one seed: the k-th pass's order is the
  // same for every dataset made so.
  auto batches = [&] {
    return ag::data::from_tensor_slices(std::tuple{train.images, train.labels})
        .shuffle(n_train, /*seed=*/7)
        .batch(32);
  };
  const Batches epochs = batches();

  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  Classifier classifier;
  ag::train::Checkpoint checkpoint;
  std::string halfway;
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    const ag::Tensor loss = classifier.train_epoch(epochs);
    std::cout << "epoch " << epoch << ": loss " << fixed(loss.item<float>()) << ", test accuracy "
              << percent(accuracy(classifier, test)) << "\n";
    if (epoch == kEpochs / 2) {
      checkpoint.track("model", classifier.model).track("optimizer", classifier.optimizer);
      halfway = checkpoint.save(out + "/ckpt");
      std::cout << "saved a checkpoint after epoch " << epoch << "\n";
    }
  }

  // A second classifier, restored halfway, trained on the same batches.
  Classifier resumed;
  resumed.predict(test.images);  // builds the layers, which a checkpoint restores into
  ag::train::Checkpoint restore;
  restore.track("model", resumed.model).track("optimizer", resumed.optimizer).restore(halfway);
  // Its dataset passes over the epochs done before the checkpoint (plain C++
  // iteration), so that each later epoch shuffles as it did.
  const Batches resumed_epochs = batches();
  for (int epoch = 1; epoch <= kEpochs / 2; ++epoch)
    for (const auto& batch : resumed_epochs) (void)batch;
  for (int epoch = kEpochs / 2 + 1; epoch <= kEpochs; ++epoch) resumed.train_epoch(resumed_epochs);
  std::cout << "restored from the checkpoint and trained on: the same weights: "
            << (same_weights(classifier.model, resumed.model) ? "yes" : "no") << "\n";

  const ag::TensorSpec images({ag::kUnknownDim, 8, 8, 1}, ag::float32);
  auto predict = ag::function(
      [&](ag::Tensor x) { return classifier.predict(x); },
      {.input_signature = std::vector{images}, .name = "predict", .arg_names = {"images"}});
  // The model's variables by their checkpoint paths ("layer_with_weights-0/kernel", ...).
  ag::saved_model::save(classifier.model, out + "/saved_model", {{"predict", predict}});
  const ag::saved_model::SavedModel loaded = ag::saved_model::load(out + "/saved_model");
  const ag::Tensor served = loaded.signature("predict")({test.images})[0];
  const ag::Tensor direct = classifier.predict(test.images);
  std::cout << "SavedModel predict: " << loaded.signature("predict").signature() << "\n";
  std::cout << "its predictions equal the model's: "
            << (ag::reduce_all(ag::argmax(served, -1) == ag::argmax(direct, -1)).item<bool>()
                    ? "yes"
                    : "no")
            << "\n";
}
