// Deployment, part 2: load the exported models and run them.
//
// Built without agc and without export_model.cpp: the files are all it
// needs. ag::onnx::load checks a model, traces its graph once and runs it on
// the same plan, passes and kernels as a traced C++ function.
// ag::saved_model::load gives each signature as such a model and the
// variables they share, which an assignment changes for every signature.
#include <iostream>
#include <string>

#include <ag/ag.h>
#include <ag/onnx.h>
#include <ag/saved_model.h>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "model.onnx";
  const std::string saved = argc > 2 ? argv[2] : "saved_model";
  ag::Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.5f, 2.0f}});

  ag::onnx::Model model = ag::onnx::load(path);
  std::cout << model.signature() << "\n";
  std::cout << "model(x) =\n" << model({x})[0] << "\n";

  ag::saved_model::SavedModel loaded = ag::saved_model::load(saved);
  for (const std::string& name : loaded.signature_names())
    std::cout << name << ": " << loaded.signature(name).signature() << "\n";
  std::cout << "predict(x) =\n" << loaded.signature("predict")({x})[0] << "\n";
  std::cout << "hidden(x) =\n" << loaded.signature("hidden")({x})[0] << "\n";

  // Both signatures read the loaded b.
  loaded.variable("b").assign(ag::constant({-10.0f, 0.0f}));
  std::cout << "after b.assign([-10, 0]), hidden(x) =\n"
            << loaded.signature("hidden")({x})[0] << "\n";
}
