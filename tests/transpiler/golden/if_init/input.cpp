// A staged if with an init statement: the init stays in front, in a block
// that keeps its scope.
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

int main() {
  for (int v : {-5, 0, 3, 60}) std::cout << with_init(ag::Tensor(v)).item<int>() << "\n";
}
