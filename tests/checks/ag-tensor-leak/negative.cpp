#include <ag/ag.h>

#include <vector>

const int kScale = 3;
int trace_count = 0;

struct Stats {
  ag::Tensor mean;
  ag::Tensor max;
};

// Locals, local containers and local structs never outlive the call.
AG_FUNCTION ag::Tensor locals(ag::Tensor a) {
  ag::Tensor y = a * kScale;
  y = y + 1;
  std::vector<ag::Tensor> parts;
  parts.push_back(y);
  parts.push_back(a);
  Stats stats;
  stats.mean = ag::reduce_mean(a);
  auto& first = parts[0];
  first = first * 2;
  for (int i = 0; i < 3; ++i) parts.push_back(a + i);
  return ag::concat(parts, 0) + stats.mean;
}

// A non-marked lambda inside a marked function writes the function's locals.
AG_FUNCTION ag::Tensor helper_lambda(ag::Tensor a) {
  ag::Tensor acc = ag::constant(0.0);
  auto add = [&](const ag::Tensor& t) { acc = acc + t; };
  add(a);
  add(a * 2);
  return acc;
}

// State goes through an ag::Variable.
class Counter : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor delta) {
    total_.assign_add(delta);
    return total_.read();
  }

 private:
  ag::Variable total_{0.0};
};

// A helper converted because marked code calls it: its reference parameter is
// the caller's local, not storage that outlives the trace.
void accumulate(ag::Tensor& total, const ag::Tensor& value) {
  total = total + value;
}

AG_FUNCTION ag::Tensor uses_helper(ag::Tensor a) {
  ag::Tensor total = ag::constant(0.0);
  accumulate(total, a);
  return total;
}

// Globals written outside any marked function are not this check's business.
ag::Tensor eager_cache;
void fill_cache() {
  eager_cache = ag::constant(1.0);
}

int main() {
  fill_cache();
  locals(ag::constant({1.0, 2.0}));
  helper_lambda(ag::constant(1.0));
  uses_helper(ag::constant(1.0));
  Counter counter;
  counter.operator_call(ag::constant(1.0));
  return trace_count;
}
