#include <ag/ag.h>

AG_FUNCTION ag::Tensor count_steps(ag::Tensor x) {
  int steps = 0;
  while (x > 1) {
    x = x / 2;
    steps += 1;
  }
  return x + steps;
}

AG_FUNCTION ag::Tensor flag_branch(ag::Tensor x) {
  bool positive = false;
  if (x > 0) {
    positive = true;
  }
  return positive ? x : -x;
}
