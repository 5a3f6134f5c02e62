#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor abs_value(ag::Tensor x) {
  if (x >= 0) {
    return x;
  } else {
    return -x;
  }
}

AG_FUNCTION ag::Tensor find(ag::Tensor xs, ag::Tensor target) {
  ag::Tensor index = 0;
  for (auto x : xs) {
    if (x == target) {
      return index;
    }
    index = index + 1;
  }
  return ag::constant(-1);  // the same dtype as index: one staged return value
}

AG_FUNCTION void maybe_print(ag::Tensor x) {
  if (x > 0) return;
  ag::print(x);
}

int main() {
  std::cout << abs_value(ag::constant(-3.0)) << " " << abs_value(ag::constant(2.0)) << "\n";
  ag::Tensor xs = ag::constant({4, 8, 15, 16});
  std::cout << find(xs, 15) << " " << find(xs, 5) << "\n";
  maybe_print(ag::constant(-5.0));
  maybe_print(ag::constant(5.0));
  ag::print("done");
}
