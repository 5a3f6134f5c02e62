// Iterating over a dataset in a graph: the tf.function guide's `train(dataset)`.
//
// A linear model y = w * x + b learns y = 3x - 1 from 64 points, shuffled
// (seeded, reshuffled each epoch) and batched by 8. `train` is marked: agc
// stages its `for (auto [x, y] : dataset)` as one While node whose body pulls
// the next batch from the host pipeline, so one call of the graph runs a whole
// epoch, and the graph has the same size for 3 elements as for 10. A loop over
// a std::vector of tensors stays a C++ loop: tracing unrolls it, and the graph
// grows with the data (the guide's measure_graph_size).
#include <cstdio>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>

using Batches = ag::data::Dataset<std::tuple<ag::Tensor, ag::Tensor>>;
using Pairs = std::vector<std::tuple<ag::Tensor, ag::Tensor>>;

class Linear : public ag::Module {
 public:
  ag::Variable w{ag::constant(0.0f), "w"};
  ag::Variable b{ag::constant(0.0f), "b"};
  ag::optimizers::SGD optimizer{{.learning_rate = 0.05}};

  // One epoch, a step of SGD per batch; returns the mean of the batches' losses.
  AG_FUNCTION ag::Tensor train(Batches dataset) {
    ag::Tensor total = 0.0f;
    ag::Tensor steps = 0.0f;
    for (auto [x, y] : dataset) {
      total = total + step(x, y);
      steps = steps + 1.0f;
    }
    return total / steps;
  }

  // The same over a C++ vector: tracing unrolls the loop.
  AG_FUNCTION ag::Tensor train_on_vector(Pairs data) {
    ag::Tensor total = 0.0f;
    for (auto& [x, y] : data) total = total + step(x, y);  // NOLINT(ag-unrolled-loop): on purpose
    return total;
  }

 private:
  ag::Tensor step(const ag::Tensor& x, const ag::Tensor& y) {
    std::vector<ag::Variable> variables = {w, b};
    ag::GradientTape tape;
    ag::Tensor loss = ag::reduce_mean(ag::square(x * w.read() + b.read() - y));
    optimizer.apply_gradients(tape.gradient(loss, variables), variables);
    return loss;
  }
};

namespace {

std::string fixed(float value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", double(value));
  return buf;
}

// Points x in [-1, 1) with y = 3x - 1.
std::tuple<ag::Tensor, ag::Tensor> line(int64_t n) {
  std::vector<float> xs, ys;
  for (int64_t i = 0; i < n; ++i) {
    xs.push_back(-1.0f + 2.0f * float(i) / float(n));
    ys.push_back(3.0f * xs.back() - 1.0f);
  }
  return {ag::constant(xs, ag::Shape{n}), ag::constant(ys, ag::Shape{n})};
}

// The nodes of the graph that traces `f` for `arg`, as the guide's
// measure_graph_size prints them.
template <class F, class A>
void measure_graph_size(const char* name, F f, const A& arg, const std::string& what) {
  auto traced = ag::function(f);
  size_t nodes = traced.get_concrete_function(arg).graph().num_nodes();
  std::cout << name << "(" << what << ") contains " << nodes << " nodes in its graph\n";
}

}  // namespace

int main() {
  auto [xs, ys] = line(64);
  Batches dataset = ag::data::from_tensor_slices(std::tuple{xs, ys}).shuffle(64, 7).batch(8);
  Linear model;
  for (int epoch = 1; epoch <= 30; ++epoch) {
    ag::Tensor loss = model.train(dataset);
    if (epoch == 1 || epoch % 10 == 0)
      std::cout << "epoch " << epoch << ": mean loss " << fixed(loss.item<float>()) << "\n";
  }
  std::cout << "w = " << fixed(model.w.read().item<float>())
            << ", b = " << fixed(model.b.read().item<float>()) << " (the line: 3, -1)\n";
  std::cout << "\n";

  auto train = [&model](Batches d) { return model.train(d); };
  std::cout << "the ops of train's graph:";
  for (const std::string& op : ag::function(train).get_concrete_function(dataset).graph().ops())
    std::cout << " " << op;
  std::cout << "\n";
  auto train_on_vector = [&model](Pairs d) { return model.train_on_vector(d); };
  for (int64_t n : {3, 10}) {
    auto [x, y] = line(n);
    measure_graph_size("train", train, ag::data::from_tensor_slices(std::tuple{x, y}),
                       "dataset of " + std::to_string(n) + " elements");
  }
  for (int64_t n : {3, 10}) {
    auto [x, y] = line(n);
    Pairs pairs;
    for (int64_t i = 0; i < n; ++i) pairs.emplace_back(x[i], y[i]);
    measure_graph_size("train_on_vector", train_on_vector, pairs,
                       "vector of " + std::to_string(n) + " elements");
  }
}
