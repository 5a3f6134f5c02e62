#pragma once
#include <ag/ag.h>

// Defined in another file, with tensor control flow: agc cannot convert it.
inline ag::Tensor halve_if_big(ag::Tensor x) {
  if (x > 100) x = x / 2;
  return x;
}

// Defined in another file, without tensor control flow: fine to call.
inline ag::Tensor twice(ag::Tensor x) {
  return x * 2;
}
