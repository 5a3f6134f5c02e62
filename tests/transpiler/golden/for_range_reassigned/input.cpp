// A range for whose body reassigns its loop variable: the variable is the
// parameter of the body's lambda, never part of the loop's state.
#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor collatz_steps(ag::Tensor n) {
  ag::Tensor total = 0;
  for (ag::Tensor i : ag::range(n)) {
    i = 3 * i + 1;
    total = total + i;
  }
  return total;
}

int main() {
  std::cout << collatz_steps(ag::constant(4)) << "\n";
}
