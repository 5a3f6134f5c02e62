// Staged control flow: the TensorFlow guides' AutoGraph examples written by hand in
// the statement forms agc emits, each run eagerly and as a graph.
#include <gtest/gtest.h>

#include <sstream>

#include <ag/ag.h>

#include "error_test_util.h"
#include "staged_test_util.h"

namespace {

using ag::Tensor;
using ag_test::dynamic_rnn;
using ag_test::error_of;

void expect_same(const Tensor& eager, const Tensor& graph) {
  ASSERT_EQ(eager.dtype(), graph.dtype());
  ASSERT_EQ(eager.shape(), graph.shape());
  EXPECT_EQ(eager.values_string(), graph.values_string());
}

// Captures what ag::print writes.
struct PrintCapture {
  std::ostringstream out;
  PrintCapture() { ag::set_print_stream(&out); }
  ~PrintCapture() { ag::set_print_stream(nullptr); }
  std::string take() {
    std::string s = out.str();
    out.str("");
    return s;
  }
};

Tensor tanh_loop(Tensor x) {
  ag::while_stmt([&] { return ag::reduce_sum(x) > 1; },
                 [&] {
                   ag::print(x);
                   x = ag::tanh(x);
                 },
                 ag::state({"x"}, x));
  return x;
}

TEST(ControlFlow, TanhLoopPrintsEveryIterationInBothModes) {
  Tensor x = ag::random_uniform({5}, 0, 1, ag::float32, 7);
  PrintCapture capture;
  Tensor eager = tanh_loop(x);
  std::string eager_out = capture.take();
  auto f = ag::function(tanh_loop);
  Tensor graph = f(x);
  std::string graph_out = capture.take();
  expect_same(eager, graph);
  EXPECT_EQ(eager_out, graph_out);
  EXPECT_GT(std::count(graph_out.begin(), graph_out.end(), '\n'), 2);
  graph = f(x);  // the cached graph prints again
  EXPECT_EQ(capture.take(), eager_out);
  EXPECT_EQ(f.tracing_count(), 1);
}

struct FizzbuzzTraces {
  int loop = 0, fizzbuzz = 0, fizz = 0, buzz = 0, other = 0;
};

void fizzbuzz(Tensor n, FizzbuzzTraces& traces) {
  ag::for_stmt(
      ag::range(1, n + 1), ag::no_extra_test,
      [&](Tensor i) {
        ++traces.loop;
        ag::if_stmt(
            i % 15 == 0,
            [&] {
              ++traces.fizzbuzz;
              ag::print("fizzbuzz");
            },
            [&] {
              ag::if_stmt(
                  i % 3 == 0,
                  [&] {
                    ++traces.fizz;
                    ag::print("fizz");
                  },
                  [&] {
                    ag::if_stmt(
                        i % 5 == 0,
                        [&] {
                          ++traces.buzz;
                          ag::print("buzz");
                        },
                        [&] {
                          ++traces.other;
                          ag::print(i);
                        },
                        ag::state());
                  },
                  ag::state());
            },
            ag::state());
      },
      ag::state());
}

TEST(ControlFlow, FizzbuzzTracesEachBranchOnceAndPrintsEveryIteration) {
  PrintCapture capture;
  FizzbuzzTraces eager_traces;
  fizzbuzz(ag::constant(20), eager_traces);
  std::string eager_out = capture.take();
  EXPECT_EQ(eager_out.substr(0, 25), "1\n2\nfizz\n4\nbuzz\nfizz\n7\n8\n");

  FizzbuzzTraces traces;
  auto f = ag::function([&](Tensor n) { fizzbuzz(n, traces); });
  f(ag::constant(5));
  EXPECT_EQ(capture.take(), "1\n2\nfizz\n4\nbuzz\n");
  f(ag::constant(20));
  EXPECT_EQ(capture.take(), eager_out);
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(traces.loop, 1);
  EXPECT_EQ(traces.fizzbuzz, 1);
  EXPECT_EQ(traces.fizz, 1);
  EXPECT_EQ(traces.buzz, 1);
  EXPECT_EQ(traces.other, 1);
}

Tensor simple_relu(Tensor x) {
  Tensor agc_retval;
  Tensor agc_do_return = false;
  ag::if_stmt(
      x > 0,
      [&] {
        agc_retval = x;
        agc_do_return = true;
      },
      [&] {
        agc_retval = ag::constant(0);
        agc_do_return = true;
      },
      ag::state({"agc_retval", "agc_do_return"}, agc_retval, agc_do_return));
  return agc_retval;
}

TEST(ControlFlow, SimpleRelu) {
  auto f = ag::function(simple_relu);
  for (int v : {-3, 0, 5}) expect_same(simple_relu(ag::constant(v)), f(ag::constant(v)));
  EXPECT_EQ(f(ag::constant(5)).item<int>(), 5);
  EXPECT_EQ(f(ag::constant(-5)).item<int>(), 0);
}

// if (reduce_sum(x) > 0) return x * x; return -x // 2;  as agc lowers it.
Tensor g(Tensor x) {
  Tensor agc_retval;
  Tensor agc_do_return = false;
  ag::if_stmt(
      ag::reduce_sum(x) > 0,
      [&] {
        agc_retval = x * x;
        agc_do_return = true;
      },
      [&] {}, ag::state({"agc_retval", "agc_do_return"}, agc_retval, agc_do_return));
  ag::if_stmt(
      ag::not_(agc_do_return),
      [&] {
        agc_retval = ag::floordiv(-x, 2);
        agc_do_return = true;
      },
      [&] {}, ag::state({"agc_retval", "agc_do_return"}, agc_retval, agc_do_return));
  return agc_retval;
}

TEST(ControlFlow, EarlyReturnWithFlags) {
  auto f = ag::function(g);
  expect_same(g(ag::constant({1, 2})), f(ag::constant({1, 2})));
  expect_same(g(ag::constant({-3, -4})), f(ag::constant({-3, -4})));
  EXPECT_EQ(f(ag::constant({-3, -4})).to_vector<int>(), (std::vector<int>{1, 2}));
  EXPECT_EQ(f(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{1, 4}));
}

TEST(ControlFlow, DynamicRnnWithTensorArray) {
  auto f = ag::function(dynamic_rnn);
  for (auto [batch, time, features] : {std::tuple{2, 3, 4}, std::tuple{32, 100, 128}}) {
    Tensor input = ag::random_uniform({batch, time, features}, 0, 1, ag::float32, 3);
    Tensor init = ag::zeros({batch, features});
    Tensor graph = f(input, init);
    EXPECT_EQ(graph.shape(), (ag::Shape{batch, time, features}));
    expect_same(dynamic_rnn(input, init), graph);
  }
}

// A TensorArray of dynamic size that starts empty, written in a staged
// loop: each write grows it by one element. The empty array before the
// first iteration is a known value of size 0 (as "unknown", it would make
// the write's shape rule fail with "size -1").
Tensor fill_dynamic(Tensor n) {
  ag::TensorArray outputs(ag::float32, 0, /*dynamic_size=*/true);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor i) { outputs = outputs.write(i, ag::cast(i, ag::float32) * 2.0f + 1.0f); },
      ag::state({"outputs"}, outputs));
  return outputs.stack();
}

