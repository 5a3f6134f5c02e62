// What the runtime guarantees to threads (README, "Threads"), one test per
// guarantee. Built and run under ThreadSanitizer by tools/tsan.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>
#include <vector>

#include <ag/ag.h>

namespace {

using ag::Tensor;

constexpr int kThreads = 8;

// Runs `body(thread_index)` on kThreads threads released at the same moment.
template <class Body>
void run_together(Body body) {
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  }
  for (auto& thread : threads) thread.join();
}

TEST(Concurrency, EightThreadsOneSignatureTraceOnce) {
  std::atomic<int> traces{0};
  auto f = ag::function([&](Tensor x) {
    ++traces;
    return x * 3 + 1;
  });
  std::atomic<int> wrong{0};
  run_together([&](int t) {
    for (int i = 0; i < 100; ++i) {
      if (f(ag::constant(t * 1000 + i)).item<int>() != 3 * (t * 1000 + i) + 1) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(traces.load(), 1);
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(Concurrency, EightThreadsDifferentSignaturesTraceEachOnce) {
  auto f = ag::function([](Tensor x) { return ag::reduce_sum(x * 2); });
  ag::set_log_hook([](ag::LogLevel, const std::string&) {});  // nine traces are the point here
  std::atomic<int> wrong{0};
  // Thread t calls with a vector of t + 1 ints: eight signatures, each from one
  // thread, plus float32 [2] from every thread.
  run_together([&](int t) {
    std::vector<int> values(t + 1, t);
    for (int i = 0; i < 50; ++i) {
      if (f(ag::constant(values, ag::Shape{int64_t(t + 1)})).item<int>() != 2 * t * (t + 1))
        ++wrong;
      if (f(ag::constant({float(i), 1.0f})).item<float>() != 2.0f * float(i + 1)) ++wrong;
    }
  });
  ag::set_log_hook(nullptr);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(f.tracing_count(), kThreads + 1);
}

// A marked method defined outside its class, as agc emits it: the shared
// traced function runs the body lambda of the call that traces.
struct Offset : ag::Module {
  explicit Offset(int o) : offset(o) {}
  Tensor add(Tensor x) {
    auto body = [&](Tensor x) -> Tensor { return x + offset; };
    return ag::call_method(this, "Offset::add", {"x"}, body, x);
  }
  int offset;
};

TEST(Concurrency, EightModulesTraceAnOutOfClassMethodEachWithItsOwnObject) {
  std::vector<Offset> modules;
  for (int t = 0; t < kThreads; ++t) modules.emplace_back(100 * t);
  std::atomic<int> wrong{0};
  run_together([&](int t) {
    for (int i = 0; i < 50; ++i)
      if (modules[t].add(ag::constant(i)).item<int>() != 100 * t + i) ++wrong;
  });
  EXPECT_EQ(wrong.load(), 0);
}

// A call compares its arguments with the latest hit's without a lock, and a
// destroyed module drops its cache entries: half the threads create, call and
// destroy modules while the others call their own; under the sanitizers no
// call may read a dropped entry.
TEST(Concurrency, ModulesDestroyedWhileOthersCallTheSameMethod) {
  ag::set_log_hook([](ag::LogLevel, const std::string&) {});  // every new module traces
  std::vector<Offset> kept;
  for (int t = 0; t < kThreads / 2; ++t) kept.emplace_back(100 * t);
  std::atomic<int> wrong{0};
  run_together([&](int t) {
    for (int i = 0; i < 30; ++i) {
      if (t < kThreads / 2) {
        if (kept[size_t(t)].add(ag::constant(i)).item<int>() != 100 * t + i) ++wrong;
      } else {
        Offset temporary(1000 * t + i);
        if (temporary.add(ag::constant(i)).item<int>() != 1000 * t + 2 * i) ++wrong;
      }
    }
  });
  ag::set_log_hook(nullptr);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, TracesRacingForOneCacheEntryTraceOnce) {
  // Each round is a fresh function whose first call races from eight threads:
  // one of them traces, the others wait for that trace and use it.
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> traces{0};
    auto f = ag::function([&](Tensor x, Tensor y) {
      ++traces;
      return ag::matmul(x, y) + 1.0f;
    });
    std::atomic<int> wrong{0};
    run_together([&](int t) {
      Tensor x = ag::ones({2, 2}) * float(t);
      Tensor y = ag::constant({{1.0f, 0.0f}, {0.0f, 1.0f}});
      std::vector<float> out = f(x, y).to_vector<float>();
      for (float v : {out[0], out[3]})
        if (v != float(t) + 1.0f) ++wrong;
    });
    EXPECT_EQ(wrong.load(), 0) << "round " << round;
    EXPECT_EQ(traces.load(), 1) << "round " << round;
    EXPECT_EQ(f.tracing_count(), 1);
  }
}

TEST(Concurrency, VariableUpdatesThroughGraphsAreAtomic) {
  ag::Variable counter(ag::constant(0));
  ag::Variable total(ag::constant(0.0));
  auto step = ag::function([&](Tensor x) {
    counter.assign_add(1);
    total.assign_add(ag::cast(x, ag::DType::float64));
    return counter.read();
  });
  std::atomic<int> out_of_range{0};
  constexpr int kCalls = 200;
  run_together([&](int t) {
    for (int i = 0; i < kCalls; ++i) {
      int seen = step(ag::constant(t)).item<int>();
      if (seen < 1 || seen > kThreads * kCalls) ++out_of_range;
    }
  });
  // No update is lost: every assign_add is applied whole, under the variable's lock.
  EXPECT_EQ(counter.read().item<int>(), kThreads * kCalls);
  EXPECT_EQ(total.read().item<double>(), double(kCalls * (kThreads - 1) * kThreads / 2));
  EXPECT_EQ(out_of_range.load(), 0);
  EXPECT_EQ(step.tracing_count(), 1);
}

TEST(Concurrency, RunFunctionsEagerlyToggledWhileCallsRun) {
  std::atomic<int> bodies{0};
  auto f = ag::function([&](Tensor x) {
    ++bodies;  // counts traces and eager runs alike
    return ag::where(x > 0, x, -x) * 2;
  });
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::thread toggler([&] {
    for (int i = 0; !done.load(); ++i) {
      ag::run_functions_eagerly(i % 2 == 0);
      std::this_thread::yield();
    }
    ag::run_functions_eagerly(false);
  });
  run_together([&](int t) {
    for (int i = 0; i < 100; ++i) {
      int v = (i % 2 ? 1 : -1) * (t + i);
      if (f(ag::constant(v)).item<int>() != 2 * (v > 0 ? v : -v)) ++wrong;
    }
  });
  done = true;
  toggler.join();
  EXPECT_EQ(wrong.load(), 0);
  // Graph calls trace once; eager calls run the body every time.
  EXPECT_LE(f.tracing_count(), 1);
  EXPECT_GE(bodies.load(), f.tracing_count());
}

}  // namespace
