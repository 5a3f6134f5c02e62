// The representation behind ag::Tensor. Internal to the runtime.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ag/tensor.h"

namespace ag::trace {
struct TraceState;
}

namespace ag::detail {

inline constexpr size_t kAlignment = 64;

// A 64-byte-aligned block of element data. Up to kInlineBytes (scalars,
// loop counters, small vectors) it lies inside the Storage itself, at the
// 64-byte boundary within `inline_area`: that saves a result tensor an
// aligned_alloc and its free (about 800 instructions, most of a cache hit's
// cost: docs/benchmarks.md), while the Storage needs only malloc's
// alignment.
struct Storage {
  static constexpr size_t kInlineBytes = 64;
  explicit Storage(size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data = nullptr;
  size_t bytes = 0;

 private:
  alignas(16) std::byte inline_area[kInlineBytes + kAlignment - 16];
};

struct TensorImpl {
  DType dtype = DType::float32;
  Shape shape;
  // Eager tensors: the data.
  std::shared_ptr<Storage> storage;
  // Symbolic tensors: output `output` of node `node` in the graph that
  // `trace` is building.
  std::shared_ptr<trace::TraceState> trace;
  int32_t node = -1;
  int32_t output = 0;
  // An eager tensor an op made: where the user's code called the op, so that
  // an error about the value (a condition that is not a scalar) names the
  // line that computed it, as a symbolic tensor's node does.
  CallSite site = {};
};

// A fresh eager tensor with uninitialised storage.
Tensor make_eager(DType dtype, const Shape& shape);
// An eager tensor's bytes under another shape of as many elements, sharing
// its storage (copy on write keeps both values apart).
Tensor with_shape(const Tensor& eager, const Shape& shape);
// A symbolic tensor naming a node output.
Tensor make_symbolic(std::shared_ptr<trace::TraceState> trace, int32_t node, int32_t output,
                     DType dtype, const Shape& shape);

// A symbolic tensor's node and trace belong to the trace layer, which sits
// above core (layers: runtime/CMakeLists.txt). It installs these hooks when
// its first trace starts, before any symbolic tensor can exist.
struct SymbolicTensorHooks {
  // "add:0"
  std::string (*name)(const TensorImpl& impl);
  // Throws the error for reading the value of a symbolic tensor; `what` says
  // how it was read ("converted to bool", "item()").
  void (*throw_value_access)(const TensorImpl& impl, std::string_view what);
};
void install_symbolic_tensor_hooks(const SymbolicTensorHooks& hooks);
// What the installed hooks say about a symbolic tensor.
std::string symbolic_name(const TensorImpl& impl);
[[noreturn]] void throw_value_access(const TensorImpl& impl, std::string_view what);

// The error for a condition that is not a scalar (`if (t)`, `t1 && t2`,
// `while (t)` on a tensor of another shape): eager operator bool and staged
// conditions (ag::if_stmt, ag::and_, ...) share it, so both builds say the
// same. `defined_at` is where the condition was computed, when known.
[[noreturn]] void throw_non_scalar_condition(const Shape& shape, CallSite defined_at);
// " (the condition is defined at FILE:LINE)", or empty for an unknown site.
std::string condition_defined_at(CallSite site);

}  // namespace ag::detail
