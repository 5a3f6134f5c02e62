// Regression (kill_after_return): a staged return, then a variable overwritten (unread) by the
// guarded rest.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin kill_after_return
AG_FUNCTION ag::Tensor kill_after_return(ag::Tensor x, ag::Tensor n, int m) {
  ag::Tensor v = x;
  if (n > 1) {
    v = x + 1;
    if (ag::reduce_sum(x) > 0) return v;
  }
  v = x * 2;
  return v;
}
// fz-end kill_after_return

static const FzCase fz_cases[] = {
    {"kill_after_return",
     &kill_after_return,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
