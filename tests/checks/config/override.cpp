// --checks on the command line applies after .agc.yaml: ag-side-effect is back.
#include <iostream>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  std::cout << x;
  return x;
}
