// A tensor `break` inside an `int` loop stages the loop; the counter cannot be
// staged. The error names the `break` and shows the tensor range loop.
#include <ag/ag.h>

AG_FUNCTION ag::Tensor first_positive(ag::Tensor xs, int n) {
  ag::Tensor found = -1;
  for (int k = 0; k < n; ++k) {
    if (xs[k] > 0) {
      found = xs[k];
      break;
    }
  }
  return found;
}
