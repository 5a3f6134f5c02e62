#include "model.h"

#include <iostream>

ag::Tensor Counter::count_to(ag::Tensor limit) {
  ++body_runs_;  // NOLINT(ag-global-mutation): counts the runs on purpose
  ag::Tensor total = ag::constant(0.0);
  ag::Tensor steps = ag::constant(0);
  while (total < limit) {
    total = total + step_;
    steps = steps + 1;
  }
  return steps;
}

ag::Tensor Counter::scaled(ag::Tensor x) const {
  if (x > 0) x = x * step_;
  return x;
}

ag::Tensor Counter::scaled(ag::Tensor x, ag::Tensor by) const {
  if (x > 0) {
    x = x * by;
  } else {
    x = x - step_;
  }
  return x;
}

template <typename T>
ag::Tensor Counter::shifted(ag::Tensor x, T by) const {
  for (int i = 0; i < 2; ++i) {
    if (x < 10) x = x + by;
  }
  return x;
}

ag::Tensor Counter::clipped(ag::Tensor x, double limit) {
  if (x > limit) return ag::constant(limit);
  return x;
}

int main() {
  // Two modules of one class: each traces count_to with its own step_.
  Counter halves(0.5), thirds(1.0 / 3);
  std::cout << halves.count_to(ag::constant(2.0)) << " " << thirds.count_to(ag::constant(2.0))
            << "\n";
  std::cout << halves.count_to(ag::constant(3.0)) << " " << thirds.count_to(ag::constant(1.0))
            << "\n";
  std::cout << halves.scaled(ag::constant(3.0)) << " " << thirds.scaled(ag::constant(-1.0)) << "\n";
  std::cout << halves.scaled(ag::constant(3.0), ag::constant(4.0)) << " "
            << thirds.scaled(ag::constant(-1.0), ag::constant(4.0)) << "\n";
  std::cout << halves.shifted(ag::constant(1.0), 2) << " "
            << thirds.shifted(ag::constant(9.5), 0.25) << "\n";
  std::cout << Counter::clipped(ag::constant(4.0), 2.5) << " "
            << Counter::clipped(ag::constant(1.0), 2.5) << "\n";
#ifdef AG_E2E_EXPECTED_TRACES
  // Staged, a body runs once per module and signature; eagerly, on every call.
  int expected = AG_E2E_EXPECTED_TRACES ? 1 : 2;
  if (halves.body_runs() != expected || thirds.body_runs() != expected) {
    std::cout << "count_to's body ran " << halves.body_runs() << " and " << thirds.body_runs()
              << " times, expected " << expected << "\n";
    return 1;
  }
  if (ag::function_of(&Counter::clipped).tracing_count() != AG_E2E_EXPECTED_TRACES) {
    std::cout << "clipped traced " << ag::function_of(&Counter::clipped).tracing_count()
              << " times\n";
    return 1;
  }
#endif
}
