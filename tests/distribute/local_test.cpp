// The collectives in one process, without MPI: the error without a context,
// the optimiser keeping every collective in program order (a recording
// backend sees each call), shape rules, gradient fusion's buffers, and ONNX
// export refusing them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ag/ag.h>
#include <ag/distribute.h>

#include "watchdog.h"
#ifdef AG_TEST_ONNX
#include <ag/onnx.h>
#endif

namespace {

using ag::Tensor;
using ag::distribute::Collective;
using ag::distribute::ReduceOp;

// Pretends to be rank 0 of `ranks` whose ranks all hold the same tensor,
// and records each call.
class RecordingBackend : public ag::distribute::Backend {
 public:
  explicit RecordingBackend(int ranks) : ranks_(ranks) {}
  int rank() const override { return 0; }
  int size() const override { return ranks_; }
  void run(const ag::distribute::CollectiveCall& call) override {
    threads.push_back(std::this_thread::get_id());
    in_place.push_back(call.input == call.output);
    calls.push_back(std::string(ag::distribute::collective_name(call.collective)) + " " +
                    std::to_string(call.input_elements));
    const size_t bytes = size_t(call.input_elements) * ag::dtype_size(call.dtype);
    auto* out = static_cast<char*>(call.output);
    const int copies = call.collective == Collective::AllGather ? ranks_ : 1;
    for (int i = 0; i < copies; ++i) std::memcpy(out + i * bytes, call.input, bytes);
    if (call.collective == Collective::ReduceScatter)
      std::memcpy(out, call.input, size_t(call.output_elements) * ag::dtype_size(call.dtype));
  }
  bool runs_on_any_thread() const override { return any_thread; }
  std::vector<std::string> calls;
  std::vector<std::thread::id> threads;  // that ran each call
  std::vector<bool> in_place;            // whether each call had one buffer
  bool any_thread = true;

