// ag-global-mutation: writes to state that outlives the call happen once,
// while tracing (the TensorFlow guide's "Python side effects").
#include <map>
#include <string>
#include <vector>

#include <ag/ag.h>

int trace_count = 0;
std::vector<double> history;
std::map<std::string, int> calls_by_name;

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ++trace_count;  // counts traces, not calls
  history.push_back(1.0);
  calls_by_name["f"] += 1;
  return x + 1;
}

AG_FUNCTION ag::Tensor g(ag::Tensor x) {
  static int calls = 0;
  calls = calls + 1;
  return x * 2;
}

struct Config {
  static int uses;
};
int Config::uses = 0;

AG_FUNCTION ag::Tensor h(ag::Tensor x) {
  Config::uses++;
  return x;
}

// A member of the module that is not an ag::Variable.
class Counter : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor step(ag::Tensor x) {
    steps_ += 1;
    this->last_size_ = 3;
    return x + 1;
  }

 private:
  int steps_ = 0;
  long last_size_ = 0;
};

int main() {
  int total = 0;
  auto add = ag::function([&](ag::Tensor x) AG_FUNCTION {
    total += 1;  // captured by reference: incremented once per trace
    return x + 1;
  });
  add(ag::constant(1));
  return total;
}
