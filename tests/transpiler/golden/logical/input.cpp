#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor logic(ag::Tensor a, ag::Tensor b, bool flag) {
  ag::Tensor r = 0;
  if (a > 0 && (b > 0 || !flag)) {
    r = a;
  }
  if (!(a > b)) r = b;
  if (flag && a > 1) r = r + 1;  // bool left operand: short-circuits at trace time
  ag::Tensor m = a > b ? a : b;
  bool plain = flag && !flag;  // all bool: untouched
  if (plain || flag) r = r * 2;
  return a > 0 || b > 0;
}

int main() {
  int inputs[][2] = {{2, 1}, {-1, 3}, {1, -1}, {0, 0}};
  for (auto& in : inputs) {
    std::cout << logic(in[0], in[1], true) << " " << logic(in[0], in[1], false) << "\n";
  }
}