TEST(ControlFlow, DynamicSizeTensorArrayWrittenInAStagedLoop) {
  auto f = ag::function(fill_dynamic);
  Tensor graph = f(ag::constant(3));
  expect_same(fill_dynamic(ag::constant(3)), graph);
  EXPECT_EQ(graph.values_string(), "[1. 3. 5.]");
  // Past the loop variable's first buffer (64 bytes): the array is moved to
  // a larger one and keeps what was written.
  for (int n : {0, 1, 17, 100, 1000}) {
    SCOPED_TRACE(n);
    graph = f(ag::constant(n));
    ASSERT_EQ(graph.shape(), ag::Shape{n});
    expect_same(fill_dynamic(ag::constant(n)), graph);
    const float* v = graph.data<float>();
    for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], 2.0f * float(i) + 1.0f) << "at " << i;
  }
  EXPECT_EQ(f.tracing_count(), 1);
}

// Appending with write(size(), v): before the first write the array has its
// initial rows (none), in the loop and in a branch that does not write it.
Tensor append_row_sums(Tensor m) {
  ag::TensorArray sums(ag::int32, 0, /*dynamic_size=*/true);
  ag::for_stmt(
      m, ag::no_extra_test, [&](Tensor row) { sums.write(sums.size(), ag::reduce_sum(row)); },
      ag::state({"sums"}, sums));
  return sums.stack();
}

