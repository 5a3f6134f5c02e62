// Regression (kill_after_jump): a variable assigned before a break and overwritten (unread) after
// the staged if.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin kill_after_jump
AG_FUNCTION ag::Tensor kill_after_jump(ag::Tensor x, ag::Tensor n, int m) {
  ag::Tensor v = x;
  for (auto i : ag::range(n)) {
    if (i == 1) {
      v = x + 1;
      break;
    }
    v = x * 2;
  }
  return v;
}
// fz-end kill_after_jump

static const FzCase fz_cases[] = {
    {"kill_after_jump",
     &kill_after_jump,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
