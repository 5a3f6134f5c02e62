// Staged control flow, by hand and as `agc` emits it (docs/codegen-contract.md).
//
// Every form accepts a plain `bool` condition, and is then ordinary C++
// control flow chosen at compile time. With an eager tensor it runs natively.
// While a function is traced, a tensor condition stages an If or While node
// whose branches and body are traced into nested graphs, capturing the outer
// tensors they use.
//
// Statement forms work on locals by reference (AutoGraph's get_state /
// set_state): `ag::state({"x", "y"}, x, y)` names the locals that the
// construct modifies and that are used afterwards. State elements are
// ag::Tensor, ag::TensorArray, or tuples, pairs, vectors and structs of them
// (structs through `auto ag_fields(S& s) { return std::tie(s.a, s.b); }`).
//
// What you write                        What agc emits
// ------------------------------------  --------------------------------------------------
// if (x > 0) { y = x; } else { y = -x; }
//                                       ag::if_stmt(x > 0, [&] { y = x; }, [&] { y = -x; },
//                                                   ag::state({"y"}, y));
// while (ag::reduce_sum(x) > 1) { x = ag::tanh(x); }
//                                       ag::while_stmt([&] { return ag::reduce_sum(x) > 1; },
//                                                      [&] { x = ag::tanh(x); },
//                                                      ag::state({"x"}, x));
// for (auto i : ag::range(n)) { s += i; }
//                                       ag::for_stmt(ag::range(n), ag::no_extra_test,
//                                                    [&](ag::Tensor i) { s += i; },
//                                                    ag::state({"s"}, s));
// a && b   (on tensors)                 ag::and_(a, [&] { return b; })
// a || b                                ag::or_(a, [&] { return b; })
// !a                                    ag::not_(a)
// c ? a : b                             ag::if_exp(c, [&] { return a; }, [&] { return b; })
//
// AutoGraph's rules hold: a local undefined before an `if` and set in one
// branch only is an error ("'y' must also be initialized in the else
// branch") unless its name starts with `agc_retval`; branch results must
// agree in dtype (shapes merge to the most specific common shape); a loop
// variable keeps its dtype, and when its shape changes the differing dims
// become None and the body is traced again (unless a shape invariant says
// otherwise); conditions must be scalar bools.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ag/annotate.h"
#include "ag/function.h"
#include "ag/ops.h"
#include "ag/tensor.h"
#include "ag/tensor_array.h"
#include "ag/trace_type.h"

namespace ag {

template <class... Ts>
struct State {
  std::array<const char*, sizeof...(Ts)> names;
  std::tuple<Ts&...> vars;
};

namespace api {
template <class T, class... Ts>
State<T, Ts...> state(const char* const (&names)[sizeof...(Ts) + 1], T& first, Ts&... rest) {
  State<T, Ts...> s{{}, std::tie(first, rest...)};
  for (size_t i = 0; i < sizeof...(Ts) + 1; ++i) s.names[i] = names[i];
  return s;
}
inline State<> state() {
  return {};
}
}  // namespace api

struct NoExtraTest {};
inline constexpr NoExtraTest no_extra_test{};

struct WhileOptions {
  // Per loop variable (flattened, in order); nullopt leaves that one free.
  std::vector<std::optional<Shape>> shape_invariants = {};
  std::optional<int64_t> maximum_iterations = std::nullopt;
};

namespace detail {

// A non-owning reference to a callable, so staging code is not a template.
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F>
  FnRef(F& f)
      : object_(&f), call_([](void* o, A... a) -> R { return (*static_cast<F*>(o))(a...); }) {}
  R operator()(A... a) const { return call_(object_, a...); }

