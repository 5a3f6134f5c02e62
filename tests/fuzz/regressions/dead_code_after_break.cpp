// Regression (dead_code_after_break): an assignment after a C++ break is never
// reached; it must not take the variable out of the state of the staged if
// before the break, whose branch assigns it.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin dead_code_after_break
AG_FUNCTION ag::Tensor dead_code_after_break(ag::Tensor x, ag::Tensor n, int m) {
  ag::Tensor v = x;
  for (int k = 0; k < 3; ++k) {
    if (ag::reduce_sum(x) > 0) {
      v = fz_clip(x * 3);
    } else {
      v = fz_clip(x - n);
    }
    break;
    v = fz_clip(x + 1);
  }
  return v * 2;
}
// fz-end dead_code_after_break

static const FzCase fz_cases[] = {
    {"dead_code_after_break",
     &dead_code_after_break,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
