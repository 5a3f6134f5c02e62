#include "plain.h"

ag::Tensor Plain::forward(ag::Tensor x) {
  if (x > 0) x = x * 2;
  return x;
}

ag::Tensor Plain::clipped(ag::Tensor x) {
  if (x > 1) x = ag::constant(1.0);
  return x;
}
