#include <ag/ag.h>

#include <iostream>

ag::Tensor run(ag::Tensor x) {
  auto body = [](ag::Tensor v) AG_FUNCTION {
    while (v > 1) {
      v = v / 2;
    }
    return v;
  };
  auto unmarked = [](ag::Tensor v) { return v > 0 ? v : -v; };  // not converted
  return body(x) + unmarked(x);
}

int main() {
  std::cout << run(ag::constant(10.0)) << "\n";
  std::cout << run(ag::constant(-4.0)) << "\n";
}
