#include <ag/ag.h>

#include <iostream>
#include <string>

// An error of a running graph says where this file defined the failing op:
// the generated code's #line directives make that this file's own line.
// Both builds print the error's first line; the staged build's error must
// also say "defined at input.cpp:15" (kGatherLine), the eager one must not.

AG_FUNCTION ag::Tensor pick(ag::Tensor x, ag::Tensor i) {
  ag::Tensor y = x * 2;
  if (ag::reduce_sum(y) > 0) {
    y = y + 1;
    y = ag::gather(y, i);
  }
  return y;
}
constexpr int kGatherLine = 15;

int main() {
  std::cout << pick(ag::constant({1, 2, 3}), ag::constant(1)) << "\n";
  try {
    pick(ag::constant({1, 2, 3}), ag::constant(3));
    std::cout << "no error\n";
  } catch (const ag::Error& e) {
    std::string message = e.what();
    std::cout << message.substr(0, message.find('\n')) << "\n";
#ifdef AG_E2E_EXPECTED_TRACES
    // The path is the one agc was given (its #line directives), so match its end.
    std::string located = "input.cpp:" + std::to_string(kGatherLine);
    bool staged = AG_E2E_EXPECTED_TRACES == 1;
    bool names_function = message.find("of function 'pick', defined at ") != std::string::npos;
    if ((names_function && message.find(located) != std::string::npos) != staged ||
        (message.find("defined at") != std::string::npos) != staged) {
      std::cerr << "unexpected message: " << message << "\n";
      return 1;
    }
#endif
  }
}
