// Finding where NaNs and infinities are made (tf.debugging.enable_check_numerics,
// which the tf.function guide recommends for it).
//
// log_ratio is marked, so agc stages its `if` and it runs as a graph. With the
// check on, the first op whose output holds a NaN or an infinity raises an
// error naming the op and its line in this file: the division when y has a
// zero, the log when the ratio is negative. Off, the NaN flows on silently.
#include <iostream>
#include <string>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor log_ratio(ag::Tensor x, ag::Tensor y) {
  ag::Tensor ratio = x / y;
  if (ag::reduce_sum(ratio) > 10) {
    ratio = ratio / 10;
  }
  return ag::log(ratio);
}

// The error's text with the folders of this file's path left out, so that
// the output does not depend on where the project was cloned.
std::string without_folders(std::string message) {
  const std::string file = "main.cpp:";
  const size_t at = message.find(file);
  const size_t folders = at == std::string::npos ? at : message.rfind(' ', at);
  if (folders != std::string::npos) message.erase(folders + 1, at - folders - 1);
  return message;
}

void call_and_report(const ag::Tensor& x, const ag::Tensor& y) {
  try {
    std::cout << log_ratio(x, y).values_string() << "\n";
  } catch (const ag::Error& e) {
    std::cout << without_folders(e.what()) << "\n";
  }
}

int main() {
  const ag::Tensor x = ag::constant({1.0f, -4.0f, 8.0f});
  std::cout << "check off:\n";
  call_and_report(x, ag::constant({2.0f, 1.0f, 4.0f}));
  ag::debugging::enable_check_numerics();
  std::cout << "check on:\n";
  call_and_report(ag::constant({1.0f, 4.0f, 8.0f}), ag::constant({2.0f, 1.0f, 4.0f}));
  call_and_report(x, ag::constant({2.0f, 1.0f, 4.0f}));
  call_and_report(x, ag::constant({2.0f, 0.0f, 4.0f}));
  std::cout << "traces of log_ratio: " << ag::function_of(&log_ratio).tracing_count() << "\n";
}
