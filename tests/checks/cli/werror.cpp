// --werror: every finding is an error, and the exit code is 1.
#include <iostream>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  std::cout << x;
  return x;
}
