#pragma once
#include <ag/ag.h>

// A class whose marked method is defined in input.cpp, but that does not
// derive from ag::Module: its instances have no id to key their traces by.
class Plain {
 public:
  AG_FUNCTION ag::Tensor forward(ag::Tensor x);
  // A static member needs no module.
  AG_FUNCTION static ag::Tensor clipped(ag::Tensor x);
};
