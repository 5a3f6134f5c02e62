// ag::Tensor: a value-semantics handle to an n-dimensional array.
//
// Outside tracing a tensor holds data: reference-counted, 64-byte-aligned
// storage that copies share until one of them is written through
// `mutable_data()` (copy on write), so a copy never aliases a later write.
// While a function is being traced, tensors are symbolic: each one names an
// output of a node in the graph under construction and has no data.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "ag/dtype.h"
#include "ag/error.h"
#include "ag/shape.h"

namespace ag {

// Namespace ag holds the types (Tensor, Variable, TensorArray, ...) and the
// operators; every named function that takes or makes tensors (the ops,
// creation, control flow, effects) is declared in ag::api, which the
// using-directive below brings into ag. Qualified `ag::add` follows the
// using-directive, but argument-dependent lookup ignores using-directives
// ([basic.lookup.argdep]): ADL on an ag::Tensor finds `+` and `==`, never
// ag::add or ag::square, so a user's own `add(ag::Tensor, ag::Tensor)` is
// not ambiguous with ours. An inline namespace would not do: ADL looks into
// inline namespaces.
namespace api {}
using namespace api;

// Where the user's code called an op. Every op function takes one as its
// last parameter, defaulted to the caller's location (free at run time: a
// pointer to static data); a traced node keeps it, and an error of the
// running graph says where the op was defined. After agc, `#line` makes it
// the user's original file and line.
using CallSite = std::source_location;

// The type of a tensor: dtype and shape, the shape possibly with unknown dims.
struct TensorSpec {
  TensorSpec() = default;
  TensorSpec(Shape shape, DType dtype, std::string name = {})
      : shape(shape), dtype(dtype), name(std::move(name)) {}
  Shape shape;
  DType dtype = DType::float32;
  std::string name;

  // "TensorSpec(shape=(None,), dtype=int32)"
  std::string to_string() const;
  bool is_compatible_with(const TensorSpec& other) const;
  friend bool operator==(const TensorSpec& a, const TensorSpec& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
};

namespace detail {
struct TensorImpl;
struct Storage;
}  // namespace detail

template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;

class Operand;

// The index of `x[i]` with its call site (an operator cannot have a
// defaulted CallSite parameter; the implicit conversion to its parameter
// type can).
struct Index {
  template <Arithmetic I>
  Index(I i, CallSite site = CallSite::current()) : value(int64_t(i)), site(site) {}
  int64_t value;
  CallSite site;
};

class Tensor {
 public:
  // An undefined tensor: the value of a local declared without initializer.
  Tensor() = default;
  // Scalars convert implicitly, so `ag::Tensor i = 0;` works. The dtype is
  // what ag::constant gives: bool -> bool, integers of up to 32 bits -> int32,
  // 64-bit integers -> int64, float and double -> float32 (TensorFlow's rule
  // for Python floats; ask ag::constant(v, ag::float64) for float64).
  template <Arithmetic T>
  Tensor(T v) : Tensor(scalar_impl(double(v), int64_t(v), scalar_dtype<T>())) {}
  template <Arithmetic T>
  static constexpr DType scalar_dtype() {
    if constexpr (std::is_same_v<T, bool>)
      return DType::bool_;
    else if constexpr (std::is_floating_point_v<T>)
      return DType::float32;
    else if constexpr (sizeof(T) <= 4)
      return DType::int32;
    else
      return DType::int64;
  }

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  int rank() const { return shape().rank(); }
  int64_t num_elements() const { return shape().num_elements(); }
  // True while this tensor names a node of a graph being traced.
  bool is_symbolic() const;

  // The single element of a scalar (or size-1) tensor, cast to T.
  template <Arithmetic T>
  T item() const {
    return item_as<T>();
  }
  // The elements, cast to T, in row-major order.
  template <Arithmetic T>
  std::vector<T> to_vector() const {
    return to_vector_as<T>();
  }
  // Raw element access; T must be the tensor's own type.
  template <Arithmetic T>
  const T* data() const {
    check_access(dtype_v<T>);
    return static_cast<const T*>(raw_data());
  }
  // Copies the storage first when another tensor shares it.
  template <Arithmetic T>
  T* mutable_data() {
    check_access(dtype_v<T>);
    return static_cast<T*>(raw_mutable_data());
  }
  const void* raw_data() const;
  void* raw_mutable_data();

  // `if (t)` on an eager scalar tests its value. On a symbolic tensor it is an
  // error: the condition must be staged (run agc, or use ag::cond).
  explicit operator bool() const;

  // First-axis indexing, `x[i]`.
  Tensor operator[](Index index) const;
  Tensor operator[](Operand index) const;

  // Iteration over the first axis (eager tensors only).
  class Iterator;
  Iterator begin() const;
  Iterator end() const;

  // "ag::Tensor([1 2 3], shape=(3,), dtype=int32)"
  std::string to_string() const;
  // Just the values, as tf.print shows them: "[1 2 3]".
  std::string values_string(int64_t edge_items = -1) const;
  TensorSpec spec() const { return {shape(), dtype()}; }

