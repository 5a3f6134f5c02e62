#include <ag/ag.h>

class Plain {
 public:
  AG_FUNCTION ag::Tensor f(ag::Tensor x) {
    if (x > 0) x = x - 1;
    return x;
  }
};

struct Base {};

struct Derived : Base {
  AG_FUNCTION ag::Tensor g(ag::Tensor x) {
    if (x > 0) x = x - 1;
    return x;
  }
};