Tensor write_if_positive(Tensor x) {
  ag::TensorArray out(ag::int32, 0, /*dynamic_size=*/true);
  ag::if_stmt(x > 0, [&] { out.write(ag::constant(0), x); }, [&] {}, ag::state({"out"}, out));
  return out.size();
}

TEST(ControlFlow, TensorArrayAppendedAtItsSizeStartsEmpty) {
  auto f = ag::function(append_row_sums);
  for (Tensor m : {ag::constant({{1, 2}}), ag::constant({{1, 2}, {3, 4}, {5, 6}})}) {
    Tensor graph = f(m);
    expect_same(append_row_sums(m), graph);
  }
  EXPECT_EQ(f(ag::constant({{1, 2}, {3, 4}})).values_string(), "[3 7]");
}

TEST(ControlFlow, TensorArrayWrittenInOneBranchKeepsItsRowsInTheOther) {
  auto f = ag::function(write_if_positive);
  for (int x : {-1, 4}) {
    SCOPED_TRACE(x);
    expect_same(write_if_positive(ag::constant(x)), f(ag::constant(x)));
  }
  EXPECT_EQ(f(ag::constant(-1)).item<int>(), 0);
  EXPECT_EQ(f(ag::constant(4)).item<int>(), 1);
}

// Writes with gaps: an index past the end grows the array, the skipped
// elements are zeros, and what was written before is kept.
Tensor fill_every_third(Tensor n) {
  ag::TensorArray outputs(ag::int32, 1, /*dynamic_size=*/true);
  outputs.write(ag::constant(0), ag::constant({7, 7}));
  ag::for_stmt(
      ag::range(1, n), ag::no_extra_test,
      [&](Tensor i) { outputs.write(i * 3, ag::stack({i, -i})); }, ag::state({"outputs"}, outputs));
  return outputs.stack();
}

TEST(ControlFlow, DynamicSizeTensorArrayGrowsPastTheEndAndKeepsItsData) {
  auto f = ag::function(fill_every_third);
  for (int n : {1, 2, 4, 40}) {
    SCOPED_TRACE(n);
    Tensor eager = fill_every_third(ag::constant(n));
    Tensor graph = f(ag::constant(n));
    expect_same(eager, graph);
    int64_t size = n == 1 ? 1 : 3 * (n - 1) + 1;
    ASSERT_EQ(graph.shape(), (ag::Shape{size, 2}));
    const int32_t* v = graph.data<int32_t>();
    EXPECT_EQ(v[0], 7);
    EXPECT_EQ(v[1], 7);
    for (int64_t e = 1; e < size; ++e) {
      int32_t expected = e % 3 == 0 ? int32_t(e / 3) : 0;
      ASSERT_EQ(v[2 * e], expected) << "element " << e;
      ASSERT_EQ(v[2 * e + 1], -expected) << "element " << e;
    }
  }
}

// The array is read after the write in the same iteration, so the write
// cannot reuse the loop variable's memory; the result must be the same.
Tensor write_then_read(Tensor n) {
  ag::TensorArray outputs(ag::float32, 0, /*dynamic_size=*/true);
  Tensor total = ag::constant(0.0f);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor i) {
        outputs.write(i, ag::cast(i, ag::float32));
        total = total + outputs.read(i);
      },
      ag::state({"outputs", "total"}, outputs, total));
  return ag::stack({total, ag::reduce_sum(outputs.stack())});
}

