// Marked declarations as libraries write them: unnamed template parameters
// (a type with a default, an enable_if on a non-type parameter, a pack), a
// default argument that is a macro's invocation, a line comment before the
// body, and explicit specializations of a marked template, which stay the
// user's unmarked code.
#include <ag/ag.h>

#include <iostream>
#include <type_traits>

#define AG_TEST_SCALE(x) ((x) * 2)

template <typename T, typename = void>
AG_FUNCTION ag::Tensor halve_if_big(ag::Tensor x, T limit) {
  if (x > limit) x = x / 2;
  return x;
}

template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
AG_FUNCTION ag::Tensor count_down(ag::Tensor x, T step) {
  while (x > 0) x = x - step;
  return x;
}

template <typename...>
AG_FUNCTION ag::Tensor clipped(ag::Tensor x, double limit = AG_TEST_SCALE(1.5)) {
  if (x > limit) x = ag::constant(limit);
  return x;
}

AG_FUNCTION ag::Tensor decremented(ag::Tensor x)  // NOLINT(ag-unrolled-loop): none here
{
  while (x > 1) x = x - 1;
  return x;
}

// A default ending in `>>`, and an operator: its impl is named by its kind.
template <typename T, typename U = std::enable_if_t<true, std::common_type_t<T>>>
AG_FUNCTION ag::Tensor raised(ag::Tensor x, U by) {
  if (x < by) x = x + by;
  return x;
}

struct Box {
  double by;
};
inline int ag_trace_type(const Box& box) { return static_cast<int>(box.by); }

AG_FUNCTION ag::Tensor operator*(ag::Tensor x, Box box) {
  if (x > 0) x = x * box.by;
  return x;
}

template <typename T>
AG_FUNCTION ag::Tensor shifted(ag::Tensor x, T by) {
  if (x < 0) x = x + by;
  return x;
}

// Not marked: the specialization is a function of its own.
template <>
ag::Tensor shifted<bool>(ag::Tensor x, bool by) {
  return by ? x + 1 : x;
}

int main() {
  std::cout << halve_if_big(ag::constant(8.0), 3) << " " << halve_if_big(ag::constant(2.0), 3)
            << "\n";
  std::cout << count_down(ag::constant(7.0), 2) << "\n";
  std::cout << clipped(ag::constant(5.0)) << " " << clipped<int>(ag::constant(1.0), 0.5) << "\n";
  std::cout << decremented(ag::constant(4.5)) << " " << raised<double>(ag::constant(1.0), 2.0)
            << " " << ag::constant(1.5) * Box{2.0} << "\n";
  std::cout << shifted(ag::constant(-1.0), 3.0) << " " << shifted(ag::constant(-1.0), true) << "\n";
}
