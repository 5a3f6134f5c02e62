#include "ag/tensor.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ostream>

#include "core/block_cache.h"
#include "core/nested_list.h"
#include "core/object_pool.h"
#include "core/tensor_impl.h"

namespace ag {
namespace detail {

Storage::Storage(size_t n) : bytes(n) {
  if (n <= kInlineBytes) {
    auto at = reinterpret_cast<uintptr_t>(inline_area);
    data = inline_area + ((kAlignment - at % kAlignment) % kAlignment);
    return;
  }
  data = allocate_block(n);
}

Storage::~Storage() {
  if (bytes > kInlineBytes) free_block(data, bytes);
}

Tensor make_eager(DType dtype, const Shape& shape) {
  if (!shape.is_fully_defined()) {
    throw InternalError("eager tensor with a partially known shape " + shape.to_string());
  }
  // Both from the pool: a function's result per call, a loop's values.
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->dtype = dtype;
  impl->shape = shape;
  impl->storage = std::allocate_shared<Storage>(PoolAllocator<Storage>(),
                                                size_t(shape.num_elements()) * dtype_size(dtype));
  // Null handles: empty strings, so that no string element is ever garbage.
  if (dtype == DType::string) std::memset(impl->storage->data, 0, impl->storage->bytes);
  return Tensor(std::move(impl));
}

Tensor with_shape(const Tensor& eager, const Shape& shape) {
  if (eager.impl()->trace || shape.num_elements() != eager.num_elements()) {
    throw InternalError("with_shape: " + eager.spec().to_string() + " as " + shape.to_string());
  }
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>(), *eager.impl());
  impl->shape = shape;
  return Tensor(std::move(impl));
}

Tensor make_symbolic(std::shared_ptr<trace::TraceState> trace, int32_t node, int32_t output,
                     DType dtype, const Shape& shape) {
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->trace = std::move(trace);
  impl->node = node;
  impl->output = output;
  return Tensor(std::move(impl));
}

namespace {
SymbolicTensorHooks g_symbolic_hooks{};
}  // namespace

void install_symbolic_tensor_hooks(const SymbolicTensorHooks& hooks) {
  g_symbolic_hooks = hooks;
}

std::string symbolic_name(const TensorImpl& impl) {
  if (!g_symbolic_hooks.name) throw InternalError("a symbolic tensor before any trace");
  return g_symbolic_hooks.name(impl);
}

void throw_value_access(const TensorImpl& impl, std::string_view what) {
  if (g_symbolic_hooks.throw_value_access) g_symbolic_hooks.throw_value_access(impl, what);
  throw InternalError("a symbolic tensor before any trace");
}

std::string condition_defined_at(CallSite site) {
  if (site.line() == 0) return "";
  return " (the condition is defined at " + std::string(site.file_name()) + ":" +
         std::to_string(site.line()) + ")";
}

void throw_non_scalar_condition(const Shape& shape, CallSite defined_at) {
  std::string what = "a tensor of shape " + shape.to_string();
  if (shape.is_fully_defined() && shape.num_elements() != 1)
    what +=
        " (" + std::to_string(shape.num_elements()) + " elements), whose truth value is ambiguous";
  throw InvalidArgumentError(
      "a condition must be a scalar bool, but this one is " + what +
      "; reduce it first with ag::reduce_all or ag::reduce_any, or use ag::logical_and / "
      "ag::logical_or for elementwise results" +
      condition_defined_at(defined_at));
}

}  // namespace detail

namespace {

[[noreturn]] void throw_undefined(std::string_view what) {
  throw FailedPreconditionError(std::string(what) +
                                " of an undefined ag::Tensor (declared without a value)");
}

// Writes `value` (given as double and int64) into element `index` of `data`.
void store_element(void* data, DType dtype, int64_t index, double f, int64_t i, bool exact_int) {
  visit_storage_dtype(dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      static_cast<T*>(data)[index] = exact_int ? T(i) : T(f);
    } else {
      static_cast<T*>(data)[index] = T(f);
    }
  });
}

}  // namespace

std::shared_ptr<detail::TensorImpl> Tensor::scalar_impl(double f, int64_t i, DType dtype) {
  Tensor t = detail::make_eager(dtype, Shape{});
  store_element(t.impl_->storage->data, dtype, 0, f, i, true);
  return t.impl_;
}

DType Tensor::dtype() const {
  if (!impl_) throw_undefined("dtype()");
  return impl_->dtype;
}

const Shape& Tensor::shape() const {
  if (!impl_) throw_undefined("shape()");
  return impl_->shape;
}

bool Tensor::is_symbolic() const {
  return impl_ && impl_->trace != nullptr;
}

void Tensor::check_access(DType requested) const {
  if (!impl_) throw_undefined("data access");
  if (impl_->trace) detail::throw_value_access(*impl_, "data()");
  if (requested != impl_->dtype) {
    throw TypeError("data<" + std::string(dtype_name(requested)) + ">() on a tensor of dtype " +
                    std::string(dtype_name(impl_->dtype)));
  }
}