TEST(ControlFlow, TensorArrayReadAfterWriteInTheSameIteration) {
  auto f = ag::function(write_then_read);
  for (int n : {0, 5, 50}) {
    SCOPED_TRACE(n);
    Tensor graph = f(ag::constant(n));
    expect_same(write_then_read(ag::constant(n)), graph);
    float sum = float(n) * float(n - 1) / 2.0f;
    EXPECT_EQ(graph.data<float>()[0], sum);
    EXPECT_EQ(graph.data<float>()[1], sum);
  }
}

TEST(ControlFlow, StaticSizeTensorArrayWriteOutOfRangeIsAnError) {
  auto fill = [](Tensor n) {
    ag::TensorArray outputs(ag::float32, 2);
    ag::for_stmt(
        ag::range(n), ag::no_extra_test,
        [&](Tensor i) { outputs.write(i, ag::cast(i, ag::float32)); },
        ag::state({"outputs"}, outputs));
    return outputs.stack();
  };
  auto f = ag::function(fill);
  EXPECT_EQ(f(ag::constant(2)).values_string(), "[0. 1.]");
  EXPECT_CONTAINS(error_of([&] { f(ag::constant(3)); }), "index 2 is out of range for size 2");
  EXPECT_CONTAINS(error_of([&] { fill(ag::constant(3)); }), "index 2 is out of range for size 2");
}

// Loop variables that trade values (x, y = y, x): each update must read the
// values from before the iteration.
Tensor swap_and_fib(Tensor n) {
  Tensor x = ag::constant({1, 2, 3}), y = ag::constant({4, 5, 6});
  Tensor a = ag::constant(0), b = ag::constant(1);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor) {
        Tensor old_x = x;
        x = y;
        y = old_x;
        Tensor old_a = a;
        a = b;
        b = old_a + b;
      },
      ag::state({"x", "y", "a", "b"}, x, y, a, b));
  return ag::concat({x, y, ag::stack({a, b})}, 0);
}

TEST(ControlFlow, LoopVariablesThatTradeValues) {
  auto f = ag::function(swap_and_fib);
  for (int n : {0, 1, 2, 3, 10}) {
    SCOPED_TRACE(n);
    expect_same(swap_and_fib(ag::constant(n)), f(ag::constant(n)));
  }
  EXPECT_EQ(f(ag::constant(3)).values_string(), "[4 5 6 1 2 3 2 3]");
}

// An If's outputs are not copied: a branch that passes a value through
// leaves the If's output pointing at the outer value, which must then stay
// alive (its buffer not reused by later steps) as long as the If's output.
Tensor pass_through(Tensor x, Tensor pred) {
  Tensor a = x * 2.0f;
  Tensor y, z;
  ag::if_stmt(
      pred,
      [&] {
        y = a;
        ag::if_stmt(ag::reduce_sum(x) > 0, [&] { z = a; }, [&] { z = x; }, ag::state({"z"}, z));
      },
      [&] {
        y = a + 1.0f;
        z = a - 1.0f;
      },
      ag::state({"y", "z"}, y, z));
  Tensor b = x * 3.0f;  // a's buffer would be free here if the If copied
  Tensor c = b + 1.0f;
  return ag::stack({y, z, b, c});
}

TEST(ControlFlow, IfOutputsThatPassAValueThrough) {
  auto f = ag::function(pass_through);
  for (bool pred : {true, false}) {
    for (float sign : {1.0f, -1.0f}) {
      Tensor x = ag::constant({1.0f * sign, 2.0f * sign, 3.0f * sign});
      expect_same(pass_through(x, ag::constant(pred)), f(x, ag::constant(pred)));
    }
  }
}

