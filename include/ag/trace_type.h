// Trace types: how a call's arguments select a trace (docs/architecture.md,
// "Tracing and the cache").
//
//   ag::Tensor                      by dtype and shape
//   ag::Variable                    by identity (and dtype, shape)
//   bool, integers, floating point,
//   enums, std::string              by value (Literal[3])
//   std::vector, std::array,
//   std::tuple, std::pair           by their elements, in order
//   std::map, std::unordered_map    key -> element type, order-independent
//   T* or T& with T an ag::Module   by the module's id (never reused)
//   user types                      through ADL hooks:
//     auto ag_fields(T& v) { return std::tie(v.a, v.b); }
//         a struct of traced fields; its tensors become graph inputs
//     auto ag_trace_type(const T& v) { return v.mode; }
//         the value that identifies v; v is passed through unchanged
//
// Anything else is a compile-time error that says how to give it a trace
// type. The same `ag_fields` hook makes structs usable as function results
// and as control-flow state.
//
// A visitor walks an argument and reports atoms; the hasher, the matcher and
// the collector below are the three visitors, so the fast path (hash, then
// compare against a stored signature) allocates nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag {

class Module;

namespace detail {

enum class AtomKind : uint8_t { Tensor, Int, Float, Bool, String, Variable, Module, Begin, End };
enum class Container : uint8_t { List, Tuple, Map, Struct };

// One element of a flattened trace type.
struct Atom {
  AtomKind kind = AtomKind::End;
  DType dtype = DType::float32;
  Shape shape = {};
  int64_t i = 0;  // Int, Bool, Variable/Module id, Begin: size
  double f = 0;
  std::string s = {};  // String
  Container container = Container::List;
};

inline uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ull + 0x9e37;
}

// Hashes atoms; the hash of a call and of its collected atoms agree.
struct Hasher {
  uint64_t h = 0xcbf29ce484222325ull;
  void tensor(DType d, const Shape& s) { h = mix(mix(h, 1 + uint64_t(d)), s.hash()); }
  void integer(int64_t v) { h = mix(mix(h, 20), uint64_t(v)); }
  void floating(double v) { h = mix(mix(h, 21), std::hash<double>{}(v)); }
  void boolean(bool v) { h = mix(mix(h, 22), v); }
  void string(std::string_view v) { h = mix(mix(h, 23), std::hash<std::string_view>{}(v)); }
  void variable(uint64_t id, DType, const Shape&) { h = mix(mix(h, 24), id); }
  void module(uint64_t id) { h = mix(mix(h, 25), id); }
  void begin(Container c, size_t n) { h = mix(mix(h, 30 + uint64_t(c)), n); }
  void end() { h = mix(h, 40); }
};

// Compares a call against stored atoms, exactly.
struct Matcher {
  explicit Matcher(const std::vector<Atom>& atoms)
      : pos(atoms.data()), last(atoms.data() + atoms.size()) {}
  // A pointer, not an index: on every call's match, no multiplication by
  // sizeof(Atom).
  const Atom* pos;
  const Atom* last;
  bool ok = true;
  const Atom* next(AtomKind k) {
    if (!ok || pos == last || pos->kind != k) {
      ok = false;
      return nullptr;
    }
    return pos++;
  }
  void tensor(DType d, const Shape& s) {
    if (auto* a = next(AtomKind::Tensor)) ok = a->dtype == d && a->shape == s;
  }
  void integer(int64_t v) {
    if (auto* a = next(AtomKind::Int)) ok = a->i == v;
  }
  void floating(double v) {
    if (auto* a = next(AtomKind::Float)) ok = a->f == v;
  }
  void boolean(bool v) {
    if (auto* a = next(AtomKind::Bool)) ok = a->i == int64_t(v);
  }
  void string(std::string_view v) {
    if (auto* a = next(AtomKind::String)) ok = a->s == v;
  }
  void variable(uint64_t id, DType, const Shape&) {
    if (auto* a = next(AtomKind::Variable)) ok = uint64_t(a->i) == id;
  }
  void module(uint64_t id) {
    if (auto* a = next(AtomKind::Module)) ok = uint64_t(a->i) == id;
  }
  void begin(Container c, size_t n) {
    if (auto* a = next(AtomKind::Begin)) ok = a->container == c && size_t(a->i) == n;
  }
  void end() { next(AtomKind::End); }
  bool matched() const { return ok && pos == last; }
};

// Records the atoms of a call (the slow path).
struct Collector {
  std::vector<Atom>& atoms;
  void tensor(DType d, const Shape& s) { atoms.push_back({AtomKind::Tensor, d, s}); }
  void integer(int64_t v) { atoms.push_back({AtomKind::Int, {}, {}, v}); }
  void floating(double v) { atoms.push_back({AtomKind::Float, {}, {}, 0, v}); }
  void boolean(bool v) { atoms.push_back({AtomKind::Bool, {}, {}, v}); }
  void string(std::string_view v) {
    atoms.push_back({AtomKind::String, {}, {}, 0, 0, std::string(v)});
  }
  void variable(uint64_t id, DType d, const Shape& s) {
    atoms.push_back({AtomKind::Variable, d, s, int64_t(id)});
  }
  void module(uint64_t id) { atoms.push_back({AtomKind::Module, {}, {}, int64_t(id)}); }
  void begin(Container c, size_t n) {
    atoms.push_back({AtomKind::Begin, {}, {}, int64_t(n), 0, {}, c});
  }
  void end() { atoms.push_back({AtomKind::End}); }
};

template <class T>
inline constexpr bool kAlwaysFalse = false;

