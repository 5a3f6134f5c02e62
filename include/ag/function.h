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
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

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
  // One line per node, as the seed guide's as_graph_def loop prints it:
  //   [] -> a
  //   ['a', 'a'] -> add
  //   ['add'] -> Identity
  std::string to_string() const;
  // Graphviz DOT (dtype and shape on every edge).
  std::string to_dot() const;
  size_t num_nodes() const;
  // The op of each node, in order ("Placeholder", "add", "Identity", ...).
  std::vector<std::string> ops() const;
  const graph::Body& body() const { return *body_; }

 private:
  std::shared_ptr<const graph::Body> body_;
  std::string name_;
};

namespace detail {

class ConcreteCore;
class FunctionCore;

bool is_tracing();
[[noreturn]] void throw_bad_concrete_call(const ConcreteCore& core,
                                          const std::vector<Atom>& call_atoms);

// Inline storage for the flat tensor inputs of a call.
class FlatTensors {
 public:
  void push(const Tensor& t) {
    if (size_ < kInline) {
      inline_[size_++] = &t;
    } else {
      if (heap_.empty()) heap_.assign(inline_, inline_ + kInline);
      heap_.push_back(&t);
      ++size_;
    }
  }
  std::span<const Tensor* const> view() const {
    return heap_.empty() ? std::span<const Tensor* const>(inline_, size_)
                         : std::span<const Tensor* const>(heap_);
  }

 private:
  static constexpr size_t kInline = 8;
  const Tensor* inline_[kInline];
  size_t size_ = 0;
  std::vector<const Tensor*> heap_;
};

// What the template side needs from a traced concrete function.
const std::vector<Atom>& concrete_atoms(const ConcreteCore& core);
// Runs the graph. `outputs` gets the flat results.
void run_concrete(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                  std::vector<Tensor>& outputs);
// The traced result object (with symbolic tensors) and its C++ type.
const void* concrete_result_template(const ConcreteCore& core);
const std::type_info& concrete_result_type(const ConcreteCore& core);

// While tracing: the template side asks for placeholders and reports results.
class TraceRequest {
 public:
  virtual ~TraceRequest() = default;
  // A symbolic tensor for the next tensor atom; `name` names its placeholder.
  virtual Tensor next_placeholder(const std::string& name) = 0;
  virtual void set_result(std::vector<Tensor> flat, std::shared_ptr<const void> result_template,
                          const std::type_info& result_type) = 0;
};

struct TraceCallback {
  void* context;
  void (*run)(void* context, TraceRequest& request);
};
struct MatchCallback {
  void* context;
  bool (*matches)(void* context, const std::vector<Atom>& atoms);
};

class FunctionCore {
 public:
  FunctionCore(FunctionOptions options, size_t arity);
  ~FunctionCore();
  FunctionCore(const FunctionCore&) = delete;
  FunctionCore& operator=(const FunctionCore&) = delete;

  // The fast path: an exact signature hit, or null.
  ConcreteCore* find_exact(uint64_t hash, MatchCallback match) const;
  // The slow path: the most specific compatible trace, or a new one.
  ConcreteCore* resolve(uint64_t hash, std::vector<Atom> call_atoms, TraceCallback trace);
  // get_concrete_function: a trace for exactly these atoms (specs allowed).
  std::shared_ptr<ConcreteCore> concrete_for(std::vector<Atom> call_atoms, TraceCallback trace);

  int tracing_count() const;
  std::string pretty_printed_concrete_signatures() const;
  const FunctionOptions& options() const;
  // Drops the traces that belong to a destroyed module.
  void drop_module(uint64_t module_id);

