#include <ag/ag.h>

#include <functional>
#include <string>
#include <vector>

// Parameters that select a trace: these have trace types...
enum class Mode { Train, Eval };
namespace user {
struct Config {
  int layers;
};
inline int ag_trace_type(const Config& c) { return c.layers; }
}  // namespace user

AG_FUNCTION ag::Tensor accepted(ag::Tensor x, const std::vector<ag::Tensor>& more, Mode mode,
                                const std::string& name, user::Config config) {
  if (x > 0) x = x - 1;
  return x;
}

// ...these do not: agc says so at the parameter.
struct Options {
  double rate;
};

AG_FUNCTION ag::Tensor rejected(ag::Tensor x, Options options, std::function<int()> callback) {
  if (x > 0) x = x * options.rate;
  return x;
}
