// ag::function: trace a C++ callable into a graph on first call, cache the
// trace by the call's signature (ag/trace_type.h), and run the cached,
// optimised graph afterwards, as tf.function does.
//
//   auto next_collatz = ag::function(
//       [](ag::Tensor x) { return ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1); },
//       {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim}, ag::int32)},
//        .name = "next_collatz", .arg_names = {"x"}});
//   next_collatz(ag::constant({1, 2}));   // traces once, then runs the graph
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ag/detail/function_args.h"
#include "ag/detail/function_core.h"
#include "ag/tensor.h"
#include "ag/trace_type.h"
#include "ag/variable.h"

namespace ag {

struct FunctionOptions {
  // Fixes the function type: every call must pass tensors compatible with
  // these specs (None dims accept any size), and only one trace is made.
  std::optional<std::vector<TensorSpec>> input_signature = std::nullopt;
  // Relax dims that differ between calls to None instead of retracing.
  bool reduce_retracing = false;
  // Used in graphs, signatures and error messages.
  std::string name = {};
  // Names of the arguments, for placeholders and messages ("args_0" if absent).
  std::vector<std::string> arg_names = {};
};

// Runs every ag::function as plain C++ on every call (for debugging), as
// tf.config.run_functions_eagerly does.
void run_functions_eagerly(bool enabled);
bool functions_run_eagerly();

// Where the runtime's warnings (retracing) and debug messages (why a call
// hit, missed or retraced the cache) go. Default: warnings to stderr, debug
// messages dropped.
enum class LogLevel { Warning, Debug };
using LogHook = std::function<void(LogLevel, const std::string&)>;
void set_log_hook(LogHook hook);
void set_log_level(LogLevel max_level);

// Base class for objects whose methods are traced (like tf.Module). Every
// instance gets an id that is never reused, and its traces are dropped when it
// is destroyed. Copies get a new id.
class Module {
 public:
  Module();
  Module(const Module&);
  Module& operator=(const Module&) { return *this; }
  virtual ~Module();
  uint64_t module_id() const { return id_; }

 private:
  uint64_t id_;
};

namespace graph {
struct Body;
}

// A traced graph: what ConcreteFunction::graph() returns.
class Graph {
 public:
  Graph(std::shared_ptr<const graph::Body> body, std::string name);
  // One line per node, as the TensorFlow guide's as_graph_def loop prints it:
  //   [] -> a
  //   ['a', 'a'] -> add
  //   ['add'] -> Identity
  std::string to_string() const;
  // Graphviz DOT (dtype and shape on every edge; the bodies of staged `if`
  // and `while` drawn as clusters).
  std::string to_dot() const;
  size_t num_nodes() const;
  // The op of each node, in order ("Placeholder", "add", "Identity", ...).
  std::vector<std::string> ops() const;
  const graph::Body& body() const { return *body_; }

 private:
  std::shared_ptr<const graph::Body> body_;
  std::string name_;
};

// What the executor compiled a trace into, counted over its plan and the
// plans of its staged `if` and `while` bodies (docs/architecture.md,
// "Executor"). Buffers are the arena's allocations for intermediate values,
// made on the first call and kept: later calls allocate only their results.
struct PlanStats {
  size_t steps = 0;
  size_t fused_steps = 0;   // a chain of elementwise ops (and a reduction), run block by block
  size_t scalar_steps = 0;  // an op on rank-0 values: one direct kernel call
  size_t flat_steps = 0;    // an op on a small static vector: one flat loop
  size_t buffers = 0;
  // Steps of a loop body that write into a loop variable's own memory
  // (a TensorArray write, an elementwise update).
  size_t in_place_steps = 0;
  // Rows x[i] and slices x[:, i, :] read where they are, without a copy.
  size_t views = 0;
  size_t loops = 0;
  size_t inline_loops = 0;        // run inside their parent's program
  size_t interchanged_loops = 0;  // a recurrence kept in an array's rows, run batch-major

