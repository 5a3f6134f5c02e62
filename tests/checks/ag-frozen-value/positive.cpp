// ag-frozen-value: values read while tracing are frozen into the graph.
#include <chrono>
#include <cstdlib>
#include <random>

#include <ag/ag.h>

// The TensorFlow guide's buggy_add: the global's value at trace time is used forever.
int x = 1;

AG_FUNCTION ag::Tensor buggy_add() {
  return ag::constant(1) + x;
}

// The TensorFlow guide's SimpleModel: `bias` is a plain float, frozen at trace time.
class SimpleModel : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor call(ag::Tensor input) {
    return input * weight_.read() + bias;
  }

  float bias = 0.0f;

 private:
  ag::Variable weight_{ag::constant(5.0f)};
};

// The TensorFlow guide's np.random.randn: the random number is drawn once.
AG_FUNCTION ag::Tensor noisy(ag::Tensor v) {
  return v + std::rand();
}

std::mt19937 engine(42);

AG_FUNCTION ag::Tensor sampled(ag::Tensor v) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  return v * normal(engine);
}

AG_FUNCTION ag::Tensor timed(ag::Tensor v) {
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return v + static_cast<double>(now);
}

// Internal, but changed by a setter.
static double scale = 2.0;
void set_scale(double s) {
  scale = s;
}

AG_FUNCTION ag::Tensor scaled(ag::Tensor v) {
  return v * scale;
}
