#include <ag/annotate.h>

#include <iostream>

// Only the annotation header: the output includes what its wrapper calls.
AG_FUNCTION int collatz_steps(int n) {
  int steps = 0;
  while (n != 1) {
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    ++steps;
  }
  return steps;
}

int main() { std::cout << collatz_steps(27) << "\n"; }
