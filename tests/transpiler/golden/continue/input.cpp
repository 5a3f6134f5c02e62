#include <ag/ag.h>

#include <iostream>

// fizzbuzz-count from the AutoGraph guide.
AG_FUNCTION ag::Tensor fizzbuzz_count(ag::Tensor n) {
  ag::Tensor count = 0;
  for (auto i : ag::range(1, n + 1)) {
    if (i % 15 == 0) {
      count = count + 1;
      continue;
    }
    if (i % 3 == 0) continue;
    count = count + 2;
  }
  return count;
}

int main() {
  std::cout << fizzbuzz_count(15) << "\n";
  std::cout << fizzbuzz_count(31) << "\n";
}
