// Conditionals (tf.function guide, "AutoGraph transformations: Conditionals").
//
// `i` comes from a loop over a tensor range, so each `if` on it is staged:
// both branches are traced into the graph, once, and the branch is chosen at
// run time. The std::cout lines run while tracing only, so every branch
// reports exactly once; ag::print runs on every iteration of every call.
// (agc warns about output that runs only while tracing; here it is the point,
// hence the NOLINT markers.)
#include <iostream>

#include <ag/ag.h>

// NOLINTBEGIN(ag-side-effect)
AG_FUNCTION void fizzbuzz(ag::Tensor n) {
  for (auto i : ag::range(1, n + 1)) {
    std::cout << "Tracing for loop\n";
    if (i % 15 == 0) {
      std::cout << "Tracing fizzbuzz branch\n";
      ag::print("fizzbuzz");
    } else if (i % 3 == 0) {
      std::cout << "Tracing fizz branch\n";
      ag::print("fizz");
    } else if (i % 5 == 0) {
      std::cout << "Tracing buzz branch\n";
      ag::print("buzz");
    } else {
      std::cout << "Tracing default branch\n";
      ag::print(i);
    }
  }
}
// NOLINTEND(ag-side-effect)

int main() {
  fizzbuzz(ag::constant(5));
  fizzbuzz(ag::constant(20));
}
