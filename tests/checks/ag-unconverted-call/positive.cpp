// ag-unconverted-call: a function with tensor control flow in another file.
#include <ag/ag.h>

#include "helpers.h"

AG_FUNCTION ag::Tensor g(ag::Tensor x) {
  x = halve_if_big(x);
  x = halve_if_big(x + 1);  // reported once per called function
  return x;
}

AG_FUNCTION ag::Tensor h(ag::Tensor x) {
  auto step = [&] { return halve_if_big(x); };
  return step();
}
