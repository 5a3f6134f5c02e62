#include <ag/ag.h>

// A tensor has no conversion to an integer: Clang itself rejects the switch,
// at the user's line, and agc exits 1.
AG_FUNCTION ag::Tensor pick(ag::Tensor x) {
  switch (x) {
    case 0:
      return x;
    default:
      return x + 1;
  }
}

// A dependent switch may be on an integer: not an error.
template <typename T>
AG_FUNCTION T pick_generic(T x) {
  switch (x) {
    case 0:
      return x;
    default:
      return x + 1;
  }
}
