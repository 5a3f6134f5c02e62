#include <ag/ag.h>

ag::Tensor run(ag::Tensor x) {
  auto body = [](ag::Tensor v) AG_FUNCTION {
    while (v > 1) {
      v = v / 2;
    }
    return v;
  };
  auto unmarked = [](ag::Tensor v) { return v > 0 ? v : -v; };  // not converted
  return body(x) + unmarked(x);
}
