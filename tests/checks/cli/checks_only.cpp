// --checks=-*,ag-side-effect: only that check runs.
#include <cstdlib>
#include <iostream>

#include <ag/ag.h>

int scale = 2;

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  std::cout << x;
  return x * scale + std::rand();
}
