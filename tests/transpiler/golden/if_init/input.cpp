// A staged if with an init statement or a condition variable: the declaration
// stays in front, in a block that keeps its scope.
#include <ag/ag.h>
#include <iostream>

AG_FUNCTION ag::Tensor with_init(ag::Tensor x) {
  if (ag::Tensor y = x * 2; y > 0) x = y;
  if (x = x + 1; x > 100) {
    x = x - 100;
  } else if (ag::Tensor z = x - 3; z > 0) {
    x = z;
  }
  return x;
}

AG_FUNCTION ag::Tensor condition_variable(ag::Tensor x) {
  ag::Tensor y = 0;
  if (ag::Tensor in_range = x > 2 && x < 10) {
    y = ag::cast(in_range, ag::int32) * 100 + x;
  } else if (ag::Tensor big = x >= 10) {
    y = x * 2;
  } else {
    y = -x;
  }
  return y;
}

int main() {
  for (int v : {-5, 0, 3, 60})
    std::cout << with_init(ag::Tensor(v)).item<int>() << " "
              << condition_variable(ag::Tensor(v)).item<int>() << "\n";
}
