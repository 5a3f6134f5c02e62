// Polymorphism and tracing (tf.function guide, "What is tracing?", "Obtaining
// concrete functions", "Obtaining graphs").
//
// One ag::function, many graphs: `double_` traces once per argument type
// (dtype and shape). The std::cout line is a C++ side effect, so it runs only
// while tracing: each "Tracing with" line marks a new trace. A call with a type
// seen before reuses its graph silently. A concrete function is one trace: it
// has a signature and a graph, and rejects arguments of another type. C++
// scalars are traced by value (Literal[2]).
#include <iostream>

#include <ag/ag.h>

#include "example_util.h"

int main() {
  // `double` is a C++ keyword, hence the trailing underscore.
  auto double_ = ag::function(
      [](ag::Tensor a) AG_FUNCTION {
        std::cout << "Tracing with " << a << "\n";  // NOLINT(ag-side-effect)
        return a + a;
      },
      {.name = "double", .arg_names = {"a"}});

  std::cout << double_(ag::constant(1)) << "\n\n";
  std::cout << double_(ag::constant(1.1)) << "\n\n";
  std::cout << double_(ag::constant({1, 2})) << "\n\n";
  std::cout << double_(ag::constant("a")) << "\n\n";  // strings: + joins them
  // Types seen before: these don't print 'Tracing with ...'.
  std::cout << double_(ag::constant(2)) << "\n\n";
  std::cout << double_(ag::constant("b")) << "\n\n";

  std::cout << "pretty_printed_concrete_signatures():\n"
            << double_.pretty_printed_concrete_signatures() << "\n\n";

  std::cout << "Obtaining concrete trace\n";
  auto double_ints = double_.get_concrete_function(ag::TensorSpec({}, ag::int32));
  std::cout << "Executing traced function\n";
  std::cout << double_ints(ag::constant(3)) << "\n";
  std::cout << double_ints(ag::constant(4)) << "\n\n";

  // A concrete function from a TensorSpec: the trace of the string call above.
  auto double_strings = double_.get_concrete_function(ag::TensorSpec({}, ag::string));
  std::cout << double_strings(ag::constant("c")) << "\n\n";

  std::cout << double_ints.to_string() << "\n";
  std::cout << double_ints.function_type() << "\n\n";

  // Using a concrete trace with incompatible types throws an error.
  example::assert_raises<ag::TypeError>([&] { double_ints(ag::constant(1.5)); });
  std::cout << "\n";

  // C++ arguments are part of the signature, constrained to their traced value.
  auto pow = ag::function([](ag::Tensor a, int b) AG_FUNCTION { return ag::pow(a, b); },
                          {.name = "pow", .arg_names = {"a", "b"}});
  auto square =
      pow.get_concrete_function(ag::TensorSpec(ag::Shape::unknown_rank(), ag::float32), 2);
  std::cout << square.to_string() << "\n";
  std::cout << "square(10.0, 2) = " << square(ag::constant(10.0), 2) << "\n";
  example::assert_raises<ag::TypeError>([&] { square(ag::constant(10.0), 3); });
  std::cout << "\n";

  // The graph of a trace, one line per node: inputs -> node.
  std::cout << "The graph of double for int32 scalars:\n" << double_ints.graph().to_string();
}
