// Automatic flexibility with reduce_retracing (tf.function guide, "Use
// reduce_retracing for automatic flexibility").
//
// With `reduce_retracing`, a call whose shape differs from the traces seen so
// far traces once more with the differing dims relaxed to None; every later
// vector of any length reuses that general trace.
#include <iostream>

#include <ag/ag.h>

int main() {
  auto g = ag::function(
      [](ag::Tensor x) AG_FUNCTION {
        std::cout << "Tracing with " << x << "\n";  // NOLINT(ag-side-effect)
        return x;
      },
      {.reduce_retracing = true, .name = "g", .arg_names = {"x"}});

  // Traces once.
  std::cout << g(ag::constant({1, 2, 3})) << "\n";
  // Traces again, but more generalized this time.
  std::cout << g(ag::constant({1, 2, 3, 4, 5})) << "\n";
  // No more tracing!
  std::cout << g(ag::constant({1, 2, 3, 4, 5, 6, 7})) << "\n";
  std::cout << g(ag::constant({1, 2, 3, 4, 5, 6, 7, 8, 9})) << "\n";

  std::cout << "\npretty_printed_concrete_signatures():\n"
            << g.pretty_printed_concrete_signatures() << "\n";
}
