// Calls a function that agc transpiled; checks it was staged and traced once.
#include <iostream>

#include <ag/ag.h>

#include "model.h"

int main() {
  std::cout << tanh_loop(ag::constant({1.0, 2.0, 3.0})) << "\n";
  std::cout << tanh_loop(ag::constant({0.5, 0.25, 4.0})) << "\n";
  ag::FunctionHandle handle = ag::function_of(&tanh_loop);
  std::cout << "staged: " << (handle.is_staged() ? "yes" : "no")
            << ", traces: " << handle.tracing_count() << "\n";
  return handle.is_staged() && handle.tracing_count() == 1 ? 0 : 1;
}
