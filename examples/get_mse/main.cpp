// Graph execution vs eager execution (intro to graphs guide).
//
// get_MSE gives the same result as a graph and eagerly
// (ag::run_functions_eagerly(true) runs every ag::function as plain C++). Its
// std::cout line is a C++ side effect: in graph mode it runs only while
// tracing, so three calls print it once; run eagerly, every call prints it.
// The inputs are random integers with fixed seeds.
#include <iostream>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor get_MSE(ag::Tensor y_true, ag::Tensor y_pred) {
  std::cout << "Calculating MSE!\n";  // NOLINT(ag-side-effect): once per trace
  ag::Tensor sq_diff = ag::pow(y_true - y_pred, 2);
  return ag::reduce_mean(sq_diff);
}

int main() {
  ag::Tensor y_true = ag::random_uniform({5}, 0, 10, ag::int32, /*seed=*/1);
  ag::Tensor y_pred = ag::random_uniform({5}, 0, 10, ag::int32, /*seed=*/2);
  std::cout << y_true << "\n" << y_pred << "\n\n";

  std::cout << "As a graph (prints once, while tracing):\n";
  ag::Tensor error = get_MSE(y_true, y_pred);
  error = get_MSE(y_true, y_pred);
  error = get_MSE(y_true, y_pred);
  std::cout << error << "\n\n";

  // Now, globally set everything to run eagerly to force eager execution.
  ag::run_functions_eagerly(true);
  std::cout << "Eagerly (prints on every call):\n";
  ag::Tensor eager_error = get_MSE(y_true, y_pred);
  eager_error = get_MSE(y_true, y_pred);
  eager_error = get_MSE(y_true, y_pred);
  std::cout << eager_error << "\n";
  // Don't forget to set it back when you are done.
  ag::run_functions_eagerly(false);

  std::cout << "\nSame result: "
            << (error.values_string() == eager_error.values_string() ? "yes" : "no") << "\n";
}
