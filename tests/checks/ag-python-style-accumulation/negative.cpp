#include <ag/ag.h>

#include <vector>

// The TensorFlow guide's fix: ag::TensorArray accumulates inside the graph.
AG_FUNCTION ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  ag::TensorArray states(ag::float64, 0, /*dynamic_size=*/true);
  ag::Tensor state = initial_state;
  for (auto i : ag::range(ag::reduce_sum(input_data))) {
    state = ag::tanh(state);
    states = states.write(i, state);
    ag::print(state);
  }
  return states.stack();
}

// A plain C++ loop over three steps: push_back runs three times while tracing,
// as written.
AG_FUNCTION ag::Tensor three_layers(ag::Tensor x) {
  std::vector<ag::Tensor> outputs;
  for (int i = 0; i < 3; ++i) {
    x = ag::tanh(x);
    outputs.push_back(x);
  }
  return ag::concat(outputs, 0);
}

// A container that lives for one iteration of a staged loop.
AG_FUNCTION ag::Tensor scratch(ag::Tensor x) {
  while (ag::reduce_sum(x) > 1) {
    std::vector<ag::Tensor> parts;
    parts.push_back(x);
    parts.push_back(x * 2);
    x = ag::reduce_mean(ag::stack(parts, 0), {0}) / 4;
  }
  return x;
}

// push_back in a staged if (not a loop), and outside marked code.
AG_FUNCTION ag::Tensor branch(ag::Tensor x, std::vector<int>& sizes) {
  if (x > 0) {
    x = x * 2;
  }
  sizes.push_back(1);
  return x;
}

std::vector<ag::Tensor> eager_loop(ag::Tensor x) {
  std::vector<ag::Tensor> out;
  while (x.item<double>() > 1) {
    x = x / 2;
    out.push_back(x);
  }
  return out;
}

int main() {
  std::vector<int> sizes;
  dynamic_rnn(ag::constant({{1.0}}), ag::constant({{0.0}}));
  three_layers(ag::constant({1.0}));
  scratch(ag::constant(8.0));
  branch(ag::constant(1.0), sizes);
  eager_loop(ag::constant(8.0));
}
