// Converting a function to a graph (intro to graphs guide, "Converting Python
// functions to graphs").
//
// The `if` tests a tensor, so agc stages it (ag::if_stmt) and both returns
// become branches of one If node: the same graph gives 1 for 1 and 0 for -1.
// The graph is printed one node per line (inputs -> node).
#include <iostream>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor simple_relu(ag::Tensor x) {
  if (ag::greater(x, 0)) {
    return x;
  } else {
    return 0;
  }
}

int main() {
  std::cout << "First branch, with graph: " << simple_relu(ag::constant(1)).values_string() << "\n";
  std::cout << "Second branch, with graph: " << simple_relu(ag::constant(-1)).values_string()
            << "\n";
  std::cout << "traces of simple_relu: " << ag::function_of(&simple_relu).tracing_count() << "\n\n";

  auto tf_simple_relu = ag::function(simple_relu, {.name = "simple_relu", .arg_names = {"x"}});
  ag::Graph graph = tf_simple_relu.get_concrete_function(ag::TensorSpec({}, ag::int32)).graph();
  std::cout << "The graph of simple_relu for an int32 scalar:\n" << graph.to_string();
}