// The same inside a loop body: a branch passes loop variables through, and
// swaps two of them.
Tensor pass_through_in_a_loop(Tensor n) {
  Tensor x = ag::constant(1), y = ag::constant(10), total = ag::constant(0);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor i) {
        ag::if_stmt(
            i % 2 == 0,
            [&] {
              Tensor old_x = x;
              x = y;
              y = old_x;
            },
            [&] { x = x + 1; }, ag::state({"x", "y"}, x, y));
        total = total + x * 100 + y;
      },
      ag::state({"x", "y", "total"}, x, y, total));
  return ag::stack({x, y, total});
}

TEST(ControlFlow, IfInsideALoopPassesAndSwapsLoopVariables) {
  auto f = ag::function(pass_through_in_a_loop);
  for (int n : {0, 1, 2, 7, 20}) {
    SCOPED_TRACE(n);
    expect_same(pass_through_in_a_loop(ag::constant(n)), f(ag::constant(n)));
  }
}

// An if reads its condition when it is reached: a branch that reassigns the
// condition's variable (to a new value, or to a tensor made before the if)
// changes neither which branch runs nor the node's predicate.
Tensor condition_reassigned_in_branch(Tensor x, Tensor other) {
  Tensor r = ag::constant(1.0f);
  Tensor b = x > 0;
  ag::if_stmt(
      b,
      [&] {
        b = other;
        r = ag::constant(2.0f);
      },
      [&] { b = x > 5; }, ag::state({"r"}, r));
  return r;
}

TEST(ControlFlow, IfReadsItsConditionWhenReached) {
  auto f = ag::function(condition_reassigned_in_branch);
  for (float x : {-1.0f, 1.0f, 7.0f}) {
    for (bool other : {true, false}) {
      SCOPED_TRACE(std::to_string(x) + (other ? " other" : " not other"));
      Tensor eager = condition_reassigned_in_branch(ag::constant(x), ag::constant(other));
      EXPECT_EQ(eager.item<float>(), x > 0 ? 2.0f : 1.0f);
      expect_same(eager, f(ag::constant(x), ag::constant(other)));
    }
  }
}

// Eager writes within the size change the array in place; a tensor taken
// from the array before keeps its values (copy on write).
TEST(ControlFlow, EagerTensorArrayWritesKeepValueSemantics) {
  ag::TensorArray ta(ag::float32, 3);
  ta.write(ag::constant(0), ag::constant({1.0f, 2.0f}));
  Tensor before = ta.stack();
  ta.write(ag::constant(int64_t{1}), ag::constant({3.0f, 4.0f}));
  ta.write(ag::constant(0), ag::constant({5.0f, 6.0f}));
  EXPECT_EQ(before.values_string(), "[[1. 2.]\n [0. 0.]\n [0. 0.]]");
  EXPECT_EQ(ta.stack().values_string(), "[[5. 6.]\n [3. 4.]\n [0. 0.]]");
  EXPECT_CONTAINS(error_of([&] { ta.write(ag::constant(3), ag::constant({1.0f, 1.0f})); }),
                  "index 3 is out of range for size 3");
  EXPECT_CONTAINS(error_of([&] { ta.write(ag::constant(0), ag::constant({1.0f})); }),
                  "elements of shape");
}

TEST(ControlFlow, TrainOverATensorBound) {
  ag::Variable steps_run(0);
  auto train = ag::function([&](Tensor num_steps) {
    ag::for_stmt(
        ag::range(num_steps), ag::no_extra_test, [&](Tensor) { steps_run.assign_add(1); },
        ag::state());
  });
  train(ag::constant(10));
  train(ag::constant(20));
  EXPECT_EQ(steps_run.read().item<int>(), 30);
  EXPECT_EQ(train.tracing_count(), 1);
}

// for i in range(n): if i odd: continue; s += i; while s > 10 (in an if): s -= 3
Tensor nested(Tensor n) {
  Tensor s = 0;
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor i) {
        Tensor agc_continue_1 = false;
        ag::if_stmt(
            i % 2 == 1, [&] { agc_continue_1 = true; }, [&] {},
            ag::state({"agc_continue_1"}, agc_continue_1));
        ag::if_stmt(
            ag::not_(agc_continue_1),
            [&] {
              s = s + i;
              ag::if_stmt(
                  s > 10,
                  [&] {
                    ag::while_stmt([&] { return s > 10; }, [&] { s = s - 3; }, ag::state({"s"}, s));
                  },
                  [&] {}, ag::state({"s"}, s));
            },
            [&] {}, ag::state({"s"}, s));
      },
      ag::state({"s"}, s));
  return s;
}

