// A plain C++ `if (j == 1) return x;` inside an `int` loop, in a function with
// another, staged return. Nothing in the loop depends on a tensor: it stays a
// C++ loop (AutoGraph unrolls it), and the lowered return leaves it with a
// C++ break after setting the return flag.
#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor step_twice(ag::Tensor x) {
  if (x > 10) return x;
  for (int j = 0; j < 3; ++j) {
    x = x + 1;
    ag::print(x);
    if (j == 1) return x;
  }
  return x * 2;
}

int main() {
  std::cout << step_twice(ag::constant(1.0f)) << " " << step_twice(ag::constant(20.0f)) << "\n";
}