  // Identity of the underlying value (shared by copies). Used by tracing to
  // recognise a captured tensor.
  const void* id() const { return impl_.get(); }

  // For the runtime's internals.
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}
  static std::shared_ptr<detail::TensorImpl> scalar_impl(double f, int64_t i, DType dtype);
  const std::shared_ptr<detail::TensorImpl>& impl() const { return impl_; }

 private:
  // The runtime defines these for every arithmetic type. They are declared
  // without the Arithmetic constraint of their inline callers because Clang 17
  // and later write a template's constraints into its symbol name and g++ 12
  // does not: a program compiled by one must link with a runtime built by the
  // other.
  template <class T>
  T item_as() const;
  template <class T>
  std::vector<T> to_vector_as() const;
  void check_access(DType requested) const;
  std::shared_ptr<detail::TensorImpl> impl_;
};

class Tensor::Iterator {
 public:
  Iterator(const Tensor* t, int64_t i) : t_(t), i_(i) {}
  Tensor operator*() const { return (*t_)[i_]; }
  Iterator& operator++() {
    ++i_;
    return *this;
  }
  bool operator!=(const Iterator& o) const { return i_ != o.i_; }
  bool operator==(const Iterator& o) const { return i_ == o.i_; }

 private:
  const Tensor* t_;
  int64_t i_;
};

// A tensor operand of an operator, with the call site of the expression (see
// Index). Anything convertible to Tensor but a C++ number (an ag::Variable)
// converts to it in one step, since two user conversions do not chain;
// numbers take the operators' scalar overloads.
class Operand {
 public:
  Operand(const Tensor& t, CallSite site = CallSite::current()) : tensor_(&t), site_(site) {}
  template <class T>
    requires(!std::is_same_v<T, Tensor> && !Arithmetic<T> &&
             std::is_convertible_v<const T&, Tensor>)
  Operand(const T& v, CallSite site = CallSite::current())
      : held_(v), tensor_(&held_), site_(site) {}
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  const Tensor& tensor() const { return *tensor_; }
  CallSite site() const { return site_; }

 private:
  Tensor held_;
  const Tensor* tensor_;
  CallSite site_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::ostream& operator<<(std::ostream& os, const TensorSpec& s);
std::ostream& operator<<(std::ostream& os, const Shape& s);
std::ostream& operator<<(std::ostream& os, DType d);

// ---- Creation -------------------------------------------------------------

// A nested initializer list of values, any depth up to Shape::kMaxRank.
class NestedValues {
 public:
  struct Leaf {
    double f;
    int64_t i;
    ScalarKind kind;
  };
  NestedValues(double v) : leaf_{v, int64_t(v), ScalarKind::floating}, is_leaf_(true) {}
  NestedValues(float v) : leaf_{v, int64_t(v), ScalarKind::floating}, is_leaf_(true) {}
  NestedValues(int v) : leaf_{double(v), v, ScalarKind::integer}, is_leaf_(true) {}
  NestedValues(long v) : leaf_{double(v), v, ScalarKind::integer}, is_leaf_(true) {}
  NestedValues(long long v) : leaf_{double(v), v, ScalarKind::integer}, is_leaf_(true) {}
  // Exactly bool: a string literal, which converts to bool, is not a value
  // here but one of ag/strings.h's NestedStrings.
  template <std::same_as<bool> B>
  NestedValues(B v) : leaf_{double(v), v, ScalarKind::boolean}, is_leaf_(true) {}
  NestedValues(std::initializer_list<NestedValues> list) : children_(list) {}
  // The shape and the leaves in row-major order; throws on ragged nesting.
  void flatten(Shape& shape, std::vector<Leaf>& leaves) const;

 private:
  void flatten_at(int depth, Shape& shape, std::vector<Leaf>& leaves) const;
  Leaf leaf_{0, 0, ScalarKind::boolean};
  bool is_leaf_ = false;
  std::vector<NestedValues> children_;
};

namespace detail {
// For every arithmetic type; unconstrained for the reason of Tensor::item_as.
template <class T>
Tensor constant_of(const std::vector<T>& values, Shape shape);
}  // namespace detail

namespace api {

// The dtype is inferred (ints -> int32, floats -> float32, bools -> bool)
// unless given.
Tensor constant(const NestedValues& values);
Tensor constant(const NestedValues& values, DType dtype);
template <Arithmetic T>
Tensor constant(const std::vector<T>& values, Shape shape) {
  return detail::constant_of(values, std::move(shape));
}
Tensor zeros(Shape shape, DType dtype = DType::float32);
Tensor ones(Shape shape, DType dtype = DType::float32);
Tensor zeros_like(const Tensor& t, CallSite site = CallSite::current());
Tensor ones_like(const Tensor& t, CallSite site = CallSite::current());
Tensor fill(Shape shape, double value, DType dtype = DType::float32);
Tensor eye(int64_t n, DType dtype = DType::float32);
Tensor eye(int64_t rows, int64_t cols, DType dtype);
// An uninitialised tensor; the runtime fills it.
Tensor empty(Shape shape, DType dtype);

}  // namespace api
}  // namespace ag
