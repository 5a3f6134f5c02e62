#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  if (x > 0) {
    try {
      x = x - 1;
    } catch (...) {
    }
  } else {
    throw 42;
  }
  return x;
}