 private:
  std::shared_ptr<ConcreteCore> trace_locked(std::vector<Atom> call_atoms, TraceCallback trace);
  void warn_if_retracing(int count);
  struct State;
  std::unique_ptr<State> state_;
};

// Marks a call made while tracing, which runs inline; detects recursion.
class InlineScope {
 public:
  explicit InlineScope(const FunctionCore& core);
  ~InlineScope();
  InlineScope(const InlineScope&) = delete;
  InlineScope& operator=(const InlineScope&) = delete;
};
std::string concrete_to_string(const ConcreteCore& core);
Graph concrete_graph(const ConcreteCore& core);
std::string concrete_function_type(const ConcreteCore& core);

// ---- Argument plumbing --------------------------------------------------------

template <class T>
struct ContainsTensor
    : std::bool_constant<std::is_same_v<T, Tensor> || std::is_same_v<T, TensorSpec>> {};
template <class T, class A>
struct ContainsTensor<std::vector<T, A>> : ContainsTensor<T> {};
template <class T, size_t N>
struct ContainsTensor<std::array<T, N>> : ContainsTensor<T> {};
template <class... T>
struct ContainsTensor<std::tuple<T...>> : std::disjunction<ContainsTensor<T>...> {};
template <class A, class B>
struct ContainsTensor<std::pair<A, B>> : std::disjunction<ContainsTensor<A>, ContainsTensor<B>> {};
template <class K, class V, class C, class A>
struct ContainsTensor<std::map<K, V, C, A>> : ContainsTensor<V> {};
template <class K, class V, class H, class E, class A>
struct ContainsTensor<std::unordered_map<K, V, H, E, A>> : ContainsTensor<V> {};

// TensorSpec arguments (get_concrete_function) become Tensors when traced;
// every other argument keeps its type and value category.
template <class T>
struct Traced {
  using type = T;
};
template <class T>
  requires std::is_same_v<std::remove_cvref_t<T>, TensorSpec>
struct Traced<T> {
  using type = Tensor;
};
template <class T>
  requires std::is_same_v<std::remove_cvref_t<T>, std::vector<TensorSpec>>
struct Traced<T> {
  using type = std::vector<Tensor>;
};
template <class T>
using TracedT = typename Traced<T>::type;

// The argument as the traced function sees it: tensors (and specs) replaced
// by placeholders in order, everything else passed through.
template <class T>
decltype(auto) substitute(T&& arg, TraceRequest& request, const std::string& name) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor> || std::is_same_v<U, TensorSpec>) {
    return Tensor(request.next_placeholder(name));
  } else if constexpr (std::is_same_v<U, std::vector<TensorSpec>>) {
    std::vector<Tensor> out;
    for (size_t i = 0; i < arg.size(); ++i)
      out.push_back(request.next_placeholder(name + "_" + std::to_string(i)));
    return out;
  } else if constexpr (ContainsTensor<U>::value || HasFields<U>) {
    U copy = arg;
    size_t i = 0;
    for_each_tensor(
        copy, [&](Tensor& t) { t = request.next_placeholder(name + "_" + std::to_string(i++)); });
    return copy;
  } else {
    return std::forward<T>(arg);
  }
}

template <class T>
void collect_inputs(const T& arg, FlatTensors& flat) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    flat.push(arg);
  } else if constexpr (ContainsTensor<U>::value || HasFields<U>) {
    for_each_tensor(const_cast<U&>(arg), [&](Tensor& t) { flat.push(t); });
  }
}

// Fills a copy of the traced result with the call's outputs.
template <class R>
R rebuild_result(const ConcreteCore& core, std::vector<Tensor>& outputs) {
  if constexpr (std::is_void_v<R>) {
    return;
  } else {
    if (concrete_result_type(core) != typeid(R)) {
      throw InternalError(
          "ag::function: a trace was reused for a call with a different result type");
    }
    R result = *static_cast<const R*>(concrete_result_template(core));
    size_t i = 0;
    for_each_tensor(result, [&](Tensor& t) { t = std::move(outputs[i++]); });
    return result;
  }
}

template <class R, class F, class... Args>
struct Tracer {
  F* f;
  const std::vector<std::string>* arg_names;
  std::tuple<Args&&...> args;

  static std::string name_of(const std::vector<std::string>& names, size_t i) {
    return i < names.size() ? names[i] : "args_" + std::to_string(i);
  }

  static void run(void* context, TraceRequest& request) {
    auto& self = *static_cast<Tracer*>(context);
    self.invoke(request, std::index_sequence_for<Args...>{});
  }

