// .agc.yaml here disables ag-side-effect and makes ag-frozen-value an error.
#include <iostream>

#include <ag/ag.h>

int scale = 2;

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  std::cout << x;
  return x * scale;
}
