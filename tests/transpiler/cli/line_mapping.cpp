// Compiled after transpiling, with -DINJECT_ERROR: the errors must be
// reported at this file's lines 14 and 21, not at the generated lines.
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ag::Tensor y = 0;
  while (x > 0) {
    if (x > 3) {
      break;
    }
    x = x - 1;
    y = y + x;
#ifdef INJECT_ERROR
    y = y + undefined_name;
#endif
  }
  return y;
}

#ifdef INJECT_ERROR
int after() { return also_undefined; }
#endif
