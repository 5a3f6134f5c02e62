// Pass tensors instead of C++ literals (tf.function guide, "Pass tensors
// instead of python literals"; "Separate Function objects do not share
// traces").
//
// A C++ scalar argument is traced by value (Literal[10]), so every new value
// traces a new graph, although the graph is the same. An ag::Tensor argument
// is traced by dtype and shape, so one trace serves every step count. The
// loop over ag::range(num_steps) is staged by agc either way. std::cout runs
// while tracing; ag::print runs on every call.
#include <iostream>

#include <ag/ag.h>

void train_one_step() {}

// A template, like Python's duck typing: train<int> and train<ag::Tensor>.
template <class Steps>
AG_FUNCTION void train(Steps num_steps) {
  std::cout << "Tracing with num_steps = " << num_steps << "\n";  // NOLINT(ag-side-effect)
  ag::print("Executing with num_steps =", num_steps);
  for (auto step : ag::range(num_steps)) {
    (void)step;
    train_one_step();
  }
}

int main() {
  std::cout << "Retracing occurs for different C++ arguments.\n";
  train(10);
  train(20);

  std::cout << "\nTraces are reused for Tensor arguments.\n";
  train(ag::constant(10));
  train(ag::constant(20));

  // Separate ag::function objects are guaranteed not to share traces.
  std::cout << "\nSeparate functions, separate traces.\n";
  auto f = []() AG_FUNCTION {
    std::cout << "Tracing!\n";  // NOLINT(ag-side-effect)
    ag::print("Executing");
  };
  ag::function(f)();
  ag::function(f)();
}
