#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ag::Tensor y;
  if (x > 0) {
    y = x;
  }
  return y;
}

AG_FUNCTION ag::Tensor h(ag::Tensor x) {
  ag::Tensor z;
  if (x > 0) {
  } else {
    z = -x;
  }
  return z + 1;
}

AG_FUNCTION ag::Tensor loop(ag::Tensor x) {
  ag::Tensor last;
  while (x > 0) {
    x = x - 1;
    last = last + x;
  }
  return last;
}

// The branch that leaves `w` unset is the implicit else of the `else if`.
AG_FUNCTION ag::Tensor chain(ag::Tensor x) {
  ag::Tensor w;
  if (x > 0) {
    w = x;
  } else if (x < -1) {
    w = -x;
  }
  return w;
}
