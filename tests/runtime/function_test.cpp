// ag::function against the TensorFlow guide examples, written in C++.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using ag_test::error_of;

TEST(Function, DoubleTracesOncePerDtype) {
  int traces = 0;
  auto double_fn = ag::function(
      [&](Tensor a) {
        ++traces;  // a C++ side effect: runs only while tracing
        return a + a;
      },
      {.name = "double", .arg_names = {"a"}});
  EXPECT_EQ(double_fn(ag::constant(1)).item<int>(), 2);
  EXPECT_FLOAT_EQ(double_fn(ag::constant(1.1)).item<float>(), 2.2f);
  EXPECT_EQ(double_fn(ag::constant(3)).item<int>(), 6);
  EXPECT_EQ(traces, 2);
  EXPECT_EQ(double_fn.tracing_count(), 2);
}

// Checked while matching the call against the previous one (inline on the
// hit path) and while hashing a new signature.
TEST(Function, AnUndefinedTensorArgumentIsAnError) {
  auto add = ag::function([](Tensor a, Tensor b) { return a + b; }, {.name = "add"});
  EXPECT_EQ(add(ag::constant(1), ag::constant(2)).item<int>(), 3);
  EXPECT_THROW_CONTAINS(add(ag::constant(1), Tensor()), ag::InvalidArgumentError,
                        "ag::function: an argument is an undefined ag::Tensor");
  auto fresh = ag::function([](Tensor a) { return a; }, {.name = "fresh"});
  EXPECT_THROW_CONTAINS(fresh(Tensor()), ag::InvalidArgumentError,
                        "ag::function: an argument is an undefined ag::Tensor");
}

TEST(Function, GraphListsNodesLikeTheTfGuide) {
  auto double_fn =
      ag::function([](Tensor a) { return a + a; }, {.name = "double", .arg_names = {"a"}});
  auto concrete = double_fn.get_concrete_function(TensorSpec({}, ag::int32));
  EXPECT_EQ(concrete.graph().to_string(), "[] -> a\n['a', 'a'] -> add\n['add'] -> Identity\n");
  EXPECT_EQ(concrete(ag::constant(2)).item<int>(), 4);
  EXPECT_CONTAINS(concrete.graph().to_dot(), "digraph");
  EXPECT_EQ(concrete.function_type(),
            "(a: TensorSpec(shape=(), dtype=int32)) -> TensorSpec(shape=(), dtype=int32)");
}

TEST(Function, ConcreteFunctionRejectsAnotherDtype) {
  auto double_fn =
      ag::function([](Tensor a) { return a + a; }, {.name = "double", .arg_names = {"a"}});
  auto concrete = double_fn.get_concrete_function(TensorSpec({}, ag::float32));
  std::string err = error_of([&] { concrete(ag::constant(1)); });
  EXPECT_CONTAINS(err, "TypeError");
  EXPECT_CONTAINS(err, "'a'");
  EXPECT_CONTAINS(
      err, "Can not cast TensorSpec(shape=(), dtype=int32) to TensorSpec(shape=(), dtype=float32)");
}

TEST(Function, ConcreteFunctionPinsLiteralArguments) {
  auto pow_fn =
      ag::function([](Tensor a, int b) { return ag::pow(a, ag::cast(ag::constant(b), a.dtype())); },
                   {.name = "pow", .arg_names = {"a", "b"}});
  auto square = pow_fn.get_concrete_function(TensorSpec(ag::Shape::unknown_rank(), ag::float32), 2);
  EXPECT_FLOAT_EQ(square(ag::constant(10.0), 2).item<float>(), 100.0f);
  std::string err = error_of([&] { square(ag::constant(10.0), 3); });
  EXPECT_CONTAINS(err,
                  "ConcreteFunction pow(a, b=2) was constructed with value 2 in b, but was called "
                  "with value 3");
}

