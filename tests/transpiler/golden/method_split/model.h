#pragma once
#include <ag/ag.h>

// The header half of a header/source split: agc cannot add the impl member
// here, since it converts only input.cpp.
class Dense : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor forward(ag::Tensor x);
};
