// A struct modified in staged code is carried as state through its ag_fields
// hook; without one, agc says so at the assignment and shows the hook to add.
#include <ag/ag.h>

struct Bounds {
  ag::Tensor lo;
  ag::Tensor hi;
};

AG_FUNCTION ag::Tensor widen(ag::Tensor x) {
  Bounds b{x, x};
  if (x > 0) {
    b.hi = x * 2;
  }
  return b.hi - b.lo;
}
