// ag-unconverted-call: idiomatic code that must produce no finding.
#include <ag/ag.h>

#include "helpers.h"

// Defined in this file: agc converts it in place.
ag::Tensor clamp_low(ag::Tensor x) {
  if (x < 0) x = ag::constant(0.0);
  return x;
}

AG_FUNCTION ag::Tensor g(ag::Tensor x) {
  x = clamp_low(x);
  x = twice(x);  // no tensor control flow
  return ag::tanh(x);
}

// Not converted code may call anything.
int main() {
  ag::Tensor r = halve_if_big(ag::constant(300.0));
  return r.item<double>() > 0 ? 0 : 1;
}
