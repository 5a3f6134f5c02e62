#include <ag/ag.h>

// A test framework's TEST_CASE defines the function whose body follows.
#define TEST_CASE(name) AG_FUNCTION ag::Tensor name(ag::Tensor x)

TEST_CASE(decrements) {
  if (x > 0) x = x - 1;
  return x;
}
