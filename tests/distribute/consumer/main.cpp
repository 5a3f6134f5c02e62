// Two ranks combine a tensor and take one averaged SGD step with the
// installed ag_distribute; rank 0 prints what every rank must agree on.
#include <cstdio>
#include <vector>

#include <ag/ag.h>
#include <ag/distribute.h>

int main() {
  ag::distribute::Context context;
  const ag::Tensor sum = ag::distribute::all_reduce(ag::constant({float(context.rank() + 1)}));
  ag::Variable w(ag::constant({1.0f, 2.0f}));
  ag::optimizers::SGD sgd({.learning_rate = 0.5});
  ag::distribute::DistributedOptimizer optimizer(sgd);
  ag::GradientTape tape;
  // Rank r's gradient is (r + 1) * [1, 1]; the mean over 2 ranks is 1.5.
  const ag::Tensor loss = ag::reduce_sum(w.read() * float(context.rank() + 1));
  optimizer.minimize(tape, loss, {w});
  const std::vector<float> after = w.read().to_vector<float>();
  if (context.rank() == 0)
    std::printf("ranks %d, sum %g, weights %g %g\n", context.size(), sum.to_vector<float>()[0],
                after[0], after[1]);
  return 0;
}
