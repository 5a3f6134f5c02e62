// Helpers for tests that check error messages.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <ag/ag.h>

namespace ag_test {

// The message of the ag::Error that `f` throws, or "<no error>".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace ag_test

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)