  // "3 steps (1 fused, 2 scalar, 0 flat), 2 buffers, 2 in place, 0 views, ..."
  std::string to_string() const;
  bool operator==(const PlanStats&) const = default;
};

// A trace of a function for one signature: callable with compatible
// arguments only.
template <class R>
class ConcreteFunction {
 public:
  explicit ConcreteFunction(std::shared_ptr<detail::ConcreteCore> core) : core_(std::move(core)) {}

  template <class... Args>
  R operator()(const Args&... args) const {
    std::vector<detail::Atom> call = detail::collect_atoms(args...);
    const auto& expected = detail::concrete_atoms(*core_);
    if (!compatible(call, expected)) detail::throw_bad_concrete_call(*core_, call);
    detail::FlatTensors flat;
    (detail::collect_inputs(args, flat), ...);
    std::vector<Tensor> outputs;
    detail::run_concrete(*core_, flat.view(), outputs);
    return detail::rebuild_result<R>(*core_, outputs);
  }

  // The graph as traced.
  Graph graph() const { return detail::concrete_graph(*core_); }
  // The graph that runs: the trace after the optimisation passes (constants
  // folded, common subexpressions merged, elementwise chains fused into one
  // `fused {sub, mul, reduce_mean}` node), as TorchScript's graph_for shows.
  Graph optimized_graph() const { return detail::concrete_optimized_graph(*core_); }
  // What the executor compiled that graph into.
  PlanStats plan_stats() const { return detail::concrete_plan_stats(*core_); }
  // What a call under a gradient tape runs (docs/gradients.md): the forward
  // graph, which also returns the intermediates the backward reads, and the
  // backward graph, optimised. Traced on first use, once per signature. An
  // UnimplementedError names why a function has none (its call under a tape
  // then runs op by op).
  std::pair<Graph, Graph> gradient_graphs() const {
    return detail::concrete_gradient_graphs(*core_);
  }
  // "(a: TensorSpec(shape=(), dtype=int32)) -> TensorSpec(shape=(), dtype=int32)"
  std::string function_type() const { return detail::concrete_function_type(*core_); }
  // "ConcreteFunction double(a)\n  a: int32 Tensor, shape=()\n  ..."
  std::string to_string() const { return detail::concrete_to_string(*core_); }

 private:
  static bool compatible(const std::vector<detail::Atom>& call,
                         const std::vector<detail::Atom>& expected) {
    if (call.size() != expected.size()) return false;
    for (size_t i = 0; i < call.size(); ++i) {
      const auto& a = call[i];
      const auto& b = expected[i];
      if (a.kind != b.kind) return false;
      if (a.kind == detail::AtomKind::Tensor) {
        if (a.dtype != b.dtype || !a.shape.is_subtype_of(b.shape)) return false;
      } else if (a.i != b.i || a.f != b.f || a.s != b.s || a.container != b.container) {
        return false;
      }
    }
    return true;
  }
  std::shared_ptr<detail::ConcreteCore> core_;
};

template <class F>
class PolymorphicFunction {
 public:
  PolymorphicFunction(F f, FunctionOptions options)
      : f_(std::make_shared<F>(std::move(f))),
        core_(std::make_shared<detail::FunctionCore>(std::move(options))) {}

  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    using R = std::invoke_result_t<F&, detail::TracedT<Args>...>;
    if (functions_run_eagerly()) return std::invoke(*f_, std::forward<Args>(args)...);
    if (detail::is_tracing()) {
      detail::InlineScope scope(*core_);
      return std::invoke(*f_, std::forward<Args>(args)...);
    }
    std::tuple<const std::remove_cvref_t<Args>&...> refs(args...);
    const detail::MatchCallback match{&refs, &detail::match_args<std::remove_cvref_t<Args>...>};
    // Usually the signature of the previous call: compared, not hashed.
    detail::ConcreteCore* concrete = core_->find_recent(match);
    if (!concrete) {
      detail::Hasher hasher;
      static const size_t result_type_hash = typeid(R).hash_code();  // hashes a name: once
      hasher.h = detail::mix(hasher.h, result_type_hash);
      (detail::visit_trace_type(hasher, args), ...);
      concrete = core_->find_exact(hasher.h, match);
      if (!concrete) {
        detail::Tracer<R, F, Args...> tracer{
            f_.get(), &core_->options().arg_names, {std::forward<Args>(args)...}};
        concrete = core_->resolve(hasher.h, detail::collect_atoms(args...),
                                  {&tracer, &decltype(tracer)::run});
      }
    }
    detail::FlatTensors flat;
    (detail::collect_inputs(args, flat), ...);
    // Reused by this thread's calls, so that a cache hit allocates no vector.
    // A nested call (from a host function the plan runs) is over before
    // run_concrete fills it, and rebuild_result moves the tensors out.
    static thread_local std::vector<Tensor> outputs;
    detail::run_concrete(*concrete, flat.view(), outputs);
    return detail::rebuild_result<R>(*concrete, outputs);
  }

