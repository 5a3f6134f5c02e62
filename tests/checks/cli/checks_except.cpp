// --checks=ag-*,-ag-side-effect: every check but that one.
#include <cstdlib>
#include <iostream>

#include <ag/ag.h>

int scale = 2;

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  std::cout << x;
  return x * scale + std::rand();
}
