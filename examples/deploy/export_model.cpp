// Deployment, part 1: trace a model and export it as ONNX.
//
// `predict` is a marked function (agc stages its while loop) reading two
// ag::Variables. ag::onnx::save traces it for a batch of any size and writes
// model.onnx: the variables become initializers holding their values now, the
// loop an ONNX Loop. run_model.cpp loads that file without this source and
// without agc; ONNX Runtime runs it too (README, "ONNX models").
#include <iostream>
#include <string>

#include <ag/ag.h>
#include <ag/onnx.h>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "model.onnx";
  ag::Variable w(ag::random_normal({3, 2}, 0.0, 1.0, ag::float32, /*seed=*/1), "w");
  ag::Variable b(ag::constant({0.5f, -0.25f}), "b");

  // A dense layer, then the TensorFlow guide's tanh loop until the outputs sum to at most 1.
  auto predict = ag::function(
      [&](ag::Tensor x) AG_FUNCTION {
        ag::Tensor h = ag::relu(ag::matmul(x, w.read()) + b.read());
        while (ag::reduce_sum(h) > 1) {
          h = ag::tanh(h);
        }
        return h;
      },
      {.name = "predict", .arg_names = {"x"}});

  ag::onnx::save(predict, path, ag::TensorSpec({ag::kUnknownDim, 3}, ag::float32));
  std::cout << "wrote " << path << "\n";

  ag::Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.5f, 2.0f}});
  std::cout << "predict(x) =\n" << predict(x) << "\n";
}
