// The TensorFlow guide examples as marked functions, transpiled by agc: each is
// traced, exported with ag::onnx::save (checked by ONNX's checker with full
// shape inference), loaded back and run; the loaded model must return what
// the trace returns (integers exactly, floats within 1e-6). Not named
// *_test.cpp: it is its own target (onnx_guide_examples), built through agc.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <ag/ag.h>

#include "round_trip.h"

// tf.function guide, "Performance": a C++ loop, unrolled while tracing.
AG_FUNCTION ag::Tensor power(ag::Tensor x, int y) {
  ag::Tensor result = ag::eye(10, ag::int32);
  for (int i = 0; i < y; ++i) {
    result = ag::matmul(x, result);
  }
  return result;
}

// "AutoGraph transformations: Loops": a while loop on a tensor condition.
AG_FUNCTION ag::Tensor tanh_loop(ag::Tensor x) {
  while (ag::reduce_sum(x) > 1) {
    x = ag::tanh(x);
  }
  return x;
}

// "Conditionals", counting instead of printing (ag::print is C++ code, which
// an ONNX model cannot hold): if/else-if chains in a loop over a tensor range.
AG_FUNCTION ag::Tensor fizzbuzz_count(ag::Tensor n) {
  ag::Tensor fizzbuzz = 0, fizz = 0, buzz = 0, other = 0;
  for (auto i : ag::range(1, n + 1)) {
    if (i % 15 == 0) {
      fizzbuzz += 1;
    } else if (i % 3 == 0) {
      fizz += 1;
    } else if (i % 5 == 0) {
      buzz += 1;
    } else {
      other += 1;
    }
  }
  return ag::stack({fizzbuzz, fizz, buzz, other});
}

// The AutoGraph guide's collatz: the steps from `a` to 1.
AG_FUNCTION ag::Tensor collatz(ag::Tensor a) {
  ag::Tensor counter = 0;
  while (a != 1) {
    if (a % 2 == 0) {
      a = ag::floordiv(a, 2);
    } else {
      a = 3 * a + 1;
    }
    counter += 1;
  }
  return counter;
}

// "Accumulating values in a loop": a TensorArray written in a staged loop.
AG_FUNCTION ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  input_data = ag::transpose(input_data, {1, 0, 2});  // -> [time, batch, features]
  int64_t max_seq_len = input_data.shape()[0];
  ag::TensorArray states(ag::float32, max_seq_len);
  ag::Tensor state = initial_state;
  for (auto i : ag::range(max_seq_len)) {
    state = input_data[i] + state;
    states = states.write(i, state);
  }
  return ag::transpose(states.stack(), {1, 0, 2});
}

// "Introduction to graphs": get_MSE.
AG_FUNCTION ag::Tensor get_MSE(ag::Tensor y_true, ag::Tensor y_pred) {
  ag::Tensor sq_diff = ag::pow(y_true - y_pred, 2);
  return ag::reduce_mean(sq_diff);
}

// "Introduction to graphs": dense_layer, with a relu.
AG_FUNCTION ag::Tensor dense_layer(ag::Tensor x, ag::Tensor w, ag::Tensor b) {
  return ag::relu(ag::matmul(x, w) + b);
}

namespace {

// Traces `f` for `args` (a C++ int among them is part of the trace), exports
// the trace as `name`, loads it, runs it on the tensor arguments `inputs`, and
// expects what the trace returns.
template <class F, class... Args>
void expect_round_trip(const char* name, F f, const std::vector<ag::Tensor>& inputs,
                       const Args&... args) {
  auto traced = ag::function(f, {.name = name});
  auto concrete = traced.get_concrete_function(args...);
  EXPECT_EQ(ag_onnx_test::round_trip(concrete.graph(), std::string("guide_") + name, inputs,
                                     {concrete(args...)}, 1e-6),
            "");
}

TEST(OnnxGuideExamples, Power) {
  ag::Tensor x = ag::random_uniform({10, 10}, -1, 2, ag::int32, /*seed=*/3);
  expect_round_trip("power", &power, {x}, x, 5);
}

TEST(OnnxGuideExamples, TanhLoop) {
  ag::Tensor x = ag::random_uniform({5}, 0.0, 1.0, ag::float32, /*seed=*/1);
  expect_round_trip("tanh_loop", &tanh_loop, {x}, x);
}

TEST(OnnxGuideExamples, FizzbuzzCount) {
  ag::Tensor n = ag::constant(20);
  expect_round_trip("fizzbuzz_count", &fizzbuzz_count, {n}, n);
  // The counts themselves, so that a wrong trace cannot agree with itself.
  ag::onnx::Model model = ag::onnx::load_from_bytes(ag_onnx_test::export_model(
      ag::function(&fizzbuzz_count).get_concrete_function(n).graph(), "guide_fizzbuzz_count_15"));
  EXPECT_EQ(model({ag::constant(15)})[0].to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 8}));
}

TEST(OnnxGuideExamples, Collatz) {
  ag::Tensor a = ag::constant(27);
  expect_round_trip("collatz", &collatz, {a}, a);
  ag::onnx::Model model = ag::onnx::load_from_bytes(ag_onnx_test::export_model(
      ag::function(&collatz).get_concrete_function(a).graph(), "guide_collatz_27"));
  EXPECT_EQ(model({a})[0].item<int32_t>(), 111);
}

TEST(OnnxGuideExamples, DynamicRnn) {
  ag::Tensor input = ag::random_uniform({2, 3, 4}, 0.0, 1.0, ag::float32, /*seed=*/7);
  ag::Tensor state = ag::zeros({2, 4});
  expect_round_trip("dynamic_rnn", &dynamic_rnn, {input, state}, input, state);
}

TEST(OnnxGuideExamples, MeanSquaredError) {
  ag::Tensor y_true = ag::random_uniform({5}, 0, 10, ag::int32, /*seed=*/1);
  ag::Tensor y_pred = ag::random_uniform({5}, 0, 10, ag::int32, /*seed=*/2);
  expect_round_trip("get_MSE", &get_MSE, {y_true, y_pred}, y_true, y_pred);
}

TEST(OnnxGuideExamples, DenseLayer) {
  ag::Tensor x = ag::random_normal({3, 4}, 0.0, 1.0, ag::float32, /*seed=*/4);
  ag::Tensor w = ag::random_normal({4, 2}, 0.0, 1.0, ag::float32, /*seed=*/5);
  ag::Tensor b = ag::constant({0.5f, -0.5f});
  expect_round_trip("dense_layer", &dense_layer, {x, w, b}, x, w, b);
}

}  // namespace