TEST(ControlFlow, WhileInsideIfInsideForWithContinue) {
  auto f = ag::function(nested);
  for (int n : {0, 1, 7, 20}) expect_same(nested(ag::constant(n)), f(ag::constant(n)));
  EXPECT_EQ(f.tracing_count(), 1);
}

// while (true-ish) { if (x > limit) break; x *= 2; }
Tensor break_out(Tensor x, Tensor limit) {
  Tensor agc_break_1 = false;
  ag::while_stmt([&] { return ag::and_(ag::not_(agc_break_1), [&] { return x < 1000000; }); },
                 [&] {
                   ag::if_stmt(
                       x > limit, [&] { agc_break_1 = true; }, [&] {},
                       ag::state({"agc_break_1"}, agc_break_1));
                   ag::if_stmt(
                       ag::not_(agc_break_1), [&] { x = x * 2; }, [&] {}, ag::state({"x"}, x));
                 },
                 ag::state({"x", "agc_break_1"}, x, agc_break_1));
  return x;
}

TEST(ControlFlow, BreakOutOfAWhile) {
  auto f = ag::function(break_out);
  expect_same(break_out(ag::constant(3), ag::constant(50)), f(ag::constant(3), ag::constant(50)));
  EXPECT_EQ(f(ag::constant(3), ag::constant(50)).item<int>(), 96);
}

// for (x in xs) { if (x == target) return index; index += 1 } return -1;
Tensor find(Tensor xs, Tensor target) {
  Tensor agc_retval;
  Tensor agc_do_return = false;
  Tensor index = 0;
  ag::for_stmt(
      xs, [&] { return ag::not_(agc_do_return); },
      [&](Tensor x) {
        ag::if_stmt(
            x == target,
            [&] {
              agc_retval = index;
              agc_do_return = true;
            },
            [&] {}, ag::state({"agc_retval", "agc_do_return"}, agc_retval, agc_do_return));
        ag::if_stmt(
            ag::not_(agc_do_return), [&] { index = index + 1; }, [&] {},
            ag::state({"index"}, index));
      },
      ag::state({"agc_retval", "agc_do_return", "index"}, agc_retval, agc_do_return, index));
  ag::if_stmt(
      ag::not_(agc_do_return),
      [&] {
        agc_retval = ag::constant(-1);
        agc_do_return = true;
      },
      [&] {}, ag::state({"agc_retval", "agc_do_return"}, agc_retval, agc_do_return));
  return agc_retval;
}

TEST(ControlFlow, ReturnFromInsideALoop) {
  auto f = ag::function(find);
  Tensor xs = ag::constant({4, 8, 15, 16, 23, 42});
  for (int t : {4, 16, 42, 7}) expect_same(find(xs, ag::constant(t)), f(xs, ag::constant(t)));
  EXPECT_EQ(f(xs, ag::constant(16)).item<int>(), 3);
  EXPECT_EQ(f(xs, ag::constant(7)).item<int>(), -1);
}

TEST(ControlFlow, FunctionalCondAndWhileLoop) {
  auto f = ag::function([](Tensor x) {
    Tensor y = ag::cond(x > 0, [&] { return x * 10; }, [&] { return -x; });
    auto [i, acc] =
        ag::while_loop([](Tensor i, Tensor) { return i < 5; },
                       [](Tensor i, Tensor acc) { return std::make_tuple(i + 1, acc + i); },
                       std::make_tuple(Tensor(0), y));
    (void)i;
    return acc;
  });
  EXPECT_EQ(f(ag::constant(2)).item<int>(), 30);
  EXPECT_EQ(f(ag::constant(-2)).item<int>(), 12);
}

