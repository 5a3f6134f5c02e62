// Suppressions: the NOLINT comments of clang-tidy, with and without a list of checks.
#include <cstdio>
#include <iostream>

#include <ag/ag.h>

int scale = 2;

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  std::cout << "tracing\n";  // NOLINT
  std::cout << "tracing\n";  // NOLINT(ag-side-effect)
  std::cout << "tracing\n";  // NOLINT(ag-frozen-value): another check, still reported
  std::cout << "tracing\n";  // NOLINT(ag-side-*)
  // NOLINTNEXTLINE(ag-frozen-value)
  x = x * scale;
  // NOLINTNEXTLINE(ag-side-effect)
  x = x * scale;
  // NOLINTBEGIN(ag-side-effect)
  std::puts("a");
  std::puts("b");
  // NOLINTEND(ag-side-effect)
  std::puts("c");
  return x;
}
