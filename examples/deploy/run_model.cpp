// Deployment, part 2: load an ONNX model and run it.
//
// Built without agc and without export_model.cpp: the model file is all it
// needs. ag::onnx::load checks the model, traces its graph once and runs it
// on the same plan, passes and kernels as a traced C++ function.
#include <iostream>
#include <string>

#include <ag/ag.h>
#include <ag/onnx.h>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "model.onnx";
  ag::onnx::Model model = ag::onnx::load(path);
  std::cout << model.signature() << "\n";

  ag::Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.5f, 2.0f}});
  std::cout << "model(x) =\n" << model({x})[0] << "\n";
}
