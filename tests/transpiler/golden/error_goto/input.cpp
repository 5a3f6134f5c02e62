#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  while (x > 0) {
    x = x - 1;
    if (x > 10) goto out;
  }
out:
  return x;
}
