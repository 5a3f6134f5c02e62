// Gradients: TensorFlow's GradientTape and JAX's grad / value_and_grad.
//
//   ag::GradientTape tape;                  // records the ops run on this thread
//   ag::Tensor loss = loss_fn(model(x), y); // trainable Variables read here are watched
//   std::vector<ag::Tensor> grads = tape.gradient(loss, vars);
//
//   auto step = ag::function(ag::grad(loss));   // one graph, forward and backward
//
// A tape records eagerly and while tracing alike: inside a traced function
// its gradient is built from symbolic ops, so forward and backward are one
// graph. Each op's gradient is declared with the op (include/ag/ops.def);
// docs/gradients.md lists what is differentiable and the limits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/tensor.h"
#include "ag/trace_type.h"
#include "ag/variable.h"

namespace ag {

// What a source the target does not depend on gets: an undefined tensor
// (tf.UnconnectedGradients.NONE) or zeros of its shape (ZERO).
enum class UnconnectedGradients { None, Zero };

namespace detail {

class TapeImpl;
struct TapeAccess;  // the runtime's own use of a tape (runtime/autodiff/tape.h)

// One source of a gradient call, flattened: a tensor, or a variable by id.
struct GradientSource {
  Tensor tensor;
  uint64_t variable = 0;  // 0: a tensor source
  DType dtype = DType::float32;
  Shape shape;
};

// A new handle to the same value with its own identity, so that a tape can
// tell it from other uses of the value (ag::grad's arguments).
Tensor alias(const Tensor& t);

// The structure of gradients for sources of type T: Tensors in place of
// Variables, the containers and ag_fields structs kept.
template <class T>
struct GradientStructure {
  static_assert(kAlwaysFalse<T>,
                "gradient sources are Tensor, Variable, std::vector, std::array, std::tuple or "
                "std::pair of those, or a struct with ag_fields whose fields are Tensors");
};
template <class T>
using GradientOf = typename GradientStructure<std::remove_cvref_t<T>>::type;

template <>
struct GradientStructure<Tensor> {
  using type = Tensor;
};
template <>
struct GradientStructure<Variable> {
  using type = Tensor;
};
template <class T, class A>
struct GradientStructure<std::vector<T, A>> {
  using type = std::vector<GradientOf<T>>;
};
template <class T, size_t N>
struct GradientStructure<std::array<T, N>> {
  using type = std::array<GradientOf<T>, N>;
};
template <class... T>
struct GradientStructure<std::tuple<T...>> {
  using type = std::tuple<GradientOf<T>...>;
};
template <class A, class B>
struct GradientStructure<std::pair<A, B>> {
  using type = std::pair<GradientOf<A>, GradientOf<B>>;
};
template <class T>
  requires HasFields<T>
struct GradientStructure<T> {
  using type = T;
};

template <class T>
void flatten_sources(const T& value, std::vector<GradientSource>& out) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    out.push_back({value, 0, value.defined() ? value.dtype() : DType::float32, {}});
  } else if constexpr (std::is_same_v<U, Variable>) {
    out.push_back({Tensor(), value.id(), value.dtype(), value.shape()});
  } else if constexpr (IsVector<U>::value || IsArray<U>::value) {
    for (const auto& e : value) flatten_sources(e, out);
  } else if constexpr (IsTupleLike<U>::value) {
    std::apply([&](const auto&... e) { (flatten_sources(e, out), ...); }, value);
  } else {
    static_assert(std::is_same_v<GradientOf<U>, U>);
    auto fields = ag_fields(const_cast<U&>(value));
    std::apply([&](auto&... e) { (flatten_sources(e, out), ...); }, fields);
  }
}

// Builds the gradients' structure from `value`'s, taking the flat gradients
// in order from `next`.
template <class T>
GradientOf<T> rebuild_gradients(const T& value, const Tensor*& next) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor> || std::is_same_v<U, Variable>) {
    return *next++;
  } else if constexpr (IsVector<U>::value) {
    GradientOf<U> out;
    out.reserve(value.size());
    for (const auto& e : value) out.push_back(rebuild_gradients(e, next));
    return out;
  } else if constexpr (IsArray<U>::value) {
    GradientOf<U> out;
    for (size_t i = 0; i < value.size(); ++i) out[i] = rebuild_gradients(value[i], next);
    return out;
  } else if constexpr (IsTupleLike<U>::value) {
    // Braced initialisation evaluates left to right, in the order of flattening.
    return std::apply(
        [&](const auto&... e) { return GradientOf<U>{rebuild_gradients(e, next)...}; }, value);
  } else {
    U out = value;
    auto fields = ag_fields(out);
    std::apply([&](auto&... e) { ((e = rebuild_gradients(e, next)), ...); }, fields);
    return out;
  }
}

}  // namespace detail

