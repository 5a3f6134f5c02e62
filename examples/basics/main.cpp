// Functions inside functions (tf.function guide, "Usage").
//
// `add` and `dense_layer` are marked AG_FUNCTION, so each is an ag::function:
// called from plain code it traces once per signature and then runs its graph.
// Called while `dense_layer` is being traced, `add` runs inline: its ops go
// into dense_layer's graph and `add` makes no trace of its own for that call.
#include <iostream>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor add(ag::Tensor a, ag::Tensor b) {
  return a + b;
}

AG_FUNCTION ag::Tensor dense_layer(ag::Tensor x, ag::Tensor w, ag::Tensor b) {
  return add(ag::matmul(x, w), b);  // this file's add: the op is ag::add
}

int main() {
  std::cout << "add(ones([2, 2]), ones([2, 2])):\n"
            << add(ag::ones({2, 2}), ag::ones({2, 2})) << "\n";
  std::cout << "dense_layer(ones([3, 2]), ones([2, 2]), ones([2])):\n"
            << dense_layer(ag::ones({3, 2}), ag::ones({2, 2}), ag::ones({2})) << "\n";

  // add traced once, for its own call; dense_layer's call inlined it.
  std::cout << "traces of add: " << ag::function_of(&add).tracing_count() << "\n";
  std::cout << "traces of dense_layer: " << ag::function_of(&dense_layer).tracing_count() << "\n";

  // The graph of dense_layer holds add's op: MatMul, then add.
  auto traced = ag::function(dense_layer, {.name = "dense_layer", .arg_names = {"x", "w", "b"}});
  ag::Graph graph = traced
                        .get_concrete_function(ag::TensorSpec({3, 2}, ag::float32),
                                               ag::TensorSpec({2, 2}, ag::float32),
                                               ag::TensorSpec({2}, ag::float32))
                        .graph();
  std::cout << "The graph of dense_layer:\n" << graph.to_string();
}
