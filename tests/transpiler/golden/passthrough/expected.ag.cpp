#include <ag/ag.h>

#include <iostream>

// No marked function: the output is the input, byte for byte.
ag::Tensor plain(ag::Tensor x) {
  if (x > 0) {   x = -x; }
  return x;
}

int main() { std::cout << plain(2) << " " << plain(-2) << "\n"; }