TEST(Function, NextCollatzWithInputSignature) {
  int traces = 0;
  auto next_collatz = ag::function(
      [&](Tensor x) {
        ++traces;
        return ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1);
      },
      {.input_signature = std::vector{TensorSpec({ag::kUnknownDim}, ag::int32)},
       .name = "next_collatz",
       .arg_names = {"x"}});
  EXPECT_EQ(next_collatz(ag::constant({1, 2})).values_string(), "[4 1]");
  EXPECT_EQ(next_collatz(ag::constant({1, 2, 3, 4, 5})).to_vector<int>(),
            (std::vector<int>{4, 1, 10, 2, 16}));
  EXPECT_EQ(traces, 1);

  std::string err = error_of([&] { next_collatz(ag::constant({{1, 2}, {3, 4}})); });
  EXPECT_CONTAINS(err, "TypeError");
  EXPECT_CONTAINS(err, "next_collatz");
  EXPECT_CONTAINS(err,
                  "Can not cast TensorSpec(shape=(2, 2), dtype=int32) to TensorSpec(shape=(None,), "
                  "dtype=int32)");
  EXPECT_CONTAINS(err, "'x'");
  err = error_of([&] { next_collatz(ag::constant({1.0, 2.0})); });
  EXPECT_CONTAINS(err,
                  "Can not cast TensorSpec(shape=(2,), dtype=float32) to TensorSpec(shape=(None,), "
                  "dtype=int32)");
  EXPECT_EQ(traces, 1);
}

// As in tf.function: with an input_signature, get_concrete_function of a
// fitting argument is the signature's trace (the one calls use), and of an
// argument that does not fit, the call's error.
TEST(Function, ConcreteFunctionOfASignedFunctionIsTheSignaturesTrace) {
  auto twice =
      ag::function([](Tensor x) { return x * 2; },
                   {.input_signature = std::vector{TensorSpec({ag::kUnknownDim}, ag::int32)},
                    .name = "twice",
                    .arg_names = {"x"}});
  const Tensor x = ag::constant({1, 2, 3});
  auto concrete = twice.get_concrete_function(x);
  EXPECT_EQ(
      concrete.function_type(),
      "(x: TensorSpec(shape=(None,), dtype=int32)) -> TensorSpec(shape=(None,), dtype=int32)");
  EXPECT_EQ(concrete(ag::constant({4, 5, 6, 7})).to_vector<int>(),
            (std::vector<int>{8, 10, 12, 14}));
  EXPECT_EQ(twice(x).to_vector<int>(), (std::vector<int>{2, 4, 6}));
  EXPECT_EQ(twice.tracing_count(), 1);
  EXPECT_CONTAINS(error_of([&] { twice.get_concrete_function(ag::constant({1.0f})); }),
                  "Can not cast TensorSpec(shape=(1,), dtype=float32) to TensorSpec(shape=(None,), "
                  "dtype=int32) for argument 'x'");
  EXPECT_EQ(twice.tracing_count(), 1);
}