 private:
  void* object_;
  R (*call_)(void*, A...);
};

// One tensor of the state, with the name errors use.
struct Leaf {
  Tensor* tensor;
  std::string name;
  // May stay undefined before a construct (return values, TensorArrays).
  bool undefined_ok;
  // For a TensorArray's buffer: the rows it has before its first write (the
  // value a path that does not write it leaves); -1 for other leaves.
  int64_t array_rows = -1;
};

template <class T>
constexpr bool is_stageable();

template <class Tuple, size_t... I>
constexpr bool elements_stageable(std::index_sequence<I...>) {
  return (is_stageable<std::remove_reference_t<std::tuple_element_t<I, Tuple>>>() && ...);
}

// Whether a value of type T can be the state of staged control flow (what
// collect_leaves takes): ag::Tensor, ag::TensorArray, and vectors, arrays,
// tuples, pairs and ag_fields structs of them.
template <class T>
constexpr bool is_stageable() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, Tensor> || std::is_same_v<U, TensorArray>) {
    return true;
  } else if constexpr (IsVector<U>::value || IsArray<U>::value) {
    return is_stageable<typename U::value_type>();
  } else if constexpr (HasFields<U>) {
    using Fields = std::remove_cvref_t<decltype(ag_fields(std::declval<U&>()))>;
    return elements_stageable<Fields>(std::make_index_sequence<std::tuple_size_v<Fields>>{});
  } else if constexpr (IsTupleLike<U>::value) {
    return elements_stageable<U>(std::make_index_sequence<std::tuple_size_v<U>>{});
  } else {
    return false;
  }
}

template <class T>
void collect_leaves(T& value, const std::string& name, std::vector<Leaf>& out) {
  using U = std::remove_cv_t<T>;
  static_assert(is_stageable<U>(), "leaves_of calls collect_leaves on stageable types only");
  if constexpr (std::is_same_v<U, Tensor>) {
    out.push_back({&value, name, name.rfind(AG_RETVAL_PREFIX, 0) == 0});
  } else if constexpr (std::is_same_v<U, TensorArray>) {
    out.push_back({&value.buffer(), name, true, value.initial_size()});
  } else if constexpr (IsVector<U>::value || IsArray<U>::value) {
    for (size_t i = 0; i < value.size(); ++i)
      collect_leaves(value[i], name + "[" + std::to_string(i) + "]", out);
  } else {
    auto fields = [&] {
      if constexpr (HasFields<U>) {
        return ag_fields(value);
      } else {
        return std::apply([](auto&... e) { return std::tie(e...); }, value);
      }
    }();
    size_t i = 0;
    std::apply([&](auto&... e) { (collect_leaves(e, name + "." + std::to_string(i++), out), ...); },
               fields);
  }
}

// The TypeError of staging a construct whose state `name` has a type that
// cannot be staged (the message says what state may be).
[[noreturn]] void throw_unstageable_state(const char* name, const std::type_info& type);

// The state's tensors. A type that cannot be staged reaches this only from a
// template agc converted, when an instantiation gives the state such a type
// (agc rejects the state at its line when it can see the type): the
// construct still runs on a C++ bool or an eager condition, and staging it
// is a TypeError naming the variable.
template <class... Ts>
std::vector<Leaf> leaves_of(State<Ts...>& s) {
  if constexpr ((is_stageable<Ts>() && ...)) {
    std::vector<Leaf> out;
    size_t i = 0;
    std::apply([&](auto&... v) { (collect_leaves(v, s.names[i++], out), ...); }, s.vars);
    return out;
  } else {
    const bool stageable[] = {is_stageable<Ts>()...};
    const std::type_info* types[] = {&typeid(Ts)...};
    size_t i = 0;
    while (stageable[i]) ++i;
    throw_unstageable_state(s.names[i], *types[i]);
  }
}

using CollectLeaves = FnRef<std::vector<Leaf>()>;

// Throws unless `cond` can be the condition of `construct` ("if", "&&"): a
// defined scalar bool; for more than one element, eager operator bool's error.
void check_condition(const Tensor& cond, const std::string& construct);
// The value of an eager condition, which must be a scalar bool.
bool eager_truth(const Tensor& cond, const char* construct);
void stage_if(const Tensor& pred, FnRef<void()> then_fn, FnRef<void()> else_fn,
              CollectLeaves leaves);
void stage_while(FnRef<Tensor()> test, FnRef<void()> body, CollectLeaves leaves,
                 const WhileOptions& options);
// The length of the first axis of `t`, as an int64 scalar tensor.
Tensor first_dim(const Tensor& t);

template <class T>
Tensor to_tensor(const T& v) {
  return Tensor(v);
}

