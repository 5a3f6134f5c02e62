#include <ag/ag.h>

int agc_impl_f = 0;  // user names starting with agc_ push generated names aside

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ag::Tensor agc_break_1 = x;
  while (x > 0) {
    if (x > agc_break_1) break;
    x = x - 1;
  }
  return x;
}