TEST(ControlFlow, MaximumIterations) {
  auto f = ag::function([](Tensor x) {
    return ag::while_loop([](Tensor v) { return v < 100; }, [](Tensor v) { return v + 1; }, x,
                          {.maximum_iterations = 3});
  });
  EXPECT_EQ(f(ag::constant(0)).item<int>(), 3);
}

TEST(ControlFlow, ShapeChangingLoopVariableIsRelaxed) {
  auto grow = [](Tensor x, Tensor n) {
    ag::while_stmt([&] { return ag::cast(ag::reduce_sum(ag::ones_like(x)), ag::int32) < n; },
                   [&] { x = ag::concat({x, x}, 0); }, ag::state({"x"}, x));
    return x;
  };
  auto f = ag::function(grow);
  Tensor out = f(ag::constant({1.0}), ag::constant(8));
  EXPECT_EQ(out.shape(), ag::Shape{8});
  expect_same(grow(ag::constant({1.0}), ag::constant(8)), out);
}

TEST(ControlFlow, InitializedInOneBranchOnlyIsAnError) {
  auto f = ag::function([](Tensor x) {
    Tensor y;
    ag::if_stmt(x > 0, [&] { y = x; }, [&] {}, ag::state({"y"}, y));
    return y;
  });
  EXPECT_CONTAINS(error_of([&] { f(ag::constant(1)); }),
                  "'y' must also be initialized in the else branch");
  auto h = ag::function([](Tensor x) {
    Tensor y;
    ag::if_stmt(x > 0, [&] {}, [&] { y = x; }, ag::state({"y"}, y));
    return y;
  });
  EXPECT_CONTAINS(error_of([&] { h(ag::constant(1)); }),
                  "'y' must also be initialized in the main branch");
}

TEST(ControlFlow, BranchDtypeMismatchNamesTheVariable) {
  auto f = ag::function([](Tensor x) {
    Tensor y = x;
    ag::if_stmt(x > 0, [&] { y = ag::cast(x, ag::float32); }, [&] { y = x; }, ag::state({"y"}, y));
    return y;
  });
  const int cast_line = __LINE__ - 3;  // `ag::cast(x, ag::float32)`
  std::string err = error_of([&] { f(ag::constant(1)); });
  // The branch whose value an op computed names that op's line; `y = x` none.
  EXPECT_CONTAINS(err, "'y' has dtype float32 in the main branch (set at " + std::string(__FILE__) +
                           ":" + std::to_string(cast_line) +
                           "), but dtype int32 in the else branch; both branches must give it "
                           "one dtype");
}

TEST(ControlFlow, BranchShapesMergeToTheCommonShape) {
  auto f = ag::function([](Tensor x) {
    Tensor y = x;
    ag::if_stmt(
        ag::reduce_sum(x) > 0, [&] { y = ag::concat({x, x}, 0); }, [&] { y = x; },
        ag::state({"y"}, y));
    return y;
  });
  auto concrete = f.get_concrete_function(ag::TensorSpec({2}, ag::int32));
  EXPECT_CONTAINS(concrete.function_type(), "-> TensorSpec(shape=(None,), dtype=int32)");
  EXPECT_EQ(f(ag::constant({1, 2})).shape(), ag::Shape{4});
  EXPECT_EQ(f(ag::constant({-1, -2})).shape(), ag::Shape{2});
}

TEST(ControlFlow, LoopVariableDtypeChangeIsAnError) {
  auto f = ag::function([](Tensor x) {
    ag::while_stmt([&] { return ag::reduce_sum(x) < 10; },
                   [&] { x = ag::cast(x, ag::float32) + 1; }, ag::state({"x"}, x));
    return x;
  });
  const int add_line = __LINE__ - 3;  // `ag::cast(x, ag::float32) + 1`
  EXPECT_CONTAINS(error_of([&] { f(ag::constant(1)); }),
                  "'x' has dtype int32 before the loop, but dtype float32 after one iteration "
                  "(set at " +
                      std::string(__FILE__) + ":" + std::to_string(add_line) + ")");
}

