// ag-side-effect: I/O in marked code runs once, while tracing.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <ag/ag.h>

// The TensorFlow guide's `print` vs `tf.print`: printed on the first call only.
AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  std::cout << "Traced with " << x << std::endl;
  return x + 1;
}

AG_FUNCTION ag::Tensor log_to_stderr(ag::Tensor x) {
  std::cerr << "value: " << x << "\n";
  std::printf("tracing\n");
  return x * 2;
}

AG_FUNCTION ag::Tensor write_file(ag::Tensor x) {
  std::ofstream out("trace.log");
  out << x.to_string();
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return x;
}

// In a staged loop, std::cout still prints once.
AG_FUNCTION ag::Tensor count_down(ag::Tensor n) {
  while (n > 0) {
    std::cout << n << '\n';
    n = n - 1;
  }
  std::cout.flush();
  return n;
}

// A lambda marked for agc.
auto g = ag::function([](ag::Tensor x) AG_FUNCTION {
  puts("tracing g");
  return x;
});
