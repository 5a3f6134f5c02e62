#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor sign(ag::Tensor x, bool verbose) {
  ag::Tensor y;
  if (x > 0) {
    y = ag::constant(1.0);
  } else if (x < 0) {
    y = ag::constant(-1.0);
  } else {
    y = ag::constant(0.0);
  }
  // A plain bool condition runs at trace time: kept as written.
  if (verbose) {
    ag::print(y);
  }
  ag::Tensor z = y;
  if (ag::reduce_sum(x) > 10)
    z = z * 2;  // no braces
  ag::Tensor unused;
  if (x > 1) {
    unused = x;  // dead after the if: not state
  }
  return z;
}

int main() {
  std::cout << sign(ag::constant(3.0), true) << "\n";
  std::cout << sign(ag::constant(-2.0), true) << "\n";
  std::cout << sign(ag::constant(0.0), false) << "\n";
  std::cout << sign(ag::constant(20.0), false) << "\n";
}