  template <size_t... I>
  void invoke(TraceRequest& request, std::index_sequence<I...>) {
    // Substitute in argument order (braced init keeps the order).
    std::tuple<decltype(substitute(std::get<I>(std::move(args)), request, std::string()))...>
        traced{substitute(std::get<I>(std::move(args)), request, name_of(*arg_names, I))...};
    if constexpr (std::is_void_v<R>) {
      std::apply(*f, std::move(traced));
      request.set_result({}, nullptr, typeid(void));
    } else {
      auto result = std::make_shared<R>(std::apply(*f, std::move(traced)));
      std::vector<Tensor> flat;
      for_each_tensor(*result, [&](Tensor& t) { flat.push_back(t); });
      request.set_result(std::move(flat), result, typeid(R));
    }
  }
};

template <class... Args>
bool match_args(void* context, const std::vector<Atom>& atoms) {
  auto& args = *static_cast<std::tuple<const Args&...>*>(context);
  Matcher m{atoms};
  std::apply([&](const auto&... a) { (visit_trace_type(m, a), ...); }, args);
  return m.matched();
}

template <class... Args>
std::vector<Atom> collect_atoms(const Args&... args) {
  std::vector<Atom> atoms;
  Collector c{atoms};
  (visit_trace_type(c, args), ...);
  (void)c;
  return atoms;
}

}  // namespace detail

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

  Graph graph() const { return detail::concrete_graph(*core_); }
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
        core_(std::make_shared<detail::FunctionCore>(std::move(options), 0)) {}

  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    using R = std::invoke_result_t<F&, detail::TracedT<Args>...>;
    if (functions_run_eagerly()) return std::invoke(*f_, std::forward<Args>(args)...);
    if (detail::is_tracing()) {
      detail::InlineScope scope(*core_);
      return std::invoke(*f_, std::forward<Args>(args)...);
    }
    detail::Hasher hasher;
    hasher.h = detail::mix(hasher.h, typeid(R).hash_code());
    (detail::visit_trace_type(hasher, args), ...);
    std::tuple<const std::remove_cvref_t<Args>&...> refs(args...);
    detail::ConcreteCore* concrete =
        core_->find_exact(hasher.h, {&refs, &detail::match_args<std::remove_cvref_t<Args>...>});
    if (!concrete) {
      detail::Tracer<R, F, Args...> tracer{
          f_.get(), &core_->options().arg_names, {std::forward<Args>(args)...}};
      concrete = core_->resolve(hasher.h, detail::collect_atoms(args...),
                                {&tracer, &decltype(tracer)::run});
    }
    detail::FlatTensors flat;
    (detail::collect_inputs(args, flat), ...);
    std::vector<Tensor> outputs;
    detail::run_concrete(*concrete, flat.view(), outputs);
    return detail::rebuild_result<R>(*concrete, outputs);
  }

  // A trace for these arguments; TensorSpecs stand for tensors of that type.
  template <class... Args>
  auto get_concrete_function(Args&&... args) const {
    using R = std::invoke_result_t<F&, detail::TracedT<Args>...>;
    detail::Tracer<R, F, Args...> tracer{
        f_.get(), &core_->options().arg_names, {std::forward<Args>(args)...}};
    return ConcreteFunction<R>(
        core_->concrete_for(detail::collect_atoms(args...), {&tracer, &decltype(tracer)::run}));
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

namespace detail {
void register_marked(const void* address, std::shared_ptr<FunctionCore> core);
std::shared_ptr<FunctionCore> find_marked(const void* address);
}  // namespace detail

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

// What agc emits as the body of a marked method of an ag::Module subclass.
template <auto Impl, class C, class... Args>
decltype(auto) call_method(C* self, const char* name, std::vector<std::string> arg_names,
                           Args&&... args) {
  static const PolymorphicFunction<decltype(Impl)> fn = [&] {
    arg_names.insert(arg_names.begin(), "self");
    return PolymorphicFunction<decltype(Impl)>(
        Impl, FunctionOptions{.name = name, .arg_names = arg_names});
  }();
  return fn(self, std::forward<Args>(args)...);
}

}  // namespace ag
