#pragma once
#include <ag/ag.h>

// The header half of a header/source split: the marked methods declared here
// are defined in input.cpp, and agc converts input.cpp without changing this
// file (AG_FUNCTION here is only an annotation).
class Counter : public ag::Module {
 public:
  explicit Counter(double step) : step_(step) {}

  // Reads the private step_ in a staged loop.
  AG_FUNCTION ag::Tensor count_to(ag::Tensor limit);
  // const, and overloaded: each overload has its own traces.
  AG_FUNCTION ag::Tensor scaled(ag::Tensor x) const;
  AG_FUNCTION ag::Tensor scaled(ag::Tensor x, ag::Tensor by) const;
  // A member template, instantiated in input.cpp.
  template <typename T>
  AG_FUNCTION ag::Tensor shifted(ag::Tensor x, T by) const;
  // A static member: no object, so one trace per signature.
  AG_FUNCTION static ag::Tensor clipped(ag::Tensor x, double limit);

  // How often count_to's body ran: on every call eagerly, once per trace staged.
  int body_runs() const { return body_runs_; }

 private:
  double step_;
  int body_runs_ = 0;
};