const void* Tensor::raw_data() const {
  if (!impl_) throw_undefined("data access");
  if (impl_->trace) detail::throw_value_access(*impl_, "data()");
  return impl_->storage->data;
}

void* Tensor::raw_mutable_data() {
  if (!impl_) throw_undefined("data access");
  if (impl_->trace) detail::throw_value_access(*impl_, "mutable_data()");
  // Copy on write: neither the handle nor the bytes may be shared.
  if (impl_.use_count() > 1 || impl_->storage.use_count() > 1) {
    auto copy = std::make_shared<detail::TensorImpl>(*impl_);
    copy->storage = std::make_shared<detail::Storage>(impl_->storage->bytes);
    std::memcpy(copy->storage->data, impl_->storage->data, impl_->storage->bytes);
    impl_ = std::move(copy);
  }
  return impl_->storage->data;
}

template <class T>
T Tensor::item_as() const {
  if (!impl_) throw_undefined("item()");
  if (impl_->trace) detail::throw_value_access(*impl_, "item()");
  if (impl_->shape.num_elements() != 1) {
    throw InvalidArgumentError("item() needs a tensor with exactly one element, got shape " +
                               impl_->shape.to_string());
  }
  return visit_storage_dtype(
      impl_->dtype, [&](auto v) { return T(static_cast<const decltype(v)*>(raw_data())[0]); });
}

template <class T>
std::vector<T> Tensor::to_vector_as() const {
  const void* p = raw_data();
  int64_t n = num_elements();
  std::vector<T> out(size_t(n), T{});
  visit_storage_dtype(impl_->dtype, [&](auto v) {
    auto* src = static_cast<const decltype(v)*>(p);
    // int8 elements are numbers, not characters.
    for (int64_t i = 0; i < n; ++i)
      out[size_t(i)] = T(src[i]);  // NOLINT(bugprone-signed-char-misuse)
  });
  return out;
}

Tensor::operator bool() const {
  if (!impl_) throw_undefined("conversion to bool");
  if (impl_->trace) detail::throw_value_access(*impl_, "converted to bool");
  if (impl_->shape.num_elements() != 1)
    detail::throw_non_scalar_condition(impl_->shape, impl_->site);
  return item<bool>();
}

Tensor::Iterator Tensor::begin() const {
  if (is_symbolic()) detail::throw_value_access(*impl_, "iterated over with a C++ for loop");
  return Iterator(this, 0);
}

Tensor::Iterator Tensor::end() const {
  if (rank() == 0) throw InvalidArgumentError("cannot iterate over a scalar tensor");
  return Iterator(this, shape()[0]);
}

// ---- TensorSpec ------------------------------------------------------------

std::string TensorSpec::to_string() const {
  return "TensorSpec(shape=" + shape.to_string() + ", dtype=" + std::string(dtype_name(dtype)) +
         (name.empty() ? "" : ", name='" + name + "'") + ")";
}

bool TensorSpec::is_compatible_with(const TensorSpec& other) const {
  return dtype == other.dtype && shape.is_compatible_with(other.shape);
}

std::ostream& operator<<(std::ostream& os, const TensorSpec& s) {
  return os << s.to_string();
}
std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << s.to_string();
}
std::ostream& operator<<(std::ostream& os, DType d) {
  return os << dtype_name(d);
}
std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << t.to_string();
}

// ---- Creation ---------------------------------------------------------------

void NestedValues::flatten(Shape& shape, std::vector<Leaf>& leaves) const {
  shape = Shape{};
  leaves.clear();
  // Discover the shape along the first path, then check every path matches.
  const NestedValues* node = this;
  while (!node->is_leaf_) {
    shape.push_back(int64_t(node->children_.size()));
    if (node->children_.empty()) break;
    node = &node->children_.front();
  }
  flatten_at(0, shape, leaves);
}

void detail::check_nested_node(int depth, const Shape& shape, bool is_leaf, size_t children,
                               std::string_view leaf) {
  if (is_leaf) {
    if (depth != shape.rank()) {
      throw InvalidArgumentError("ragged nested list: " + std::string(leaf) + " at depth " +
                                 std::to_string(depth) + " where shape " + shape.to_string() +
                                 " expects a list");
    }
    return;
  }
  if (depth >= shape.rank() || int64_t(children) != shape[depth]) {
    throw InvalidArgumentError(
        "ragged nested list: expected " +
        (depth < shape.rank() ? std::to_string(shape[depth]) + " elements" : std::string(leaf)) +
        " at depth " + std::to_string(depth) + ", got a list of " + std::to_string(children));
  }
}

void NestedValues::flatten_at(int depth, Shape& shape, std::vector<Leaf>& leaves) const {
  detail::check_nested_node(depth, shape, is_leaf_, children_.size(), "a value");
  if (is_leaf_) {
    leaves.push_back(leaf_);
    return;
  }
  for (const auto& c : children_) c.flatten_at(depth + 1, shape, leaves);
}

