// Argument plumbing of ag::function: how a call's arguments are hashed,
// matched, flattened to tensors and replaced by placeholders when traced, and
// how a traced result is rebuilt from the graph's outputs. Not for users:
// include ag/function.h.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ag/detail/function_core.h"
#include "ag/tensor.h"
#include "ag/trace_type.h"

namespace ag::detail {

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

// The parameter types of a callable with one call operator that is not a
// template (a lambda without auto parameters, a function object, a function
// pointer), as a std::tuple; no `type` for a generic lambda.
template <class F>
struct CallParameters {};
template <class F>
  requires requires { &F::operator(); }
struct CallParameters<F> : CallParameters<decltype(&F::operator())> {};
template <class R, class... A>
struct CallParameters<R (*)(A...)> {
  using type = std::tuple<A...>;
};
template <class R, class... A>
struct CallParameters<R (*)(A...) noexcept> : CallParameters<R (*)(A...)> {};
template <class C, class R, class... A>
struct CallParameters<R (C::*)(A...)> : CallParameters<R (*)(A...)> {};
template <class C, class R, class... A>
struct CallParameters<R (C::*)(A...) const> : CallParameters<R (*)(A...)> {};
template <class C, class R, class... A>
struct CallParameters<R (C::*)(A...) noexcept> : CallParameters<R (*)(A...)> {};
template <class C, class R, class... A>
struct CallParameters<R (C::*)(A...) const noexcept> : CallParameters<R (*)(A...)> {};

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
    // A single tensor is the call's one output: copying the template (a
    // symbolic tensor) would only add a reference count taken and dropped.
    if constexpr (std::is_same_v<R, Tensor>) return std::move(outputs[0]);
    R result = *static_cast<const R*>(concrete_result_template(core));
    size_t i = 0;
    for_each_tensor(result, [&](Tensor& t) { t = std::move(outputs[i++]); });
    return result;
  }
}

// Calls `f` with the traced arguments as rvalues, or, when it cannot take
// them so, as lvalues: a template marked with a forwarding parameter (`T&&`)
// and called with an lvalue has deduced a non-const reference.
template <class F, class... Ts>
decltype(auto) apply_traced(F& f, std::tuple<Ts...>& traced) {
  if constexpr (std::is_invocable_v<F&, Ts&&...>) {
    return std::apply(f, std::move(traced));
  } else {
    return std::apply(f, traced);
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
      apply_traced(*f, traced);
      request.set_result({}, nullptr, typeid(void));
    } else {
      auto result = std::make_shared<R>(apply_traced(*f, traced));
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

}  // namespace ag::detail
