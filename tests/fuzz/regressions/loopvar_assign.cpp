// Regression (loopvar_assign): a range-for body that reassigns its loop variable.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin loopvar_assign
AG_FUNCTION ag::Tensor loopvar_assign(ag::Tensor x, ag::Tensor n, int m) {
  ag::Tensor v = x;
  for (auto i : ag::range(n)) {
    i = i + 1;
    v = v + i;
  }
  return v;
}
// fz-end loopvar_assign

static const FzCase fz_cases[] = {
    {"loopvar_assign",
     &loopvar_assign,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
