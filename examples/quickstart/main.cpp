// The demo: eager tensors at work. (Tracing and agc join in later.)
#include <iostream>

#include <ag/ag.h>

int main() {
  ag::Tensor x = ag::constant({{1.0, 2.0}, {3.0, 4.0}});
  ag::Tensor y = x * 2 + 1;
  std::cout << "x = " << x << "\n";
  std::cout << "x * 2 + 1 = " << y << "\n";
  std::cout << "x > 2 = " << (x > 2) << "\n";
  std::cout << "floordiv(-7, 2) = " << ag::floordiv(ag::constant(-7), 2) << "\n";
  return 0;
}
