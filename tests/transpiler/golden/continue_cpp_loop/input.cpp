#include <ag/ag.h>

#include <iostream>

// A staged `continue` of a C++ loop: the loop stays C++ (unrolled while
// tracing) and the rest of each iteration is guarded by the continue flag. A
// C++ `continue` inside that guard is lowered to the flag too, since the
// guard is a lambda that a C++ continue cannot leave.
AG_FUNCTION ag::Tensor skip_sum(ag::Tensor x) {
  ag::Tensor total = ag::constant(0.0);
  for (int k = 0; k < 5; ++k) {
    if (x > k) continue;
    if (k % 2 == 1) continue;
    total = total + k;
  }
  return total;
}

int main() {
  std::cout << skip_sum(ag::constant(-1.0)) << " " << skip_sum(ag::constant(1.5)) << " "
            << skip_sum(ag::constant(9.0)) << "\n";
}