// As tf.function's get_concrete_function(): without arguments, the
// input_signature's trace, for a lambda, a function object and a function
// pointer; a clear error without a signature or with a wrong spec count.
TEST(Function, ConcreteFunctionWithoutArgumentsIsTheSignaturesTrace) {
  auto scaled_sum =
      ag::function([](Tensor a, const Tensor& b) { return a * 2 + b; },
                   {.input_signature = std::vector{TensorSpec({ag::kUnknownDim}, ag::int32),
                                                   TensorSpec({}, ag::int32)},
                    .name = "scaled_sum",
                    .arg_names = {"a", "b"}});
  auto concrete = scaled_sum.get_concrete_function();
  EXPECT_EQ(concrete.function_type(),
            "(a: TensorSpec(shape=(None,), dtype=int32), b: TensorSpec(shape=(), dtype=int32)) -> "
            "TensorSpec(shape=(None,), dtype=int32)");
  EXPECT_EQ(concrete(ag::constant({1, 2, 3}), ag::constant(10)).to_vector<int>(),
            (std::vector<int>{12, 14, 16}));
  EXPECT_EQ(scaled_sum(ag::constant({5}), ag::constant(1)).to_vector<int>(),
            (std::vector<int>{11}));
  EXPECT_EQ(scaled_sum.tracing_count(), 1);

  struct Negate {
    Tensor operator()(Tensor x) const noexcept { return -x; }
  };
  auto negate =
      ag::function(Negate{}, {.input_signature = std::vector{TensorSpec({2}, ag::float32)}});
  EXPECT_EQ(negate.get_concrete_function()(ag::constant({1.0f, -2.0f})).to_vector<float>(),
            (std::vector<float>{-1.0f, 2.0f}));

  Tensor (*pointer)(Tensor) = [](Tensor x) { return x + 1; };
  auto plus_one =
      ag::function(pointer, {.input_signature = std::vector{TensorSpec({}, ag::int32)}});
  EXPECT_EQ(plus_one.get_concrete_function()(ag::constant(4)).to_vector<int>(),
            (std::vector<int>{5}));

  auto unsigned_fn = ag::function([](Tensor x) { return x; }, {.name = "plain"});
  EXPECT_EQ(error_of([&] { unsigned_fn.get_concrete_function(); }),
            "ValueError: ag::function 'plain' has no input_signature, so get_concrete_function() "
            "needs its arguments: pass tensors or TensorSpecs, one per parameter");
  auto short_signature =
      ag::function([](Tensor a, Tensor b) { return a + b; },
                   {.input_signature = std::vector{TensorSpec({}, ag::int32)}, .name = "add"});
  EXPECT_EQ(error_of([&] { short_signature.get_concrete_function(); }),
            "ValueError: ag::function 'add' takes 2 arguments but its input_signature has 1 "
            "TensorSpec: give one TensorSpec per parameter");
  EXPECT_EQ(short_signature.tracing_count(), 0);
}

TEST(Function, UnknownDimsResolveAtRunTime) {
  auto g = ag::function([](Tensor x) { return x * 2 + 1; },
                        {.input_signature = std::vector{TensorSpec({ag::kUnknownDim}, ag::int32)}});
  EXPECT_EQ(g(ag::constant({1, 2})).to_vector<int>(), (std::vector<int>{3, 5}));
  std::vector<int32_t> big(100000, 3);
  Tensor out = g(ag::constant(big, ag::Shape{100000}));
  EXPECT_EQ(out.shape(), ag::Shape{100000});
  EXPECT_EQ(out.to_vector<int>()[99999], 7);
  EXPECT_EQ(g.tracing_count(), 1);
}

TEST(Function, ReduceRetracingRelaxesToNone) {
  auto f =
      ag::function([](Tensor x) { return x + 1; }, {.reduce_retracing = true, .arg_names = {"x"}});
  for (int n : {3, 5, 7, 9}) {
    std::vector<int32_t> v(size_t(n), 1);
    EXPECT_EQ(f(ag::constant(v, ag::Shape{n})).shape(), ag::Shape{n});
  }
  EXPECT_EQ(f.tracing_count(), 2);
  std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_CONTAINS(sigs, "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(3,), dtype=int32)");
  EXPECT_CONTAINS(sigs, "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=int32)");
}

TEST(Function, LiteralArgumentsRetraceTensorArgumentsDoNot) {
  int traces = 0;
  auto train_literal = ag::function([&](int num_steps) {
    ++traces;
    Tensor loss = ag::constant(0);
    for (int i = 0; i < num_steps; ++i) loss = loss + 1;  // unrolled while tracing
    return loss;
  });
  EXPECT_EQ(train_literal(10).item<int>(), 10);
  EXPECT_EQ(train_literal(20).item<int>(), 20);
  EXPECT_EQ(traces, 2);

  auto train_tensor = ag::function([](Tensor num_steps) { return num_steps * 1; });
  train_tensor(ag::constant(10));
  train_tensor(ag::constant(20));
  EXPECT_EQ(train_tensor.tracing_count(), 1);
}

