// Helpers shared by the runtime tests: checking error messages, making float64 tensors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

// A float64 tensor of `shape` holding `values` (row-major).
inline ag::Tensor doubles(const std::vector<double>& values, const ag::Shape& shape) {
  ag::Tensor t = ag::empty(shape, ag::float64);
  std::copy(values.begin(), values.end(), t.mutable_data<double>());
  return t;
}

}  // namespace ag_test

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

// Expects `stmt` to throw `Type` whose message contains `text`.
#define EXPECT_THROW_CONTAINS(stmt, Type, text)                                   \
  do {                                                                            \
    try {                                                                         \
      stmt;                                                                       \
      ADD_FAILURE() << "no exception from " #stmt;                                \
    } catch (const Type& e) {                                                     \
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what(); \
    }                                                                             \
  } while (0)
