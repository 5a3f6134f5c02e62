#include <ag/ag.h>

#define REPEAT_WHILE(cond) while (cond)
#define BAIL_IF(cond) if (cond) return x

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  REPEAT_WHILE(x > 0) { x = x - 1; }
  return x;
}

AG_FUNCTION ag::Tensor g(ag::Tensor x) {
  while (x > 0) {
    BAIL_IF(x > 5);
    x = x - 1;
  }
  return x;
}
