#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor first_over(ag::Tensor x, ag::Tensor limit) {
  ag::Tensor found = 0;
  for (auto v : x) {
    if (v > limit) {
      found = v;
      break;
    }
    found = found - 1;
  }
  return found;
}

AG_FUNCTION ag::Tensor count_until(ag::Tensor n) {
  ag::Tensor i = 0;
  while (true) {  // a plain loop becomes staged: its break depends on a tensor
    if (i >= n) break;
    i = i + 1;
  }
  return i;
}

int main() {
  ag::Tensor xs = ag::constant({1, 5, 2, 7});
  std::cout << first_over(xs, 4) << "\n";
  std::cout << first_over(xs, 10) << "\n";
  std::cout << count_until(5) << "\n";
  std::cout << count_until(0) << "\n";
}
