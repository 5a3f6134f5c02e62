#include <ag/ag.h>

#include <iostream>

// Marked methods as code bases write them: operator() (the TensorFlow guide's Count
// module is `__call__`), a const method defined outside its class, static
// members (overloaded), a hidden friend; and free functions that are
// overloaded or templates with default template arguments.
class Count : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator()(ag::Tensor x) {
    ag::Tensor n = ag::constant(0.0);
    while (x > 0) {
      x = x - 1;
      n = n + 1;
    }
    return n;
  }

  AG_FUNCTION ag::Tensor scaled(ag::Tensor x) const;

  AG_FUNCTION static ag::Tensor clipped(ag::Tensor x) {
    if (x > 1) x = ag::constant(1.0);
    return x;
  }
  AG_FUNCTION static ag::Tensor clipped(ag::Tensor x, ag::Tensor limit) {
    if (x > limit) x = limit;
    return x;
  }

  AG_FUNCTION friend ag::Tensor twice(const Count& count, ag::Tensor x) {
    if (x > 0) x = x * count.scale_;
    return x;
  }

 private:
  double scale_ = 2.0;
};

ag::Tensor Count::scaled(ag::Tensor x) const {
  if (x > 0) x = x * scale_;
  return x;
}

AG_FUNCTION ag::Tensor shift(ag::Tensor x) {
  if (x > 0) x = x - 1;
  return x;
}
AG_FUNCTION ag::Tensor shift(ag::Tensor x, ag::Tensor by) {
  if (x > 0) x = x - by;
  return x;
}

template <typename T = double, int Times = 2>
AG_FUNCTION ag::Tensor repeat_add(ag::Tensor x, T step = T(1)) {
  for (int i = 0; i < Times; ++i) {
    if (x < 10) x = x + step;
  }
  return x;
}

int main() {
  Count count;
  std::cout << count(ag::constant(3.0)) << " " << count(ag::constant(-1.0)) << "\n";
  std::cout << count.scaled(ag::constant(1.5)) << " " << count.scaled(ag::constant(-1.0)) << "\n";
  std::cout << Count::clipped(ag::constant(4.0)) << " "
            << Count::clipped(ag::constant(4.0), ag::constant(2.0)) << "\n";
  std::cout << twice(count, ag::constant(3.0)) << "\n";
  std::cout << shift(ag::constant(3.0)) << " " << shift(ag::constant(3.0), ag::constant(2.0))
            << "\n";
  std::cout << repeat_add(ag::constant(1.0)) << " " << repeat_add<double, 3>(ag::constant(1.0), 2.0)
            << "\n";
}
