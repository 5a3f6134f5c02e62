// Controlling retracing with an input signature (tf.function guide, "Pass a
// fixed input_signature" and "Use unknown dimensions for flexibility").
//
// With `input_signature` an ag::function has exactly one trace, made for the
// given specs: a call with another rank or dtype is a TypeError instead of a
// retrace. A None dimension (ag::kUnknownDim) accepts any size, so vectors of
// any length share that one trace.
#include <iostream>
#include <vector>

#include <ag/ag.h>

#include "example_util.h"

int main() {
  auto next_collatz = ag::function(
      [](ag::Tensor x) AG_FUNCTION {
        std::cout << "Tracing with " << x << "\n";  // NOLINT(ag-side-effect)
        return ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1);
      },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim}, ag::int32)},
       .name = "next_collatz",
       .arg_names = {"x"}});

  std::cout << next_collatz(ag::constant({1, 2})) << "\n";
  // You specified a 1-D tensor in the input signature, so this should fail.
  example::assert_raises<ag::TypeError>([&] { next_collatz(ag::constant({{1, 2}, {3, 4}})); });
  // You specified an int32 dtype in the input signature, so this should fail.
  example::assert_raises<ag::TypeError>([&] { next_collatz(ag::constant({1.0, 2.0})); });
  std::cout << "\n";

  auto g = ag::function(
      [](ag::Tensor x) AG_FUNCTION {
        std::cout << "Tracing with " << x << "\n";  // NOLINT(ag-side-effect)
        return x;
      },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim}, ag::int32)},
       .name = "g",
       .arg_names = {"x"}});
  // No retrace!
  std::cout << g(ag::constant({1, 2, 3})) << "\n";
  std::cout << g(ag::constant({1, 2, 3, 4, 5})) << "\n";
  std::cout << "traces of g: " << g.tracing_count() << "\n";
}
