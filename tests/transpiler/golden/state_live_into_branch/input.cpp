// The state of a staged `if` holds every local a branch modifies that is live
// into the other branch or after the `if` (AutoGraph's
// modified ∩ (live_in ∪ live_out)), computed on the code as lowered.
#include <ag/ag.h>

#include <iostream>

// `y` is set in the then-branch and read in the else-branch.
AG_FUNCTION ag::Tensor set_then_read_else(ag::Tensor x) {
  ag::Tensor y = x * 10;
  if (x > 0) {
    y = x + 1;
  } else {
    x = y - 1;
  }
  return x;
}

// A TensorArray written in one branch and read in the other.
AG_FUNCTION ag::Tensor array_written_then_read(ag::Tensor x) {
  ag::TensorArray values(ag::DType::float32, 0, /*dynamic_size=*/true);
  values.write(0, x);
  ag::Tensor n = values.size() - values.size();  // zero, of the size's dtype
  if (x > 0) {
    values.write(1, x);
  } else {
    n = values.size();
  }
  return n;
}

// A staged return guards the statements after it; that guard passes `v`
// through when it does not run, so the later `v = x * 2` does not end the
// liveness of the earlier `v = v + 1`.
AG_FUNCTION ag::Tensor update_before_guarded_kill(ag::Tensor x) {
  ag::Tensor v = x;
  if (x > 5) {
    v = v + 1;
    if (v > 7) return v;
    v = x * 2;
  }
  return v;
}

int main() {
  std::cout << set_then_read_else(ag::constant(2.0f)) << " "
            << set_then_read_else(ag::constant(-2.0f)) << "\n";
  std::cout << array_written_then_read(ag::constant(2.0f)) << " "
            << array_written_then_read(ag::constant(-2.0f)) << "\n";
  std::cout << update_before_guarded_kill(ag::constant(3.0f)) << " "
            << update_before_guarded_kill(ag::constant(6.0f)) << " "
            << update_before_guarded_kill(ag::constant(9.0f)) << "\n";
}
