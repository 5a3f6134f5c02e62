// Calls a function that agc transpiled; checks it was staged and traced once.
#include <iostream>

#include <ag/ag.h>

#include "model.h"

int main() {
  std::cout << tanh_loop(ag::constant({1.0, 2.0, 3.0})) << "\n";
  std::cout << tanh_loop(ag::constant({0.5, 0.25, 4.0})) << "\n";
  // The runtime's element accessors, which must link whichever compiler built it.
  ag::Tensor counts = ag::constant(std::vector<int>{3, 1, 2}, ag::Shape{3});
  std::cout << "sum " << ag::reduce_sum(counts).item<long>() << ", halves";
  for (double h : (counts.to_vector<float>())) std::cout << " " << h / 2;
  std::cout << "\n";
  ag::FunctionHandle handle = ag::function_of(&tanh_loop);
  std::cout << "staged: " << (handle.is_staged() ? "yes" : "no")
            << ", traces: " << handle.tracing_count() << "\n";
  return handle.is_staged() && handle.tracing_count() == 1 ? 0 : 1;
}
