// The op registry: the one description of every op (runtime/ops/ops.def) that
// eager dispatch, tracing, constant folding and the graph executor share.
// Internal to the runtime.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ag/dtype.h"
#include "ag/shape.h"

namespace ag::ops {

enum class OpId : uint16_t {
#define AG_OP(id, name, arity, infer, kernel, flags) id,
#include "ops/ops.def"
#undef AG_OP
  kCount
};

// Op attributes. Which fields an op reads is listed in ops.def.
struct Attrs {
  std::vector<int64_t> ints;
  int64_t axis = 0;
  bool keepdims = false;
  DType dtype = DType::float32;
  double lo = 0.0;
  double hi = 1.0;
  uint64_t seed = 0;

  bool operator==(const Attrs&) const = default;
  size_t hash() const;
};

// The type of one value: what an infer function computes.
struct ValueType {
  DType dtype = DType::float32;
  Shape shape;
};

struct InferContext {
  std::string_view op_name;
  std::span<const ValueType> inputs;
  const Attrs& attrs;
  // The inputs' data where known (eager, executor), null while tracing. Only
  // ops whose output shape depends on input values (range) read it.
  std::span<const void* const> values;
};

// Random state of one stateful random op: a counter-based generator.
struct RandomState {
  uint64_t key = 0;
  uint64_t counter = 0;
};

struct KernelInput {
  const void* data;
  const Shape* shape;
  DType dtype;
};

struct KernelContext {
  std::string_view op_name;
  std::span<const KernelInput> inputs;
  void* out;
  const Shape* out_shape;
  DType out_dtype;
  const Attrs* attrs;
  RandomState* rng;  // stateful random ops only
};

using InferFn = ValueType (*)(const InferContext&);
using KernelFn = void (*)(const KernelContext&);

enum OpFlags : uint32_t {
  kNone = 0,
  kElementwise = 1u << 0,  // one output element per broadcast input element
  kStateful = 1u << 1,     // must run on every call, in program order
  kInPlace = 1u << 2,      // the output may reuse input 0's memory when input 0 dies there
};

struct OpDef {
  OpId id;
  std::string_view name;
  int arity;  // -1: variadic
  InferFn infer;
  KernelFn kernel;
  uint32_t flags;
};

const OpDef& op_def(OpId id);

}  // namespace ag::ops