  // A trace for these arguments; TensorSpecs stand for tensors of that type.
  // With an input_signature, the signature's trace (the arguments must fit it).
  template <class... Args>
  auto get_concrete_function(Args&&... args) const {
    static_assert(std::is_invocable_v<F&, detail::TracedT<Args>...>,
                  "get_concrete_function: the arguments do not fit the function's parameters; "
                  "pass one tensor or TensorSpec per tensor parameter (no arguments only for a "
                  "function with an input_signature and known parameters, not a generic lambda)");
    using R = std::invoke_result_t<F&, detail::TracedT<Args>...>;
    detail::Tracer<R, F, Args...> tracer{
        f_.get(), &core_->options().arg_names, {std::forward<Args>(args)...}};
    return ConcreteFunction<R>(
        core_->concrete_for(detail::collect_atoms(args...), {&tracer, &decltype(tracer)::run}));
  }

  // Without arguments, for a function with an input_signature: the
  // signature's trace, as tf.function's get_concrete_function(). Needs the
  // callable's parameters (not a generic lambda), each taking a tensor.
  auto get_concrete_function() const
    requires(std::tuple_size_v<typename detail::CallParameters<F>::type> > 0)
  {
    using Params = typename detail::CallParameters<F>::type;
    return [this]<size_t... I>(std::index_sequence<I...>) {
      static_assert((std::is_convertible_v<Tensor, std::tuple_element_t<I, Params>> && ...),
                    "get_concrete_function() without arguments traces the input_signature's "
                    "tensors: every parameter must take an ag::Tensor; pass the arguments");
      const std::vector<TensorSpec>& signature = core_->input_signature_of_arity(sizeof...(I));
      return get_concrete_function(signature[I]...);
    }(std::make_index_sequence<std::tuple_size_v<Params>>());
  }

  std::string pretty_printed_concrete_signatures() const {
    return core_->pretty_printed_concrete_signatures();
  }
  int tracing_count() const { return core_->tracing_count(); }
  const std::shared_ptr<detail::FunctionCore>& core() const { return core_; }

 private:
  std::shared_ptr<F> f_;
  std::shared_ptr<detail::FunctionCore> core_;
};

template <class F>
PolymorphicFunction<std::decay_t<F>> function(F&& f, FunctionOptions options = {}) {
  return PolymorphicFunction<std::decay_t<F>>(std::forward<F>(f), std::move(options));
}

// ---- What agc emits ------------------------------------------------------------

