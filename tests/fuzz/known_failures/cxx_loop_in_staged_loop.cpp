// Known failure (cxx_loop_in_staged_loop): a C++ for loop inside the body of a staged loop
// Expected to fail until issue 14 fixes it; then move it to ../regressions/.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin cxx_loop_in_staged_loop
AG_FUNCTION ag::Tensor cxx_loop_in_staged_loop(ag::Tensor x, ag::Tensor n, int m) {
  ag::Tensor v = x;
  for (auto i : ag::range(n)) {
    for (int k = 0; k < 2; ++k) v = v + k;
  }
  return v;
}
// fz-end cxx_loop_in_staged_loop

static const FzCase fz_cases[] = {
    {"cxx_loop_in_staged_loop",
     &cxx_loop_in_staged_loop,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
