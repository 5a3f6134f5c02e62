// The op registry: the one description of every op (include/ag/ops.def) that
// eager dispatch, tracing, constant folding and the graph executor share.
// Internal to the runtime.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ag/dtype.h"
#include "ag/shape.h"
#include "ag/tensor.h"

namespace ag::ops {

enum class OpId : uint16_t {
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx) id,
#include "ag/ops.def"
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
  // Contiguous unless `run` > 0: then runs of `run` elements each start
  // `stride` elements after the one before (a slice x[:, i, :] read where it
  // is, or a loop variable kept in a row of a TensorArray:
  // exec/plan_views.cpp). Only the binary kernels of AG_ELEMENTWISE_OP ops
  // (either input, of the output's shape, one run length) and
  // tensor_array_write (its value) get such inputs.
  int64_t run = 0;
  int64_t stride = 0;
};

struct KernelContext {
  std::string_view op_name;
  std::span<const KernelInput> inputs;
  void* out;
  const Shape* out_shape;
  DType out_dtype;
  const Attrs* attrs;
  RandomState* rng;  // stateful random ops only
  // Input i's data, as T.
  template <class T>
  const T* input_data(size_t i) const {
    return static_cast<const T*>(inputs[i].data);
  }

  // A binary elementwise kernel with a strided input may get a strided
  // output too: its runs (of the inputs' run length) `out_stride` elements
  // apart, a row of a TensorArray (exec/plan_views.cpp); 0: contiguous.
  int64_t out_stride = 0;
  // What the op's prepare function (PrepareFn) made for this plan step, or
  // null: eager calls, and steps it had nothing to prepare for.
  const void* prepared = nullptr;
};

// Work an op's kernel can do once per plan step instead of on every call:
// exec/plan_compile.cpp calls the op's prepare function for a step whose
// input types are all static. constants[i] is input i's data where the plan
// holds it as a constant (an initializer of a loaded model, a folded
// value), else null. What it returns (null: nothing) belongs to the step
// and reaches each call as KernelContext::prepared, from any thread at once.
// So far the convolution's: oneDNN's primitive, and a constant filter
// reordered to the primitive's layout once.
struct PrepareContext {
  std::string_view op_name;
  std::span<const ValueType> inputs;
  const Attrs& attrs;
  std::span<const void* const> constants;
};
using PreparedKernel = std::shared_ptr<const void>;
using PrepareFn = PreparedKernel (*)(const PrepareContext&);
// The op's prepare function, or null.
PrepareFn prepare_fn(OpId id);

using InferFn = ValueType (*)(const InferContext&);
using KernelFn = void (*)(const KernelContext&);

// What an op's gradient function gets: the op's inputs and output as a
// gradient tape recorded them (eager or symbolic), the gradient of the output
// (its dtype and shape), the attrs, and the user's call site of the op.
struct GradContext {
  std::string_view op_name;
  std::span<const Tensor> inputs;
  const Tensor& output;
  const Tensor& grad;
  const Attrs& attrs;
  CallSite site;
  // Bit i: input i depends on a watched tensor (inputs from 64 on: always).
  uint64_t needed = ~uint64_t{0};

  // Whether input i needs its gradient; a rule may skip the others.
  bool needs(size_t i) const { return i >= 64 || ((needed >> i) & 1); }
};
// One gradient per input, each of that input's shape and dtype; an undefined
// tensor for an input that gets none (an index, a condition). Written with
// the public ops (ag/ops.h), so that the same rule runs eagerly and traces.
using GradFn = std::vector<Tensor> (*)(const GradContext&);
// The gradient column's mark of an op whose outputs carry no gradient. It is
// never called: the tape drops a gradient that reaches such an op.
std::vector<Tensor> not_differentiable(const GradContext&);

enum OpFlags : uint32_t {
  kNone = 0,
  kElementwise = 1u << 0,      // one output element per broadcast input element
  kStateful = 1u << 1,         // must run on every call, in program order
  kInPlace = 1u << 2,          // the output may reuse input 0's memory when input 0 dies there
  kShapeOnly = 1u << 3,        // the kernel reads its inputs' shapes, never their data
  kShapeFromValues = 1u << 4,  // the output shape depends on input values, not only on
                               // their shapes and attrs (infer reads InferContext::values)
  kTracedAlways = 1u << 5,     // a node of the trace even when no input is symbolic (its
                               // value is not stored in the trace as a constant)
  kStorageDtypes = 1u << 6,    // takes storage dtypes (ag/dtype.h) as they are: ops::apply
                               // does not compute it in wider dtypes
  kStrings = 1u << 7,          // takes or makes string tensors: a string op, or one that
                               // moves elements without reading them; any other op's
                               // shape rule rejects strings (registry.cpp)
};

struct OpDef {
  OpId id;
  std::string_view name;
  int arity;  // -1: variadic
  InferFn infer;
  KernelFn kernel;
  uint32_t flags;
  GradFn gradient;  // &not_differentiable for an op without one

  bool differentiable() const { return gradient != &not_differentiable; }
};

const OpDef& op_def(OpId id);

// The input whose buffer the op's output may take over where that input's
// value dies at the op, or -1: input 0 of a kInPlace op; fused_conv's
// residual, which its kernel sums the result into.
int in_place_input(const OpDef& op, const Attrs& attrs);

// A kernel for rank-0 inputs and a rank-0 output, which the executor calls
// for scalar steps (loop counters, conditions) without a KernelContext or
// dtype dispatch. It applies the op's own functor (ops/scalar_ops.h), so it
// computes exactly what the op's kernel computes.
using ScalarKernelFn = void (*)(const void* const* inputs, void* out);
// The scalar kernel of an elementwise op for these dtypes (where's is chosen
// by its output dtype), or null when the op has none.
ScalarKernelFn scalar_kernel(OpId id, DType input_dtype, DType output_dtype);
// The same for a two-input op, its inputs passed as arguments (in registers,
// not through an array): the executor's most common scalar step. Null for
// other ops.
using BinaryScalarKernelFn = void (*)(const void* a, const void* b, void* out);
BinaryScalarKernelFn binary_scalar_kernel(OpId id, DType input_dtype, DType output_dtype);
// A two-input op's kernel for a second input that is a constant known when
// the plan is compiled: `prepared` receives what the kernel reads as its b
// (passed instead of the constant). Null when the op has none for this
// dtype and value (the binary kernel then runs): so far int32 mod by a
// non-zero constant and floordiv by one other than 0, 1 and -1, without a
// division.
struct PreparedConstant {
  alignas(8) unsigned char bytes[16] = {};
};
BinaryScalarKernelFn binary_kernel_by_constant(OpId id, DType dtype, const void* constant,
                                               PreparedConstant& prepared);
// The same functor over n elements (flat steps: small static vectors):
// element e of input i at inputs[i] + e * strides[i] bytes (a stride of 0
// broadcasts one element), of the output at element e of `out`. Each
// element's inputs are read before its output is written, so `out` may be
// an input of the output's layout.
using FlatKernelFn = void (*)(const void* const* inputs, const uint32_t* strides, int32_t n,
                              void* out);
FlatKernelFn flat_kernel(OpId id, DType input_dtype, DType output_dtype);

}  // namespace ag::ops
