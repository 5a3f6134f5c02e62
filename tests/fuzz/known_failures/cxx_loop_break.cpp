// Known failure (cxx_loop_break): break out of a C++ for loop under a tensor condition
// Expected to fail until issue 14 fixes it; then move it to ../regressions/.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin cxx_loop_break
AG_FUNCTION ag::Tensor cxx_loop_break(ag::Tensor x, ag::Tensor n, int m) {
  ag::Tensor v = x;
  for (int k = 0; k < 3; ++k) {
    v = v + 1;
    if (ag::reduce_sum(v) > 4) break;
  }
  return v;
}
// fz-end cxx_loop_break

static const FzCase fz_cases[] = {
    {"cxx_loop_break",
     &cxx_loop_break,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