TEST(ControlFlow, NonScalarConditionShowsItsShape) {
  auto f = ag::function([](Tensor x) {
    ag::if_stmt(x > 0, [&] { x = x + 1; }, [&] {}, ag::state({"x"}, x));
    return x;
  });
  EXPECT_CONTAINS(error_of([&] { f(ag::constant({1, 2})); }),
                  "a condition must be a scalar bool, but this one is a tensor of shape (2,) (2 "
                  "elements), whose truth value is ambiguous");
}

// State a staged construct cannot hold: a struct without ag_fields. It is
// fine while the construct never stages (an eager condition, as agc's output
// of a template instantiated with C++ scalars gives); staging it is a
// TypeError naming the variable and its type.
struct PlainBox {
  Tensor value;
};

TEST(ControlFlow, StateWithoutFieldsRunsEagerlyAndFailsOnlyWhenStaged) {
  auto clamp = [](Tensor x) {
    PlainBox box{x};
    ag::if_stmt(x > 1, [&] { box.value = ag::constant(1.0); }, [&] {}, ag::state({"box"}, box));
    return box.value;
  };
  EXPECT_EQ(clamp(ag::constant(5.0)).item<double>(), 1.0);
  EXPECT_EQ(clamp(ag::constant(0.5)).item<double>(), 0.5);
  auto staged = ag::function(clamp);
  EXPECT_CONTAINS(error_of([&] { staged(ag::constant(5.0)); }),
                  "TypeError: 'box' has type (anonymous namespace)::PlainBox, which cannot be the "
                  "state of a staged if "
                  "or loop: state must be ag::Tensor, ag::TensorArray, or tuples, vectors and "
                  "structs of them (give a struct `auto ag_fields(S&)` returning std::tie of its "
                  "fields)");
}

TEST(ControlFlow, UndefinedLoopVariableIsAnError) {
  auto f = ag::function([](Tensor n) {
    Tensor y;
    ag::while_stmt([&] { return n > 0; },
                   [&] {
                     y = n;
                     n = n - 1;
                   },
                   ag::state({"n", "y"}, n, y));
    return y;
  });
  EXPECT_CONTAINS(error_of([&] { f(ag::constant(3)); }), "'y' must be defined before the loop");
}

TEST(ControlFlow, PlainBoolConditionsAreOrdinaryCxx) {
  int taken = 0;
  ag::if_stmt(true, [&] { taken = 1; }, [&] { taken = 2; }, ag::state());
  EXPECT_EQ(taken, 1);
  int i = 0;
  ag::while_stmt([&] { return i < 3; }, [&] { ++i; }, ag::state());
  EXPECT_EQ(i, 3);
  EXPECT_FALSE(ag::and_(false, [&]() -> bool {
    ADD_FAILURE() << "right side evaluated";
    return true;
  }));
  EXPECT_TRUE(ag::or_(true, [&]() -> bool {
    ADD_FAILURE() << "right side evaluated";
    return false;
  }));
}

TEST(ControlFlow, AssertThatFailsAtRunTimeWithItsMessage) {
  auto f = ag::function([](Tensor x) {
    ag::assert_that(x > 0, "x must be positive");
    return x;
  });
  EXPECT_EQ(f(ag::constant(1)).item<int>(), 1);
  EXPECT_CONTAINS(error_of([&] { f(ag::constant(-1)); }), "assertion failed: x must be positive");
}

TEST(ControlFlow, HostFunctionRunsOnEveryCall) {
  int calls = 0;
  auto f = ag::function([&](Tensor x) {
    auto out = ag::host_function(
        [&](const std::vector<Tensor>& in) {
          ++calls;
          return std::vector<Tensor>{in[0] + 1};
        },
        {x}, {ag::TensorSpec({}, ag::int32)});
    return out[0] * 2;
  });
  EXPECT_EQ(f(ag::constant(1)).item<int>(), 4);
  EXPECT_EQ(f(ag::constant(2)).item<int>(), 6);
  EXPECT_EQ(calls, 2);
}

}  // namespace
