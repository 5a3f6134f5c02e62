#include "model.h"

ag::Tensor Dense::forward(ag::Tensor x) {
  if (x > 0) x = x * 2;
  return x;
}
