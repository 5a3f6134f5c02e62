// Non-strict execution (intro to graphs guide, "Non-strict execution").
//
// Eagerly, every op runs: gather(x, [1]) on a vector of length 1 fails. In a
// graph only the ops needed for the results (and for effects such as
// ag::print and variable updates) run, so the unused gather is dropped and
// nothing fails. Do not rely on an error being raised inside a graph.
#include <iostream>

#include <ag/ag.h>

ag::Tensor unused_return_eager(ag::Tensor x) {
  // Getting index 1 fails when x has length 1.
  ag::gather(x, ag::constant({1}));  // unused
  return x;
}

AG_FUNCTION ag::Tensor unused_return_graph(ag::Tensor x) {
  ag::gather(x, ag::constant({1}));  // unused
  return x;
}

int main() {
  try {
    std::cout << unused_return_eager(ag::constant({0.0})) << "\n";
  } catch (const ag::Error& e) {
    // All operations run eagerly, so an error is raised.
    std::cout << e.what() << "\n";
  }
  // Only the needed operations run as a graph. The error is not raised.
  std::cout << unused_return_graph(ag::constant({0.0})) << "\n";
}
