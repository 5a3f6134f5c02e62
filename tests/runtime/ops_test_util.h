// Helpers shared by the op tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <ag/ag.h>

namespace ag_test {

// Runs `f`, expecting an exception of type E whose message contains `text`.
template <class E, class F>
void expect_error(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing \"" << text << "\"";
  } catch (const E& e) {
    EXPECT_NE(e.message().find(text), std::string::npos) << "message: " << e.message();
  }
}

template <class T>
std::vector<T> values(const ag::Tensor& t) {
  EXPECT_EQ(t.dtype(), ag::dtype_v<T>);
  return t.to_vector<T>();
}

}  // namespace ag_test
