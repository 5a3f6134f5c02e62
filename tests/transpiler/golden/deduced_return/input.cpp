// Deduced return types with a `return` inside staged code: the lowered return
// keeps its value in a local whose type agc spells fully qualified, also when
// the body names the type without its namespace.
#include <ag/ag.h>

#include <iostream>

namespace shapes {
using namespace ag;

AG_FUNCTION auto clip(Tensor x) {
  if (x > 10) {
    return x * 0 + 10;
  }
  return x;
}

AG_FUNCTION decltype(auto) halve_until_small(Tensor x) {
  while (x > 1) {
    if (x < 3) return x - 1;
    x = x / 2;
  }
  return x;
}

// An unmarked helper with a deduced type, called from marked code.
auto sign(Tensor x) {
  if (x < 0) return ag::constant(-1.0);
  return ag::constant(1.0);
}

template <class T>
AG_FUNCTION T absolute(T x) {
  if (x < 0) return -x;
  return x;
}
}  // namespace shapes

AG_FUNCTION ag::Tensor combine(ag::Tensor x) {
  auto twice_positive = [](ag::Tensor v) {
    if (v > 0) return v * 2;
    return v;
  };
  return shapes::sign(x) + twice_positive(x) + shapes::absolute(x);
}

int main() {
  for (double x : {-4.0, 2.5, 5.0, 40.0})
    std::cout << x << ": " << shapes::clip(ag::Tensor(x)) << " "
              << shapes::halve_until_small(ag::Tensor(x)) << " " << combine(ag::Tensor(x)) << "\n";
}
