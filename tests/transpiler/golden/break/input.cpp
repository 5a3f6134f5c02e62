#include <ag/ag.h>

AG_FUNCTION ag::Tensor first_over(ag::Tensor x, ag::Tensor limit) {
  ag::Tensor found = 0;
  for (auto v : x) {
    if (v > limit) {
      found = v;
      break;
    }
    found = found - 1;
  }
  return found;
}

AG_FUNCTION ag::Tensor count_until(ag::Tensor n) {
  ag::Tensor i = 0;
  while (true) {  // a plain loop becomes staged: its break depends on a tensor
    if (i >= n) break;
    i = i + 1;
  }
  return i;
}
