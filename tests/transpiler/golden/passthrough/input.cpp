#include <ag/ag.h>

// No marked function: the output is the input, byte for byte.
ag::Tensor plain(ag::Tensor x) {
  if (x > 0) {   x = -x; }
  return x;
}