 private:
  int ranks_;
};

class Collectives : public testing::Test {
 protected:
  std::shared_ptr<RecordingBackend> install(int ranks) {
    auto backend = std::make_shared<RecordingBackend>(ranks);
    ag::distribute::set_backend(backend);
    return backend;
  }
  void TearDown() override { ag::distribute::set_backend(nullptr); }
};

template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(Collectives, WithoutAContextAreAnErrorSayingWhatToDo) {
  const std::string eager = error_of<ag::FailedPreconditionError>(
      [] { ag::distribute::all_reduce(ag::constant({1.0f, 2.0f})); });
  EXPECT_NE(eager.find("all_reduce: no distribute context: create ag::distribute::Context first"),
            std::string::npos)
      << eager;
  auto traced = ag::function([](const Tensor& x) { return ag::distribute::all_gather(x); });
  const std::string graph =
      error_of<ag::FailedPreconditionError>([&] { traced(ag::constant({1.0f})); });
  EXPECT_NE(graph.find("all_gather: no distribute context"), std::string::npos) << graph;
  EXPECT_NE(error_of<ag::FailedPreconditionError>([] {
              ag::distribute::rank();
            }).find("rank: no distribute context"),
            std::string::npos);
}

// Two identical all_reduces of a constant and one whose result is unused:
// constant folding, CSE and dead code elimination must keep all three, in
// program order, on every call.
TEST_F(Collectives, OptimiserNeitherFoldsMergesNorRemovesThem) {
  auto backend = install(2);
  auto traced = ag::function([](const Tensor& x) {
    const Tensor c = ag::constant({1.0f, 2.0f, 3.0f});
    const Tensor a = ag::distribute::all_reduce(c);
    const Tensor b = ag::distribute::all_reduce(c);
    ag::distribute::all_gather(x);  // unused
    return a + b + ag::distribute::broadcast(x, 1);
  });
  const Tensor x = ag::constant({5.0f, 6.0f, 7.0f, 8.0f});
  traced(ag::constant({1.0f, 1.0f, 1.0f}));
  backend->calls.clear();
  traced(ag::constant({1.0f, 1.0f, 1.0f}));
  traced(ag::constant({2.0f, 2.0f, 2.0f}));
  const std::vector<std::string> once = {"all_reduce 3", "all_reduce 3", "all_gather 3",
                                         "broadcast 3"};
  std::vector<std::string> twice = once;
  twice.insert(twice.end(), once.begin(), once.end());
  EXPECT_EQ(backend->calls, twice);
}

// A wait still armed at its deadline ends the process with its message; one
// disarmed in time, or armed again with a later deadline, does not.
TEST(Watchdog, EndsTheProcessWhenAWaitOutlastsItsDeadline) {
  using ag::distribute::Watchdog;
  testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        Watchdog watchdog;
        watchdog.arm(Watchdog::Clock::now() + std::chrono::milliseconds(20),
                     [] { return std::string("all_reduce: stuck"); });
        std::this_thread::sleep_for(std::chrono::seconds(5));
      },
      testing::ExitedWithCode(ag::distribute::kWatchdogExitCode), "all_reduce: stuck");
  Watchdog watchdog;
  for (int i = 0; i < 20; ++i) {
    watchdog.arm(Watchdog::Clock::now() + std::chrono::milliseconds(30),
                 [] { return std::string("too early"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    watchdog.disarm();
  }
  watchdog.arm(Watchdog::Clock::now() + std::chrono::milliseconds(10),
               [] { return std::string("first deadline"); });
  watchdog.arm(Watchdog::Clock::now() + std::chrono::seconds(60),
               [] { return std::string("later deadline"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  watchdog.disarm();
  SUCCEED() << "the process is still here";
}

// A graph hands all_reduce the buffer of an input that dies there, so that
// the transport reduces in place; eagerly, the caller's tensor is kept. (A
// tensor of a few elements runs as a flat step, outside the buffers.)
TEST_F(Collectives, AllReduceOfADyingValueRunsInPlaceInAGraph) {
  auto backend = install(2);
  const Tensor x = ag::cast(ag::range(4096), ag::float32);
  auto traced =
      ag::function([](const Tensor& t) { return ag::distribute::all_reduce(t * 2.0f) + 1.0f; });
  EXPECT_EQ(traced(x).to_vector<float>(), (x * 2.0f + 1.0f).to_vector<float>());
  EXPECT_EQ(ag::distribute::all_reduce(x).to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(backend->in_place, (std::vector<bool>{true, false}));
}

TEST_F(Collectives, ShapesFollowTheNumberOfRanks) {
  install(3);
  const Tensor x = ag::zeros({6, 2});
  EXPECT_EQ(ag::distribute::all_gather(x).shape(), ag::Shape({18, 2}));
  EXPECT_EQ(ag::distribute::reduce_scatter(x).shape(), ag::Shape({2, 2}));
  EXPECT_EQ(ag::distribute::all_reduce(x, ReduceOp::Max).shape(), ag::Shape({6, 2}));
  // Unknown dims stay unknown while tracing.
  auto traced = ag::function(
      [](const Tensor& t) { return ag::distribute::all_gather(t); },
      {.input_signature = std::vector<ag::TensorSpec>{ag::TensorSpec({-1, 2}, ag::float32)}});
  EXPECT_EQ(traced(ag::zeros({4, 2})).shape(), ag::Shape({12, 2}));
}

TEST_F(Collectives, BadCallsAreClearErrors) {
  install(3);
  auto message = [](auto f) { return error_of<ag::InvalidArgumentError>(f); };
  EXPECT_NE(message([] { ag::distribute::reduce_scatter(ag::zeros({4, 2})); })
                .find("reduce_scatter: axis 0 of the input (shape (4, 2)) does not divide into 3 "
                      "equal parts"),
            std::string::npos);
  EXPECT_NE(message([] {
              ag::distribute::broadcast(ag::zeros({2}), 3);
            }).find("broadcast: root 3 is not a rank; the ranks are 0 to 2"),
            std::string::npos);
  EXPECT_NE(message([] {
              ag::distribute::all_reduce(ag::constant({1, 2}), ReduceOp::Mean);
            }).find("all_reduce: a mean of int32 values; mean takes float32 or float64"),
            std::string::npos);
  EXPECT_NE(message([] {
              ag::distribute::all_gather(ag::constant(1.0f));
            }).find("all_gather: input of shape () has no axis 0"),
            std::string::npos);
  EXPECT_NE(message([] {
              ag::distribute::reduce_scatter(ag::zeros({3}), ReduceOp::Max);
            }).find("reduce_scatter: op max is not supported; use sum or mean"),
            std::string::npos);
  EXPECT_NE(message([] {
              ag::distribute::all_reduce(ag::cast(ag::constant({1}), ag::bool_));
            }).find("all_reduce: unsupported dtype bool"),
            std::string::npos);
}

TEST_F(Collectives, AGraphTracedForOtherRanksIsAnError) {
  install(2);
  auto traced = ag::function([](const Tensor& x) { return ag::distribute::all_reduce(x); });
  traced(ag::constant({1.0f}));
  install(3);
  const std::string error =
      error_of<ag::FailedPreconditionError>([&] { traced(ag::constant({1.0f})); });
  EXPECT_NE(error.find("all_reduce: traced for 2 ranks, run with 3"), std::string::npos) << error;
}

// Gradients under the threshold share one all_reduce per dtype; the
// threshold caps a buffer; 0 turns fusion off. Fused or not, the values are
// those of separate all_reduces.
TEST_F(Collectives, DistributedOptimizerFusesSmallGradients) {
  auto backend = install(2);
  ag::optimizers::SGD sgd;
  const std::vector<Tensor> grads = {ag::ones({2, 3}), ag::ones({2}, ag::float64), ag::ones({4}),
                                     Tensor(), ag::zeros({1000})};
  ag::distribute::DistributedOptimizer fused(sgd, {.fusion_threshold_bytes = 64});
  const std::vector<Tensor> reduced = fused.reduce_gradients(grads);
  // float32 [2,3] and [4] in one buffer, float64 [2] in its own, 4000 bytes alone.
  EXPECT_EQ(backend->calls,
            (std::vector<std::string>{"all_reduce 10", "all_reduce 2", "all_reduce 1000"}));
  ASSERT_EQ(reduced.size(), grads.size());
  EXPECT_FALSE(reduced[3].defined());
  for (size_t i : {0, 1, 2, 4}) {
    EXPECT_EQ(reduced[i].shape(), grads[i].shape()) << i;
    EXPECT_EQ(reduced[i].dtype(), grads[i].dtype()) << i;
  }
  EXPECT_EQ(reduced[1].to_vector<double>(), (std::vector<double>{1.0, 1.0}));
  backend->calls.clear();
  ag::distribute::DistributedOptimizer unfused(sgd, {.fusion_threshold_bytes = 0});
  unfused.reduce_gradients(grads);
  EXPECT_EQ(backend->calls.size(), 4u);
  backend->calls.clear();
  ag::distribute::DistributedOptimizer capped(sgd, {.fusion_threshold_bytes = 30});
  capped.reduce_gradients(grads);  // 24 + 16 bytes pass 30: two float32 buffers
  EXPECT_EQ(backend->calls, (std::vector<std::string>{"all_reduce 6", "all_reduce 2",
                                                      "all_reduce 4", "all_reduce 1000"}));
}

// minimize's buffers fill in the order the backward completes the
// gradients (b2, w2, b1, w1 for this MLP); with overlap they run on another
// thread, unless the backend runs on its own thread only.
TEST_F(Collectives, GradientsAreFusedInTheOrderTheBackwardCompletesThem) {
  auto backend = install(2);
  const std::vector<ag::Variable> variables = {
      ag::Variable(ag::fill({4, 3}, 0.5)), ag::Variable(ag::fill({3}, 0.1)),
      ag::Variable(ag::fill({3, 2}, -0.5)), ag::Variable(ag::fill({2}, 0.2))};
  const Tensor x = ag::fill({5, 4}, 0.3);
  ag::optimizers::SGD sgd;
  for (bool any_thread : {true, false}) {
    backend->any_thread = any_thread;
    backend->calls.clear();
    backend->threads.clear();
    auto loss = [&] {
      const Tensor h = ag::tanh(ag::matmul(x, variables[0].read()) + variables[1].read());
      return ag::reduce_sum(ag::matmul(h, variables[2].read()) + variables[3].read());
    };
    ag::GradientTape tape;
    const Tensor l = loss();
    // b2 (8 bytes), w2 (24) and b1 (12) fill one 64-byte buffer; w1 (48) the next.
    const std::vector<Tensor> reduced =
        ag::distribute::DistributedOptimizer(sgd, {.fusion_threshold_bytes = 64})
            .gradient(tape, l, variables);
    EXPECT_EQ(backend->calls, (std::vector<std::string>{"all_reduce 11", "all_reduce 12"}));
    for (std::thread::id id : backend->threads)
      EXPECT_EQ(id != std::this_thread::get_id(), any_thread);
    ag::GradientTape plain;
    const std::vector<Tensor> expected = plain.gradient(loss(), variables);
    ASSERT_EQ(reduced.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_EQ(reduced[i].to_vector<float>(), expected[i].to_vector<float>()) << i;
  }
}

#ifdef AG_TEST_ONNX
TEST_F(Collectives, OnnxExportIsAnErrorNamingTheCollective) {
  install(2);
  auto traced = ag::function([](const Tensor& x) { return ag::distribute::all_reduce(x) * 2.0f; });
  const auto concrete = traced.get_concrete_function(ag::constant({1.0f}));
  const std::string error =
      error_of<ag::UnimplementedError>([&] { ag::onnx::save_to_bytes(concrete.graph()); });
  EXPECT_NE(error.find("(all_reduce)"), std::string::npos) << error;
  EXPECT_NE(error.find("is a collective across processes, which ONNX has no op for"),
            std::string::npos)
      << error;
}
#endif

}  // namespace