class GradientTape {
 public:
  // Records every op run on this thread while it is alive whose inputs
  // depend on a watched tensor, eagerly or while tracing. A persistent tape
  // allows several gradient() calls.
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  void watch(const Tensor& t);
  // The variable's reads from now on; trainable variables are watched on
  // their first read unless watch_accessed_variables is false.
  void watch(const Variable& v);

  // The gradient of `target` with respect to each source, in the sources'
  // structure: Tensor, Variable, std::vector, std::array, std::tuple,
  // std::pair of those, or an ag_fields struct of Tensors. A non-scalar
  // target is summed (TF), unless output_gradients seeds it (its shape).
  // Called during the next gradient() call for each source, with its index
  // among the flattened sources and its gradient (undefined when it has
  // none), as soon as that gradient is complete (every recorded op that read
  // the source has been differentiated): in the order the backward finishes
  // them, before the rest of the backward runs, on this thread. Work started
  // there (an all_reduce of the gradient on another thread) overlaps the
  // rest of the backward. The callback is used by one gradient() call.
  using GradientReady = std::function<void(size_t source, const Tensor& gradient)>;
  void on_gradient_ready(GradientReady ready);

  template <class Sources>
  detail::GradientOf<Sources> gradient(
      const Tensor& target, const Sources& sources,
      UnconnectedGradients unconnected = UnconnectedGradients::None,
      const Tensor& output_gradients = Tensor()) {
    std::vector<detail::GradientSource> flat;
    detail::flatten_sources(sources, flat);
    std::vector<Tensor> grads = gradient_flat(target, flat, unconnected, output_gradients);
    const Tensor* next = grads.data();
    return detail::rebuild_gradients(sources, next);
  }

 private:
  std::vector<Tensor> gradient_flat(const Tensor& target,
                                    const std::vector<detail::GradientSource>& sources,
                                    UnconnectedGradients unconnected,
                                    const Tensor& output_gradients);
  std::unique_ptr<detail::TapeImpl> impl_;
  friend struct detail::TapeAccess;
};

namespace detail {

// Gives each Tensor leaf of `value` its own identity and watches it; watches
// each Variable.
template <class T>
void watch_leaves(GradientTape& tape, T& value) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    value = alias(value);
    tape.watch(value);
  } else if constexpr (std::is_same_v<U, Variable>) {
    tape.watch(value);
  } else if constexpr (IsVector<U>::value || IsArray<U>::value) {
    for (auto& e : value) watch_leaves(tape, e);
  } else if constexpr (IsTupleLike<U>::value) {
    std::apply([&](auto&... e) { (watch_leaves(tape, e), ...); }, value);
  } else {
    static_assert(HasFields<U>, "ag::grad differentiates Tensor, Variable and structures of them");
    auto fields = ag_fields(value);
    std::apply([&](auto&... e) { (watch_leaves(tape, e), ...); }, fields);
  }
}

template <class F, class... Args, int... Argnums>
auto value_and_grad_call(const F& f, std::integer_sequence<int, Argnums...>, const Args&... args) {
  static_assert(sizeof...(Argnums) > 0);
  static_assert(((Argnums >= 0 && Argnums < int(sizeof...(Args))) && ...),
                "ag::grad: an argnum is out of range");
  std::tuple<Args...> arguments(args...);
  GradientTape tape;
  (watch_leaves(tape, std::get<Argnums>(arguments)), ...);
  Tensor value = std::apply(f, arguments);
  if constexpr (sizeof...(Argnums) == 1) {
    return std::pair{value, tape.gradient(value, std::get<Argnums...>(arguments))};
  } else {
    auto sources = std::make_tuple(std::get<Argnums>(arguments)...);
    return std::pair{value, tape.gradient(value, sources)};
  }
}

template <int... Argnums>
struct ArgnumsOrFirst {
  using type = std::integer_sequence<int, Argnums...>;
};
template <>
struct ArgnumsOrFirst<> {
  using type = std::integer_sequence<int, 0>;
};

}  // namespace detail

// JAX's value_and_grad: a callable that returns std::pair{f(args...), the
// gradient of f's result with respect to argument 0 (or the arguments
// Argnums..., as a std::tuple)}. f returns a Tensor, summed if not scalar.
// Composes with ag::function: ag::function(ag::value_and_grad(f)) traces
// forward and backward into one graph.
template <int... Argnums, class F>
auto value_and_grad(F f) {
  return [f = std::move(f)](const auto&... args) {
    return detail::value_and_grad_call(f, typename detail::ArgnumsOrFirst<Argnums...>::type{},
                                       args...);
  };
}

// JAX's grad: the gradient part of value_and_grad.
template <int... Argnums, class F>
auto grad(F f) {
  return [f = std::move(f)](const auto&... args) {
    return detail::value_and_grad_call(f, typename detail::ArgnumsOrFirst<Argnums...>::type{},
                                       args...)
        .second;
  };
}

}  // namespace ag
