#include <ag/ag.h>

#include <iostream>

// The condition's type depends on T: agc emits the staged form, and the
// runtime picks plain control flow for bool at compile time.
template <typename T>
AG_FUNCTION T clip(T x, T limit) {
  if (x > limit) {
    x = limit;
  }
  return x;
}

ag::Tensor use(ag::Tensor x) { return clip(x, ag::Tensor(1)); }

int main() {
  std::cout << use(ag::constant(3)) << " " << use(ag::constant(-3)) << "\n";
  std::cout << clip(5, 2) << " " << clip(1.5, 2.0) << "\n";
}
