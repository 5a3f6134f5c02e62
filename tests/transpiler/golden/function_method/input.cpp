#include <ag/ag.h>

#include <iostream>

class Dense : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor x) {
    if (ag::reduce_sum(x) > 0) {
      x = ag::matmul(x, x);
    }
    return x;
  }

  AG_FUNCTION ag::Tensor shifted(ag::Tensor x, ag::Tensor shift) const { return x + shift; }
};

int main() {
  Dense dense;
  std::cout << dense.operator_call(ag::constant({{1.0, 2.0}, {3.0, 4.0}})) << "\n";
  std::cout << dense.operator_call(ag::constant({{-1.0, 0.0}, {0.0, -1.0}})) << "\n";
  std::cout << dense.shifted(ag::constant({1.0, 2.0}), ag::constant(0.5)) << "\n";
}