template <class T>
concept HasFields = requires(T& v) { ag_fields(v); };
template <class T>
concept HasTraceType = requires(const T& v) { ag_trace_type(v); };
template <class T>
concept IsModule = std::is_base_of_v<Module, T>;

template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T>
struct IsArray : std::false_type {};
template <class T, size_t N>
struct IsArray<std::array<T, N>> : std::true_type {};
template <class T>
struct IsTupleLike : std::false_type {};
template <class... T>
struct IsTupleLike<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct IsTupleLike<std::pair<A, B>> : std::true_type {};
template <class T>
struct IsMap : std::false_type {};
template <class K, class V, class C, class A>
struct IsMap<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A>
struct IsMap<std::unordered_map<K, V, H, E, A>> : std::true_type {};

uint64_t module_id(const Module& m);
[[noreturn]] void throw_undefined_argument();

template <class V, class T>
void visit_trace_type(V& v, const T& arg);

template <class V, class K>
void visit_map_key(V& v, const K& key) {
  visit_trace_type(v, key);
}

template <class V, class T>
void visit_trace_type(V& v, const T& arg) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    if (!arg.defined()) throw_undefined_argument();  // inline: on every call's match
    v.tensor(arg.dtype(), arg.shape());
  } else if constexpr (std::is_same_v<U, TensorSpec>) {
    v.tensor(arg.dtype, arg.shape);
  } else if constexpr (std::is_same_v<U, Variable>) {
    v.variable(arg.id(), arg.dtype(), arg.shape());
  } else if constexpr (std::is_same_v<U, bool>) {
    v.boolean(arg);
  } else if constexpr (std::is_integral_v<U> || std::is_enum_v<U>) {
    v.integer(int64_t(arg));
  } else if constexpr (std::is_floating_point_v<U>) {
    v.floating(double(arg));
  } else if constexpr (std::is_convertible_v<const U&, std::string_view>) {
    v.string(std::string_view(arg));
  } else if constexpr (std::is_pointer_v<U> &&
                       IsModule<std::remove_cv_t<std::remove_pointer_t<U>>>) {
    v.module(module_id(*arg));
  } else if constexpr (IsModule<U>) {
    v.module(module_id(arg));
  } else if constexpr (IsVector<U>::value || IsArray<U>::value) {
    v.begin(Container::List, arg.size());
    for (const auto& e : arg) visit_trace_type(v, e);
    v.end();
  } else if constexpr (IsTupleLike<U>::value) {
    v.begin(Container::Tuple, std::tuple_size_v<U>);
    std::apply([&](const auto&... e) { (visit_trace_type(v, e), ...); }, arg);
    v.end();
  } else if constexpr (IsMap<U>::value) {
    // Order-independent: visit in key order.
    v.begin(Container::Map, arg.size());
    if constexpr (std::is_same_v<U, std::map<typename U::key_type, typename U::mapped_type>>) {
      for (const auto& [k, e] : arg) {
        visit_map_key(v, k);
        visit_trace_type(v, e);
      }
    } else {
      std::vector<const typename U::value_type*> entries;
      for (const auto& kv : arg) entries.push_back(&kv);
      std::sort(entries.begin(), entries.end(),
                [](auto* a, auto* b) { return a->first < b->first; });
      for (auto* kv : entries) {
        visit_map_key(v, kv->first);
        visit_trace_type(v, kv->second);
      }
    }
    v.end();
  } else if constexpr (HasFields<U>) {
    auto fields = ag_fields(const_cast<U&>(arg));
    v.begin(Container::Struct, std::tuple_size_v<decltype(fields)>);
    std::apply([&](const auto&... e) { (visit_trace_type(v, e), ...); }, fields);
    v.end();
  } else if constexpr (HasTraceType<U>) {
    visit_trace_type(v, ag_trace_type(arg));
  } else {
    static_assert(
        kAlwaysFalse<U>,
        "ag::function: this argument type has no trace type. Pass ag::Tensor, ag::Variable, "
        "scalars, strings, std containers of them, or a pointer/reference to an ag::Module; or "
        "give "
        "the type a trace type with `auto ag_trace_type(const T&)` (a value that identifies it) or "
        "`auto ag_fields(T&)` (returning std::tie of its fields), found by ADL.");
  }
}

// ---- Structures of tensors --------------------------------------------------
// Arguments, results and control-flow state share one notion of structure:
// Tensor leaves inside std containers and ag_fields structs.

// Calls f(Tensor&) on every tensor leaf of `value`, in order.
template <class T, class F>
void for_each_tensor(T& value, F&& f) {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    f(value);
  } else if constexpr (IsVector<U>::value || IsArray<U>::value) {
    for (auto& e : value) for_each_tensor(e, f);
  } else if constexpr (IsTupleLike<U>::value) {
    std::apply([&](auto&... e) { (for_each_tensor(e, f), ...); }, value);
  } else if constexpr (IsMap<U>::value) {
    if constexpr (std::is_same_v<U, std::map<typename U::key_type, typename U::mapped_type>>) {
      for (auto& kv : value) for_each_tensor(kv.second, f);
    } else {
      std::vector<typename U::value_type*> entries;
      for (auto& kv : value) entries.push_back(&kv);
      std::sort(entries.begin(), entries.end(),
                [](auto* a, auto* b) { return a->first < b->first; });
      for (auto* kv : entries) for_each_tensor(kv->second, f);
    }
  } else if constexpr (HasFields<U>) {
    auto fields = ag_fields(value);
    std::apply([&](auto&... e) { (for_each_tensor(e, f), ...); }, fields);
  }
}

}  // namespace detail
}  // namespace ag
