#include <ag/ag.h>

#include <iostream>
#include <vector>

// Values stay tensors in converted code; reading them is fine outside it,
// and in a host function, which runs eagerly.
AG_FUNCTION ag::Tensor scale(ag::Tensor x) {
  ag::host_function(
      [](const std::vector<ag::Tensor>& in) -> std::vector<ag::Tensor> {
        std::cout << in[0].item<float>() << "\n";
        return {};
      },
      {ag::reduce_max(x)}, {});
  return x / ag::reduce_max(x);
}

float unconverted(ag::Tensor x) {
  return x.item<float>();
}

int main() {
  std::cout << scale(ag::constant({1.0f, 2.0f})).to_vector<float>()[0] << "\n";
  std::cout << unconverted(ag::constant(2.0f)) << "\n";
}
