#include <ag/ag.h>

#include <map>
#include <vector>

// The TensorFlow guide's "accumulating values in a loop", with a std::vector.
AG_FUNCTION ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  std::vector<ag::Tensor> states;
  ag::Tensor state = initial_state;
  for (auto i : ag::range(ag::reduce_sum(input_data))) {
    state = ag::tanh(state + ag::cast(i, ag::float64));
    states.push_back(state);
  }
  return ag::stack(states, 0);
}

// A while loop on a tensor, a map and a member.
class Tracker : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor x) {
    std::map<int, ag::Tensor> seen;
    int step = 0;
    while (ag::reduce_sum(x) > 1) {
      x = x / 2;
      seen.emplace(step, x);
      history_.insert(history_.begin(), x);
    }
    return x;
  }

 private:
  std::vector<ag::Tensor> history_;
};

// A C-style loop with a tensor bound is staged too.
AG_FUNCTION ag::Tensor halves(ag::Tensor n) {
  std::vector<double> log;
  ag::Tensor x = ag::constant(1.0);
  for (int i = 0; i < n; ++i) {
    x = x / 2;
    log.emplace_back(0.5);
  }
  return x;
}

// A do-while loop on a tensor is staged like a while loop.
AG_FUNCTION ag::Tensor halvings(ag::Tensor x) {
  std::vector<ag::Tensor> steps;
  do {
    x = x / 2;
    steps.push_back(x);
  } while (ag::reduce_sum(x) > 1);
  return x;
}

int main() {
  dynamic_rnn(ag::constant({{1.0}}), ag::constant({{0.0}}));
  Tracker tracker;
  tracker.operator_call(ag::constant(8.0));
  halves(ag::constant(3));
  halvings(ag::constant(8.0));
}