TEST(Function, SeparateFunctionObjectsDoNotShareTraces) {
  auto body = [](Tensor x) { return x * x; };
  auto f1 = ag::function(body);
  auto f2 = ag::function(body);
  f1(ag::constant(2));
  f2(ag::constant(2));
  f1(ag::constant(3));
  EXPECT_EQ(f1.tracing_count(), 1);
  EXPECT_EQ(f2.tracing_count(), 1);
}

TEST(Function, VariablesAreCapturedByReference) {
  ag::Variable foo(1);
  auto variable_add = ag::function([&] { return 1 + foo.read(); });
  EXPECT_EQ(variable_add().item<int>(), 2);
  foo.assign(100);
  EXPECT_EQ(variable_add().item<int>(), 101);
  EXPECT_EQ(variable_add.tracing_count(), 1);
}

TEST(Function, TraceKeepsItsVariablesAlive) {
  std::optional<ag::Variable> v(ag::Variable(ag::constant(5)));
  auto read = ag::function([&] { return v->read() * 2; });
  EXPECT_EQ(read().item<int>(), 10);
  auto concrete = read.get_concrete_function();
  v.reset();  // the trace still holds the variable's state
  EXPECT_EQ(concrete().item<int>(), 10);
}

TEST(Function, BuggyAddFreezesAGlobalButNotAVariable) {
  static int foo = 1;
  auto buggy_add = ag::function([] { return ag::constant(1) + foo; });
  EXPECT_EQ(buggy_add().item<int>(), 2);
  foo = 100;
  EXPECT_EQ(buggy_add().item<int>(), 2);  // frozen at trace time, as in the TensorFlow guide
}

struct Model : ag::Module {
  ag::Variable v{0};
  int counter = 0;
  Tensor call() {
    if (counter == 0) {  // a C++ side effect: only while tracing
      counter += 1;
      v.assign_add(1);
    }
    return v.read();
  }
};

TEST(Function, ModelCounterPitfallPrintsOneTwoThree) {
  Model m;
  auto call = ag::function([](Model* model) { return model->call(); });
  std::vector<int> seen;
  for (int n = 0; n < 3; ++n) seen.push_back(call(&m).item<int>());
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
}

struct Count : ag::Module {
  std::optional<ag::Variable> count;
  Tensor call() {
    if (!count) count.emplace(ag::constant(0));  // the create-once pattern
    return count->assign_add(1);
  }
};

TEST(Function, CreateOnceVariablePatternWorks) {
  Count c;
  auto call = ag::function([](Count* self) { return self->call(); });
  EXPECT_EQ(call(&c).item<int>(), 1);
  EXPECT_EQ(call(&c).item<int>(), 2);
  // Another module gets its own first trace, so it may create its variable.
  Count d;
  EXPECT_EQ(call(&d).item<int>(), 1);
}

// What agc emits for a marked method defined outside its class: the body is a
// lambda capturing `this`, handed to ag::call_method with the arguments.
struct Scaler : ag::Module {
  explicit Scaler(double s) : scale(s) {}
  Tensor scaled(Tensor x);
  double scale;
  int body_runs = 0;
};

Tensor Scaler::scaled(Tensor x) {
  auto body = [&](Tensor x) -> Tensor {
    ++body_runs;  // only while tracing
    return x * scale;
  };
  return ag::call_method(this, "Scaler::scaled", {"x"}, body, x);
}

TEST(Function, OutOfClassMethodTracesOncePerModuleWithItsOwnObject) {
  Scaler two(2), three(3);
  EXPECT_EQ(two.scaled(ag::constant(1.0)).item<float>(), 2.0f);
  // Another module traces with its own object, not the first one's lambda.
  EXPECT_EQ(three.scaled(ag::constant(1.0)).item<float>(), 3.0f);
  EXPECT_EQ(two.scaled(ag::constant(5.0)).item<float>(), 10.0f);
  EXPECT_EQ(three.scaled(ag::constant(5.0)).item<float>(), 15.0f);
  EXPECT_EQ(two.body_runs, 1);
  EXPECT_EQ(three.body_runs, 1);
  ag::run_functions_eagerly(true);
  EXPECT_EQ(three.scaled(ag::constant(2.0)).item<float>(), 6.0f);
  ag::run_functions_eagerly(false);
  EXPECT_EQ(three.body_runs, 2);
}

