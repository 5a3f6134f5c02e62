#include <ag/ag.h>

#include <iostream>
#include <optional>
#include <string>
#include <tuple>

using Pairs = ag::data::Dataset<std::tuple<ag::Tensor, ag::Tensor>>;

// A range-for over a dataset is staged: one loop that pulls each element.
AG_FUNCTION ag::Tensor weighted_total(Pairs ds, ag::Tensor limit) {
  ag::Tensor total = 0.0f;
  for (auto [x, y] : ds) {
    if (y < 0) continue;
    total = total + ag::reduce_sum(x) * y;
    if (total > limit) break;
  }
  return total;
}

AG_FUNCTION ag::Tensor mean_of_batches(ag::data::Dataset<ag::Tensor> batches) {
  ag::Tensor sum = 0.0f;
  ag::Tensor count = 0.0f;
  for (const auto& batch : batches) {
    sum = sum + ag::reduce_sum(batch);
    count = count + ag::cast(ag::size(batch), ag::float32);
  }
  return sum / count;
}

AG_FUNCTION ag::Tensor sum_generated(ag::data::Dataset<ag::Tensor> ds) {
  ag::Tensor total = 0.0f;
  for (ag::Tensor x : ds) total = total + ag::reduce_sum(x);
  return total;
}

// A return inside the loop ends it; a dataset made while tracing is pulled
// from by the graph.
AG_FUNCTION ag::Tensor first_above(ag::Tensor limit, int n) {
  auto squares = ag::data::range(n).map([](ag::Tensor i) { return i * i; });
  for (auto [index, square] : squares.enumerate()) {
    if (square > limit) return index * 100 + square;
  }
  return ag::Tensor(int64_t{-1});
}

// A staged loop over a dataset inside a staged while.
AG_FUNCTION ag::Tensor nested(ag::data::Dataset<ag::Tensor> ds, ag::Tensor rounds) {
  ag::Tensor total = 0.0f;
  ag::Tensor round = 0;
  while (round < rounds) {
    for (auto x : ds) total = total + ag::reduce_sum(x) * ag::cast(round + 1, ag::float32);
    round = round + 1;
  }
  return total;
}

Pairs pairs(int n) {
  std::vector<float> xs, ys;
  for (int i = 0; i < n; ++i) {
    xs.insert(xs.end(), {float(i), 1.0f});
    ys.push_back(i % 3 == 2 ? -1.0f : float(i % 3));
  }
  return ag::data::from_tensor_slices(
      std::tuple{ag::constant(xs, ag::Shape{n, 2}), ag::constant(ys, ag::Shape{n})});
}

int main() {
  for (int n : {3, 10}) {
    Pairs ds = pairs(n);
    std::cout << weighted_total(ds, 1000.0f) << "\n";
    std::cout << weighted_total(ds, 5.0f) << "\n";
  }
  auto batches = ag::data::range(11)
                     .map([](ag::Tensor x) { return ag::cast(x, ag::float32) * 2.0f; })
                     .shuffle(4, 9)
                     .batch(3);
  std::cout << mean_of_batches(batches) << "\n";
  std::cout << mean_of_batches(batches) << "\n";
  std::cout << first_above(ag::constant(int64_t{10}), 6) << "\n";
  std::cout << first_above(ag::constant(int64_t{50}), 6) << "\n";
  std::cout << nested(batches, 3) << "\n";
#ifdef AG_E2E_EXPECTED_TRACES
  // One trace for the datasets of one element_spec: each call's graph pulls
  // from that call's dataset.
  if (ag::function_of(&weighted_total).tracing_count() != AG_E2E_EXPECTED_TRACES) {
    std::cerr << "weighted_total traced " << ag::function_of(&weighted_total).tracing_count()
              << " times\n";
    return 1;
  }
#endif

  auto bad = ag::data::from_generator(
      [i = 0]() mutable -> std::optional<ag::Tensor> {
        if (i == 3) return std::nullopt;
        return i++ == 1 ? ag::constant({1.0, 2.0, 3.0}) : ag::constant({1.0, 2.0});
      },
      {ag::TensorSpec({2}, ag::float32)});
  try {
    sum_generated(bad);
  } catch (const ag::InvalidArgumentError& e) {
    std::string message = e.message();
    // The first line; a graph adds the op that ran the pipeline.
    std::cout << message.substr(message.find("input.cpp"),
                                message.find('\n') - message.find("input.cpp"))
              << "\n";
  }
}