template <class T>
inline constexpr bool kIsTensor = std::is_same_v<std::remove_cvref_t<T>, Tensor>;

// An operand of a tensor `&&` or `||` (`op`) as a bool tensor: a tensor must
// be a condition (as eager operator bool requires), a C++ value (bool,
// number, pointer) gives its truth value, as in C++.
template <class T>
Tensor logical_operand(const T& v, const char* op) {
  if constexpr (kIsTensor<T>) {
    check_condition(v, op);
    return v;
  } else {
    return Tensor(static_cast<bool>(v));
  }
}

}  // namespace detail

namespace api {

// ---- Statement forms (emitted by agc) ----------------------------------------

template <class C, class Then, class Else, class... Ts>
void if_stmt(const C& cond, Then&& then_fn, Else&& else_fn, State<Ts...> st) {
  if constexpr (std::is_same_v<C, bool>) {
    if (cond) {
      then_fn();
    } else {
      else_fn();
    }
  } else {
    static_assert(std::is_same_v<C, Tensor>, "if_stmt: the condition must be bool or ag::Tensor");
    if (!cond.is_symbolic()) {
      if (detail::eager_truth(cond, "if")) {
        then_fn();
      } else {
        else_fn();
      }
      return;
    }
    auto collect = [&] { return detail::leaves_of(st); };
    detail::stage_if(cond, then_fn, else_fn, collect);
  }
}

template <class Test, class Body, class... Ts>
void while_stmt(Test&& test, Body&& body, State<Ts...> st, const WhileOptions& options = {}) {
  using R = std::invoke_result_t<Test&>;
  if constexpr (std::is_same_v<R, bool>) {
    while (test()) body();
  } else {
    static_assert(std::is_same_v<R, Tensor>, "while_stmt: the test must return bool or ag::Tensor");
    if (!detail::is_tracing()) {
      int64_t iterations = 0;
      while ((!options.maximum_iterations || iterations < *options.maximum_iterations) &&
             detail::eager_truth(test(), "while")) {
        body();
        ++iterations;
      }
      return;
    }
    auto tensor_test = [&]() -> Tensor { return test(); };
    auto collect = [&] { return detail::leaves_of(st); };
    detail::stage_while(tensor_test, body, collect, options);
  }
}

// `site` is the loop's, for the ops that staging it adds.
template <class Iterable, class ExtraTest, class Body, class... Ts>
void for_stmt(const Iterable& iterable, ExtraTest&& extra_test, Body&& body, State<Ts...> st,
              CallSite site = CallSite::current()) {
  constexpr bool kHasExtraTest = !std::is_same_v<std::remove_cvref_t<ExtraTest>, NoExtraTest>;
  auto extra = [&]() -> Tensor {
    if constexpr (kHasExtraTest) {
      return detail::to_tensor(extra_test());
    } else {
      return Tensor(true);
    }
  };
  if constexpr (!std::is_same_v<Iterable, Tensor>) {
    // A C++ range: an ordinary loop (unrolled while tracing).
    for (auto&& item : iterable) {
      if constexpr (kHasExtraTest) {
        if (!detail::eager_truth(extra(), "for")) break;
      }
      body(item);
    }
  } else if (!detail::is_tracing()) {
    if (iterable.rank() == 0)
      throw InvalidArgumentError("for: cannot iterate over a scalar tensor");
    for (int64_t i = 0; i < iterable.shape()[0]; ++i) {
      if constexpr (kHasExtraTest) {
        if (!detail::eager_truth(extra(), "for")) break;
      }
      body(iterable[i]);
    }
  } else {
    // Staged as a while loop over an index.
    Tensor n = detail::first_dim(iterable);
    Tensor index(int64_t{0});
    auto test = [&]() -> Tensor {
      if constexpr (kHasExtraTest) {
        return logical_and(less(index, n, site), extra(), site);
      } else {
        return less(index, n, site);
      }
    };
    auto step = [&] {
      body(gather(iterable, index, 0, site));
      index = add(index, int64_t{1}, site);
    };
    auto collect = [&] {
      std::vector<detail::Leaf> leaves = detail::leaves_of(st);
      leaves.push_back({&index, "agc_for_index", false});
      return leaves;
    };
    detail::stage_while(test, step, collect, {});
  }
}

// ---- Lazy logical operators and the conditional expression ------------------

template <class Pred, class TrueFn, class FalseFn>
auto cond(const Pred& pred, TrueFn&& true_fn, FalseFn&& false_fn) {
  using R = std::invoke_result_t<TrueFn&>;
  if constexpr (std::is_same_v<Pred, bool>) {
    return pred ? R(true_fn()) : R(false_fn());
  } else {
    if (!pred.is_symbolic())
      return detail::eager_truth(pred, "cond") ? R(true_fn()) : R(false_fn());
    R result{};
    if_stmt(
        pred, [&] { result = true_fn(); }, [&] { result = false_fn(); },
        state({"cond_output"}, result));
    return result;
  }
}

// `a && b` and `a || b` as agc lowers them: `b` runs only when `a` does not
// decide, eagerly and in a graph (where it is traced into a branch of an If
// node that runs only when needed). Each tensor operand must be a scalar bool;
// for more elements the error is eager operator bool's; other operands count
// as C++ truth values. The result is `bool` when neither side is a tensor,
// else an ag::Tensor.
template <class A, class BFn>
auto and_(const A& a, BFn&& b) {
  using B = std::invoke_result_t<BFn&>;
  if constexpr (!detail::kIsTensor<A> && !detail::kIsTensor<B>) {
    return static_cast<bool>(a) && static_cast<bool>(b());
  } else {
    auto rhs = [&] { return detail::logical_operand(b(), "&&"); };
    if constexpr (!detail::kIsTensor<A>) {
      return static_cast<bool>(a) ? rhs() : Tensor(false);
    } else {
      return cond(detail::logical_operand(a, "&&"), rhs, [] { return Tensor(false); });
    }
  }
}

template <class A, class BFn>
auto or_(const A& a, BFn&& b) {
  using B = std::invoke_result_t<BFn&>;
  if constexpr (!detail::kIsTensor<A> && !detail::kIsTensor<B>) {
    return static_cast<bool>(a) || static_cast<bool>(b());
  } else {
    auto rhs = [&] { return detail::logical_operand(b(), "||"); };
    if constexpr (!detail::kIsTensor<A>) {
      return static_cast<bool>(a) ? Tensor(true) : rhs();
    } else {
      return cond(detail::logical_operand(a, "||"), [] { return Tensor(true); }, rhs);
    }
  }
}

inline bool not_(bool a) {
  return !a;
}
inline Tensor not_(const Tensor& a, CallSite site = CallSite::current()) {
  return logical_not(a, site);
}

// With a tensor condition, C++ numbers in the branches become tensors, so
// that `x * (c ? 2 : 3)` can be staged.
template <class C, class AFn, class BFn>
auto if_exp(const C& c, AFn&& a, BFn&& b) {
  using R = std::common_type_t<std::invoke_result_t<AFn&>, std::invoke_result_t<BFn&>>;
  if constexpr (!std::is_same_v<C, bool> && std::is_arithmetic_v<R>) {
    return cond(
        c, [&] { return detail::to_tensor(R(a())); }, [&] { return detail::to_tensor(R(b())); });
  } else {
    return cond(c, a, b);
  }
}

// ---- Functional forms -----------------------------------------------------------

// Runs body_fn while cond_fn holds; loop_vars is a Tensor or a tuple of
// them (the functions then take the elements as arguments). Returns the
// final loop variables.
template <class CondFn, class BodyFn, class Vars>
Vars while_loop(CondFn&& cond_fn, BodyFn&& body_fn, Vars loop_vars,
                const WhileOptions& options = {}) {
  auto call = [&](auto& f) -> decltype(auto) {
    if constexpr (detail::IsTupleLike<Vars>::value) {
      return std::apply(f, loop_vars);
    } else {
      return f(loop_vars);
    }
  };
  while_stmt([&] { return detail::to_tensor(call(cond_fn)); },
             [&] { loop_vars = Vars(call(body_fn)); }, state({"loop_vars"}, loop_vars), options);
  return loop_vars;
}

}  // namespace api
}  // namespace ag
