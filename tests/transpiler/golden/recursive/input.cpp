#include <ag/ag.h>
#include "other.h"

// Called from a marked function and defined here: converted in place.
ag::Tensor clamp_low(ag::Tensor x) {
  if (x < 0) {
    x = ag::constant(0.0);
  }
  return x;
}

int untouched(int v) { return v > 0 ? v : -v; }

AG_FUNCTION ag::Tensor g(ag::Tensor x) {
  x = clamp_low(x);
  x = halve_if_big(x);
  return x + untouched(3);
}