namespace api {
namespace {
Tensor from_leaves(const Shape& shape, const std::vector<NestedValues::Leaf>& leaves, DType dtype) {
  Tensor t = detail::make_eager(dtype, shape);
  void* data = t.raw_mutable_data();
  for (size_t i = 0; i < leaves.size(); ++i) {
    store_element(data, dtype, int64_t(i), leaves[i].f, leaves[i].i,
                  leaves[i].kind != ScalarKind::floating);
  }
  return t;
}
}  // namespace

Tensor constant(const NestedValues& values) {
  Shape shape;
  std::vector<NestedValues::Leaf> leaves;
  values.flatten(shape, leaves);
  ScalarKind kind = ScalarKind::boolean;
  bool fits_int32 = true;
  for (const auto& l : leaves) {
    if (int(l.kind) > int(kind)) kind = l.kind;
    fits_int32 &= l.i >= INT32_MIN && l.i <= INT32_MAX;
  }
  // As TensorFlow does for Python ints: int32 unless a value needs int64.
  DType dtype = kind == ScalarKind::floating  ? DType::float32
                : kind == ScalarKind::integer ? (fits_int32 ? DType::int32 : DType::int64)
                                              : DType::bool_;
  if (leaves.empty()) dtype = DType::float32;
  return from_leaves(shape, leaves, dtype);
}

Tensor constant(const NestedValues& values, DType dtype) {
  Shape shape;
  std::vector<NestedValues::Leaf> leaves;
  values.flatten(shape, leaves);
  return from_leaves(shape, leaves, dtype);
}

}  // namespace api

template <class T>
Tensor detail::constant_of(const std::vector<T>& values, Shape shape) {
  if (shape.num_elements() != int64_t(values.size())) {
    throw InvalidArgumentError("constant: " + std::to_string(values.size()) +
                               " values do not fill shape " + shape.to_string());
  }
  constexpr DType dtype = Tensor::scalar_dtype<T>();
  Tensor t = detail::make_eager(dtype, shape);
  void* data = t.raw_mutable_data();
  for (size_t i = 0; i < values.size(); ++i) {
    store_element(data, dtype, int64_t(i), double(values[i]), int64_t(values[i]),
                  !std::is_floating_point_v<T>);
  }
  return t;
}

// Every arithmetic type, so that each T the inline callers accept links.
#define AG_INSTANTIATE(T)                                  \
  template T Tensor::item_as<T>() const;                   \
  template std::vector<T> Tensor::to_vector_as<T>() const; \
  template Tensor detail::constant_of(const std::vector<T>&, Shape)
AG_INSTANTIATE(bool);
AG_INSTANTIATE(char);
AG_INSTANTIATE(signed char);
AG_INSTANTIATE(unsigned char);
AG_INSTANTIATE(wchar_t);
AG_INSTANTIATE(char8_t);
AG_INSTANTIATE(char16_t);
AG_INSTANTIATE(char32_t);
AG_INSTANTIATE(short);
AG_INSTANTIATE(unsigned short);
AG_INSTANTIATE(int);
AG_INSTANTIATE(unsigned);
AG_INSTANTIATE(long);
AG_INSTANTIATE(unsigned long);
AG_INSTANTIATE(long long);
AG_INSTANTIATE(unsigned long long);
AG_INSTANTIATE(float);
AG_INSTANTIATE(double);
AG_INSTANTIATE(long double);
#undef AG_INSTANTIATE

namespace api {

Tensor empty(Shape shape, DType dtype) {
  return detail::make_eager(dtype, shape);
}

Tensor fill(Shape shape, double value, DType dtype) {
  Tensor t = detail::make_eager(dtype, shape);
  if (dtype == DType::string) {  // made empty, as tf.zeros makes strings
    if (value == 0) return t;
    throw InvalidArgumentError(
        "fill: a string tensor can be filled with empty strings only "
        "(ag::zeros); make other strings with ag::constant");
  }
  void* data = t.raw_mutable_data();
  visit_storage_dtype(dtype, [&](auto v) {
    using T = decltype(v);
    std::fill_n(static_cast<T*>(data), shape.num_elements(), T(value));
  });
  return t;
}

Tensor zeros(Shape shape, DType dtype) {
  return fill(shape, 0.0, dtype);
}
Tensor ones(Shape shape, DType dtype) {
  return fill(shape, 1.0, dtype);
}
Tensor eye(int64_t rows, int64_t cols, DType dtype) {
  Tensor t = zeros(Shape{rows, cols}, dtype);
  void* data = t.raw_mutable_data();
  for (int64_t i = 0; i < std::min(rows, cols); ++i)
    store_element(data, dtype, i * cols + i, 1, 1, true);
  return t;
}

Tensor eye(int64_t n, DType dtype) {
  return eye(n, n, dtype);
}

}  // namespace api
}  // namespace ag