TEST(Function, VariableCreatedOnALaterTraceIsAnError) {
  auto f = ag::function(
      [](Tensor x) {
        ag::Variable v(ag::constant(1.0));
        return x + v.read();
      },
      {.name = "f"});
  f(ag::constant(1.0));
  std::string err = error_of([&] { f(ag::constant(1)); });
  EXPECT_CONTAINS(err, "ValueError");
  EXPECT_CONTAINS(err, "'f' only supports Variables created on its first call");
}

TEST(Function, ModuleTracesGoWithTheModule) {
  auto call = ag::function([](Model* model) { return model->v.read(); });
  {
    Model a;
    call(&a);
    EXPECT_EQ(call.tracing_count(), 1);
    EXPECT_CONTAINS(call.pretty_printed_concrete_signatures(), "Module[id=");
  }
  EXPECT_EQ(call.pretty_printed_concrete_signatures(), "");
}

TEST(Function, PrintsOnceInGraphModeAndEveryCallEagerly) {
  int prints = 0;
  auto get_mse = ag::function([&](Tensor y_true, Tensor y_pred) {
    ++prints;  // stands for std::cout << "Calculating MSE!"
    Tensor sq_diff = ag::pow(y_true - y_pred, 2);
    return ag::reduce_mean(sq_diff);
  });
  Tensor y_true = ag::constant({2, 0, 7, 2, 3});
  Tensor y_pred = ag::constant({9, 9, 1, 1, 5});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(get_mse(y_true, y_pred).item<int>(), 34);
  EXPECT_EQ(prints, 1);
  ag::run_functions_eagerly(true);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(get_mse(y_true, y_pred).item<int>(), 34);
  ag::run_functions_eagerly(false);
  EXPECT_EQ(prints, 4);
}

