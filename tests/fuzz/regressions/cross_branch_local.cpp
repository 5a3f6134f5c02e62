// Regression (cross_branch_local): a local set in the then-branch and read in the else-branch, dead
// after the if.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin cross_branch_local
AG_FUNCTION ag::Tensor cross_branch_local(ag::Tensor x, ag::Tensor n, int m) {
  ag::Tensor v = x;
  if (ag::reduce_sum(x) > 0) {
    v = x + 1;
  } else {
    x = v * 2;
  }
  v = x;
  return v;
}
// fz-end cross_branch_local

static const FzCase fz_cases[] = {
    {"cross_branch_local",
     &cross_branch_local,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
