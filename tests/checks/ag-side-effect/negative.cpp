// ag-side-effect: idiomatic code that must produce no finding.
#include <iostream>
#include <sstream>
#include <string>

#include <ag/ag.h>

// ag::print runs on every call, also in a staged loop.
AG_FUNCTION ag::Tensor count_down(ag::Tensor n) {
  while (n > 0) {
    ag::print("n =", n);
    n = n - 1;
  }
  return n;
}

// Formatting into a string stream is not I/O.
AG_FUNCTION ag::Tensor labelled(ag::Tensor x) {
  std::ostringstream label;
  label << "x has rank " << x.rank();
  ag::print(label.str(), x);
  return x;
}

// ag::host_function runs its C++ at execution time, on every call.
AG_FUNCTION ag::Tensor logged(ag::Tensor x) {
  auto out = ag::host_function(
      [](const std::vector<ag::Tensor>& in) {
        std::cout << "running with " << in[0] << "\n";
        return in;
      },
      {x}, {x.spec()});
  return out[0];
}

// Helpers that are not marked (nor called from marked code) may print.
void report(const ag::Tensor& result) {
  std::cout << "result: " << result << std::endl;
}

int main() {
  ag::Tensor r = count_down(ag::constant(3));
  report(r);
  std::printf("done\n");
  return 0;
}