// The signatures and trace count of a function agc made for a marked free
// function `f`; in a build without agc, an eager-only handle with count 0.
class FunctionHandle {
 public:
  explicit FunctionHandle(std::shared_ptr<detail::FunctionCore> core) : core_(std::move(core)) {}
  int tracing_count() const { return core_ ? core_->tracing_count() : 0; }
  std::string pretty_printed_concrete_signatures() const {
    return core_ ? core_->pretty_printed_concrete_signatures() : "";
  }
  bool is_staged() const { return core_ != nullptr; }

 private:
  std::shared_ptr<detail::FunctionCore> core_;
};

template <class Fp>
FunctionHandle function_of(Fp f) {
  return FunctionHandle(detail::find_marked(reinterpret_cast<const void*>(f)));
}

// The static that agc puts next to a marked free function (see
// docs/codegen-contract.md).
template <auto Impl>
class MarkedFunction {
 public:
  template <class Fp>
  MarkedFunction(Fp address, const char* name, std::vector<std::string> arg_names)
      : fn_(Impl, FunctionOptions{.name = name, .arg_names = std::move(arg_names)}) {
    detail::register_marked(reinterpret_cast<const void*>(address), fn_.core());
  }
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return fn_(std::forward<Args>(args)...);
  }

 private:
  PolymorphicFunction<decltype(Impl)> fn_;
};

namespace detail {

// One traced function per marked method (Key names it), shared by the
// instances of its class: `self` comes first in every call, so traces are
// keyed by the instance's module id (ag/trace_type.h) and dropped with it.
template <class Key, class F>
const PolymorphicFunction<F>& method_function(F f, const char* name,
                                              std::vector<std::string>& arg_names) {
  static const PolymorphicFunction<F> fn = [&] {
    arg_names.insert(arg_names.begin(), "self");
    return PolymorphicFunction<F>(std::move(f),
                                  FunctionOptions{.name = name, .arg_names = arg_names});
  }();
  return fn;
}

// The body lambda of the method call in progress on this thread. A method
// defined outside its class keeps its converted body in a lambda that
// captures `this`: the shared traced function must run the lambda of the
// call that traces (or runs eagerly), not the first one it saw.
template <class Body>
inline thread_local const Body* current_method_body = nullptr;

template <class Body>
class CurrentMethodBody {
 public:
  explicit CurrentMethodBody(const Body& body) : saved_(current_method_body<Body>) {
    current_method_body<Body> = &body;
  }
  ~CurrentMethodBody() { current_method_body<Body> = saved_; }
  CurrentMethodBody(const CurrentMethodBody&) = delete;
  CurrentMethodBody& operator=(const CurrentMethodBody&) = delete;

 private:
  const Body* saved_;
};

// What the traced function of an out-of-class method calls: the current body.
template <class C, class Body>
struct MethodBody {
  template <class... Args>
  decltype(auto) operator()(C*, Args&&... args) const {
    return (*current_method_body<Body>)(std::forward<Args>(args)...);
  }
};

}  // namespace detail

// What agc emits as the body of a marked method of an ag::Module subclass
// defined in its class: the impl is the member `Impl`.
template <auto Impl, class C, class... Args>
decltype(auto) call_method(C* self, const char* name, std::vector<std::string> arg_names,
                           Args&&... args) {
  const auto& fn =
      detail::method_function<std::integral_constant<decltype(Impl), Impl>>(Impl, name, arg_names);
  return fn(self, std::forward<Args>(args)...);
}

// What agc emits as the body of a marked method defined outside its class
// (where agc cannot add a member, e.g. the class is in a header): `body` is a
// lambda in the method that holds the converted body and captures `this`.
// Its type names the method (each overload and instantiation has its own).
template <class C, class Body, class... Args>
decltype(auto) call_method(C* self, const char* name, std::vector<std::string> arg_names,
                           const Body& body, Args&&... args) {
  const auto& fn = detail::method_function<Body>(detail::MethodBody<C, Body>{}, name, arg_names);
  detail::CurrentMethodBody<Body> current(body);
  return fn(self, std::forward<Args>(args)...);
}

}  // namespace ag