TEST(Function, MyReluHasThreeConcreteFunctions) {
  struct Relu {
    Tensor operator()(const Tensor& x) const { return ag::maximum(0.0, x); }
    Tensor operator()(const std::vector<int>& x) const {
      return ag::maximum(0.0, ag::cast(ag::constant(x, ag::Shape{int64_t(x.size())}), ag::float32));
    }
  };
  auto my_relu = ag::function(Relu{}, {.name = "my_relu", .arg_names = {"x"}});
  EXPECT_FLOAT_EQ(my_relu(ag::constant(5.5)).item<float>(), 5.5f);
  EXPECT_EQ(my_relu(std::vector<int>{1, -1}).to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_EQ(my_relu(ag::constant({3.0, -3.0})).to_vector<float>(), (std::vector<float>{3, 0}));
  EXPECT_FLOAT_EQ(my_relu(ag::constant(-2.5)).item<float>(), 0.0f);
  EXPECT_EQ(my_relu.tracing_count(), 3);
  std::string sigs = my_relu.pretty_printed_concrete_signatures();
  EXPECT_CONTAINS(sigs,
                  "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=float32)\nOutput Type:\n  "
                  "TensorSpec(shape=(), dtype=float32)\nCaptures:\n  None");
  EXPECT_CONTAINS(sigs, "x (POSITIONAL_OR_KEYWORD): List[Literal[1], Literal[-1]]");
  EXPECT_CONTAINS(sigs, "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=float32)");
}

Tensor g_leaked;

TEST(Function, LeakedTensorNamesItsFunction) {
  auto leaky_function = ag::function(
      [](Tensor a) {
        g_leaked = a + 1;  // bad: leaks a symbolic tensor
        return a + 2;
      },
      {.name = "leaky_function"});
  EXPECT_EQ(leaky_function(ag::constant(1)).item<int>(), 3);
  std::string err = error_of([] { g_leaked.item<int>(); });
  EXPECT_CONTAINS(err, "leaked from function 'leaky_function'");
  auto captures_leaked = ag::function([](Tensor b) { return b + g_leaked; });
  err = error_of([&] { captures_leaked(ag::constant(2)); });
  EXPECT_CONTAINS(err, "leaked from function 'leaky_function'");
  g_leaked = Tensor();
}

TEST(Function, SymbolicTensorToBoolSaysWhatAgcStages) {
  auto f = ag::function(
      [](Tensor x) {
        if (ag::reduce_sum(x) > 0) return x;  // not converted by agc
        return -x;
      },
      {.name = "f"});
  std::string err = error_of([&] { f(ag::constant({1, 2})); });
  EXPECT_CONTAINS(err, "cannot be converted to bool while tracing function 'f'");
  EXPECT_CONTAINS(err, "agc stages the conditions of if, while, for and ?:");
  EXPECT_CONTAINS(err, "ag::cond");
  // The code may be what agc wrote: the message never says to run agc on it.
  EXPECT_EQ(err.find("Run agc"), std::string::npos);
}

TEST(Function, SymbolicTensorItemSaysToKeepATensor) {
  auto f = ag::function([](Tensor x) { return Tensor(x.item<float>() * 2); }, {.name = "f"});
  std::string err = error_of([&] { f(ag::constant(1.0f)); });
  EXPECT_CONTAINS(err,
                  "cannot be item() while tracing function 'f': its value is only known "
                  "when the graph runs; keep it a tensor and compute with ag ops");
  EXPECT_EQ(err.find("agc"), std::string::npos);
}

TEST(Function, RecursionIsAnError) {
  std::function<Tensor(Tensor)> self;
  auto rec = ag::function([&](Tensor n) { return self(n - 1); }, {.name = "recursive_fn"});
  self = [&](Tensor n) { return rec(n); };
  std::string err = error_of([&] { rec(ag::constant(5)); });
  EXPECT_CONTAINS(err, "'recursive_fn' calls itself");
}

TEST(Function, FunctionsInsideFunctionsInline) {
  auto add = ag::function([](Tensor a, Tensor b) { return a + b; });
  auto dense_layer =
      ag::function([&](Tensor x, Tensor w, Tensor b) { return add(ag::matmul(x, w), b); });
  Tensor out = dense_layer(ag::ones({3, 2}), ag::ones({2, 2}), ag::ones({2}));
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(6, 3.0f));
  EXPECT_EQ(add.tracing_count(), 0);  // inlined into dense_layer's trace
}

TEST(Function, ReturnsTuplesAndStructs) {
  auto f = ag::function([](Tensor x) { return std::make_tuple(x + 1, x * 2); });
  auto [a, b] = f(ag::constant(3));
  EXPECT_EQ(a.item<int>(), 4);
  EXPECT_EQ(b.item<int>(), 6);
}

TEST(Function, RetracingWarnsNamingTheArgument) {
  std::vector<std::string> warnings;
  ag::set_log_hook([&](ag::LogLevel, const std::string& m) { warnings.push_back(m); });
  auto f = ag::function([](Tensor x, int step) { return x + step; },
                        {.name = "f", .arg_names = {"x", "step"}});
  for (int i = 0; i < 7; ++i) f(ag::constant(1), i);
  ag::set_log_hook(nullptr);
  ASSERT_FALSE(warnings.empty());
  EXPECT_CONTAINS(warnings[0], "argument 'step' changes on every call");
}

TEST(Function, ConcurrentCallsTraceEachSignatureOnce) {
  std::atomic<int> traces{0};
  auto f = ag::function([&](Tensor x) {
    ++traces;
    return x * 2;
  });
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if ((i + t) % 2) {
          if (f(ag::constant(i)).item<int>() != 2 * i) ++wrong;
        } else {
          if (f(ag::constant({float(i), 1.0f})).to_vector<float>()[0] != 2.0f * float(i)) ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(traces.load(), 2);
  EXPECT_EQ(f.tracing_count(), 2);
}

}  // namespace
