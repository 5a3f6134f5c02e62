// Deployment, part 1: trace a model and export it, as one ONNX model and as
// a SavedModel of two signatures.
//
// `Model` is an ag::Module with two ag::Variables and two marked methods
// (agc stages predict's while loop). ag::onnx::save traces predict for a
// batch of any size and writes model.onnx: the variables become
// initializers holding their values now, the loop an ONNX Loop.
// ag::saved_model::save(model, ...) writes the model's variables and both
// methods' traces, for a batch of any size, into the folder saved_model, as
// tf.saved_model.save(model, export_dir, signatures) does.
// run_model.cpp loads both without this source and without agc; ONNX
// Runtime runs the models too (README, "ONNX models").
#include <iostream>
#include <string>

#include <ag/ag.h>
#include <ag/onnx.h>
#include <ag/saved_model.h>

struct Model : ag::Module {
  ag::Variable w{ag::random_normal({3, 2}, 0.0, 1.0, ag::float32, /*seed=*/1), "w"};
  ag::Variable b{ag::constant({0.5f, -0.25f}), "b"};

  // A dense layer with relu.
  AG_FUNCTION ag::Tensor hidden(ag::Tensor x) {
    return ag::relu(ag::matmul(x, w.read()) + b.read());
  }

  // The dense layer, then the TensorFlow guide's tanh loop until the outputs
  // sum to at most 1.
  AG_FUNCTION ag::Tensor predict(ag::Tensor x) {
    ag::Tensor h = hidden(x);
    while (ag::reduce_sum(h) > 1) {
      h = ag::tanh(h);
    }
    return h;
  }
};

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "model.onnx";
  const std::string saved = argc > 2 ? argv[2] : "saved_model";
  Model model;
  const ag::TensorSpec batch_of_3({ag::kUnknownDim, 3}, ag::float32);
  auto predict = ag::function(
      [&](ag::Tensor x) { return model.predict(x); },
      {.input_signature = std::vector{batch_of_3}, .name = "predict", .arg_names = {"x"}});
  auto hidden = ag::function(
      [&](ag::Tensor x) { return model.hidden(x); },
      {.input_signature = std::vector{batch_of_3}, .name = "hidden", .arg_names = {"x"}});

  ag::onnx::save(predict, path, batch_of_3);
  std::cout << "wrote " << path << "\n";
  ag::saved_model::save(model, saved, {{"predict", predict}, {"hidden", hidden}});
  std::cout << "wrote " << saved << " (signatures predict and hidden)\n";

  ag::Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.5f, 2.0f}});
  std::cout << "predict(x) =\n" << predict(x) << "\n";
  std::cout << "hidden(x) =\n" << hidden(x) << "\n";
}
