// What the examples share: the TensorFlow guides' `assert_raises` helper.
#pragma once

#include <cstdlib>
#include <iostream>

#include <ag/ag.h>

namespace example {

// Runs `f`, which must throw an `E`, and prints the error as the TensorFlow
// guides' assert_raises does. Any other outcome ends the program with exit code 1
// (an error of another type propagates).
template <class E, class F>
void assert_raises(F&& f) {
  try {
    f();
  } catch (const E& e) {
    std::cout << "Caught expected exception ag::" << ag::error_kind_name(e.kind()) << ":\n  "
              << e.message() << "\n";
    return;
  }
  std::cout << "Expected an exception but no error was raised!\n";
  std::exit(1);
}

}  // namespace example
