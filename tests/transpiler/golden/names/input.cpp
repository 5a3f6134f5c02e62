#include <ag/ag.h>

#include <iostream>

int agc_impl_f = 0;  // user names starting with agc_ push generated names aside

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ag::Tensor agc_break_1 = x;
  while (x > 0) {
    if (x > agc_break_1) break;
    x = x - 1;
  }
  return x;
}

int main() {
  std::cout << f(ag::constant(3)) << "\n";
  std::cout << f(ag::constant(-2)) << "\n";
}
