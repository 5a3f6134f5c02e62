#include <ag/ag.h>

// A return after a staged `continue` of a C++ loop runs inside the continue's
// guard, so it leaves staged code: the loop would have to be staged, which its
// int counter cannot be. agc says so (it used to emit a return inside the
// guard's lambda, which does not compile).
AG_FUNCTION ag::Tensor first_small(ag::Tensor x) {
  for (int k = 0; k < 3; ++k) {
    if (x > k) continue;
    return x * k;
  }
  return x;
}
