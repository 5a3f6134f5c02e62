#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor power(ag::Tensor x, ag::Tensor n) {
  ag::Tensor result = 1;
  for (ag::Tensor i = 0; i < n; i = i + 1) {
    result = result * x;
  }
  return result;
}

AG_FUNCTION ag::Tensor skip_odd(ag::Tensor n) {
  ag::Tensor total = 0;
  ag::Tensor i;
  for (i = 0; i < n; i = i + 1) {
    if (i % 2 == 1) continue;  // the step still runs
    total = total + i;
  }
  return total + i;
}

int main() {
  std::cout << power(3, 4) << "\n";
  std::cout << power(ag::constant({2, -3}), 3) << "\n";
  std::cout << skip_odd(10) << "\n";
}
