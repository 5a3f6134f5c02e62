// A marked template that returns a dependent struct from an `if` on T. agc
// cannot know the condition's type, so it stages the `if` and lowers the
// `return` with tensor flags. With T = int the condition is a C++ bool and
// the flags stay eager: a struct without ag_fields is fine as the state of
// constructs that never stage. With T = ag::Tensor, the struct's ag_fields
// make it state like any other.
#include <ag/ag.h>

#include <iostream>
#include <tuple>

template <class T>
struct Interval {
  T lo;
  T hi;
};

template <class T>
auto ag_fields(Interval<T>& i) {
  return std::tie(i.lo, i.hi);
}

template <class T>
struct Span {
  T first;
  T last;
};

template <class T>
AG_FUNCTION Span<T> span_around(T x) {
  Span<T> s{};
  if (x > 0) {
    s.first = x - 1;
    s.last = x + 1;
    return s;
  }
  s.first = x;
  s.last = -x;
  return s;
}

template <class T>
AG_FUNCTION Interval<T> interval_around(T x) {
  Interval<T> i{};
  if (x > 0) {
    i.lo = x - 1;
    i.hi = x + 1;
    return i;
  }
  i.lo = x;
  i.hi = -x;
  return i;
}

int main() {
  for (int x : {3, -2}) {
    Span<int> s = span_around(x);
    Interval<int> i = interval_around(x);
    Interval<ag::Tensor> t = interval_around(ag::Tensor(double(x)));
    std::cout << x << ": " << s.first << " " << s.last << " | " << i.lo << " " << i.hi << " | "
              << t.lo << " " << t.hi << "\n";
  }
}
