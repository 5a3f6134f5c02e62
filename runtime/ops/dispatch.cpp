#include "ops/dispatch.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor_impl.h"
#include "ops/check_numerics.h"
#include "ops/random.h"

namespace ag::ops {
namespace {
std::atomic<const TraceHooks*> g_trace_hooks{nullptr};
thread_local OpObserver* t_op_observer = nullptr;

// An error of an op's shape rule or kernel names the op, as TensorFlow's
// eager "[Op:AddV2]", unless its message starts with the name already.
[[noreturn]] void rethrow_naming_op(const Error& e, std::string_view op) {
  const std::string& message = e.message();
  if (message.starts_with(op) && message.size() > op.size() && message[op.size()] == ':') throw;
  detail::throw_error(e.kind(), message + " [Op:" + std::string(op) + "]");
}
}  // namespace

void install_trace_hooks(const TraceHooks* hooks) {
  g_trace_hooks.store(hooks, std::memory_order_release);
}

void set_op_observer(OpObserver* observer) {
  t_op_observer = observer;
}

namespace {

// The op's infer function, then its kernel into a new eager tensor.
Tensor infer_and_run(const OpDef& def, std::span<const ValueType> types,
                     std::span<const void* const> values, std::span<const KernelInput> kin,
                     const Attrs& attrs, RandomState* rng) {
  InferContext ictx{def.name, types, attrs, values};
  ValueType out = def.infer(ictx);
  Tensor result = detail::make_eager(out.dtype, out.shape);
  KernelContext kctx{def.name, kin, result.raw_mutable_data(), &result.shape(), out.dtype,
                     &attrs,   rng};
  def.kernel(kctx);
  return result;
}

}  // namespace

Tensor run_eager(OpId op, std::span<const Tensor> inputs, const Attrs& attrs, RandomState* rng) {
  const OpDef& def = op_def(op);
  constexpr size_t kInline = 8;
  ValueType types_inline[kInline];
  const void* values_inline[kInline];
  KernelInput kin_inline[kInline];
  std::vector<ValueType> types_heap;
  std::vector<const void*> values_heap;
  std::vector<KernelInput> kin_heap;
  ValueType* types = types_inline;
  const void** values = values_inline;
  KernelInput* kin = kin_inline;
  if (inputs.size() > kInline) {
    types_heap.resize(inputs.size());
    values_heap.resize(inputs.size());
    kin_heap.resize(inputs.size());
    types = types_heap.data();
    values = values_heap.data();
    kin = kin_heap.data();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      throw InvalidArgumentError(std::string(def.name) + ": input " + std::to_string(i) +
                                 " is an undefined tensor");
    }
    types[i] = {inputs[i].dtype(), inputs[i].shape()};
    values[i] = inputs[i].raw_data();
    kin[i] = {values[i], &inputs[i].shape(), types[i].dtype};
  }
  try {
    return infer_and_run(def, {types, inputs.size()}, {values, inputs.size()}, {kin, inputs.size()},
                         attrs, rng);
  } catch (const Error& e) {
    rethrow_naming_op(e, def.name);
  }
}

Tensor run_on_shapes(OpId op, std::span<const ValueType> inputs, const Attrs& attrs) {
  const OpDef& def = op_def(op);
  if (!(def.flags & kShapeOnly)) {
    throw InternalError(std::string(def.name) +
                        ": run_on_shapes needs an op that reads only shapes");
  }
  std::vector<KernelInput> kin;
  kin.reserve(inputs.size());
  for (const ValueType& t : inputs) {
    if (!t.shape.is_fully_defined()) {
      throw InternalError(std::string(def.name) + ": run_on_shapes needs fully defined shapes");
    }
    kin.push_back({nullptr, &t.shape, t.dtype});
  }
  return infer_and_run(def, inputs, {}, kin, attrs, nullptr);
}

namespace {

Tensor record_or_run(const OpDef& def, std::span<const Tensor> inputs, const Attrs& attrs,
                     CallSite site) {
  bool symbolic = false;
  for (const Tensor& t : inputs) symbolic |= t.is_symbolic();
  if (symbolic || (def.flags & (kStateful | kTracedAlways))) {
    const TraceHooks* hooks = g_trace_hooks.load(std::memory_order_acquire);
    if (symbolic || (hooks && hooks->is_tracing())) {
      if (!hooks)
        throw InternalError(std::string(def.name) + ": a symbolic input before any trace");
      return hooks->record_op(def.id, inputs, attrs, site);
    }
  }
  Tensor output = run_eager(def.id, inputs, attrs,
                            (def.flags & kStateful) ? &eager_random_state(attrs.seed) : nullptr);
  // Only on a tensor no one else holds: an op may hand back an input.
  if (output.impl().use_count() == 1) output.impl()->site = site;
  return output;
}

}  // namespace

namespace {

// Whether `def` on these inputs computes in wider dtypes (ag/dtype.h):
// every op but cast, the shape-only ops and those of kStorageDtypes, given a
// storage dtype.
bool computes_wider(const OpDef& def, std::span<const Tensor> inputs, const Attrs& attrs) {
  if (def.id == OpId::Cast || (def.flags & (kShapeOnly | kStorageDtypes))) return false;
  if (is_storage_dtype(attrs.dtype) && uint8_t(attrs.dtype) < kNumDTypes) return true;
  for (const Tensor& t : inputs) {
    if (t.defined() && is_storage_dtype(t.dtype())) return true;
  }
  return false;
}

// The dtype besides `d` that a dtype-following output would change with.
DType other_of_kind(DType d) {
  switch (d) {
    case DType::int32:
      return DType::int64;
    case DType::int64:
      return DType::int32;
    default:
      return DType::float64;
  }
}

// Whether the op's output dtype follows its widened inputs' dtype `wide`
// (add, sqrt: yes; less, argmax: no): its shape rule, asked about another
// dtype of the same kind, answers with another dtype.
bool output_follows(const OpDef& def, std::span<const Tensor> inputs, const Attrs& attrs,
                    DType storage, DType wide) {
  auto output_for = [&](DType d) {
    std::vector<ValueType> types;
    for (const Tensor& t : inputs) {
      types.push_back({t.defined() && t.dtype() == storage ? d : t.dtype(), t.shape()});
    }
    Attrs a = attrs;
    if (a.dtype == storage) a.dtype = d;
    return def.infer(InferContext{def.name, types, a, {}}).dtype;
  };
  try {
    return output_for(wide) == wide && output_for(other_of_kind(wide)) != wide;
  } catch (const Error&) {
    return true;  // an op of one dtype: its output keeps it
  }
}

// How an op computes on uint64, whose compute dtype int64 holds the same bits
// (ag/dtype.h).
enum class UnsignedWidening {
  kSameBits,  // wrap-around arithmetic, equality, bitwise ops and moves:
              // exact on every value
  kOrder,     // reads only the order: with the top bit flipped, int64
              // orders the bits as uint64 orders them
  kChecked,   // reads the magnitude: exact below 2^63, an error above
};

UnsignedWidening unsigned_widening(OpId op) {
  switch (op) {
    case OpId::Neg:
    case OpId::Identity:
    case OpId::Round:
    case OpId::Floor:
    case OpId::Ceil:
    case OpId::IsNan:
    case OpId::IsInf:
    case OpId::IsFinite:
    case OpId::Add:
    case OpId::Sub:
    case OpId::Mul:
    case OpId::Equal:
    case OpId::NotEqual:
    case OpId::BitwiseAnd:
    case OpId::BitwiseOr:
    case OpId::BitwiseXor:
    case OpId::Invert:
    case OpId::LeftShift:
    case OpId::Where:
    case OpId::ReduceSum:
    case OpId::ReduceProd:
    case OpId::ReduceAny:
    case OpId::ReduceAll:
    case OpId::ReduceSumTo:
    case OpId::Cumsum:
    case OpId::Cumprod:
    case OpId::MatMul:
    case OpId::Transpose:
    case OpId::Reshape:
    case OpId::DynamicReshape:
    case OpId::DynamicBroadcastTo:
    case OpId::DynamicTile:
    case OpId::ExpandDims:
    case OpId::Squeeze:
    case OpId::BroadcastTo:
    case OpId::Concat:
    case OpId::Stack:
    case OpId::Gather:
    case OpId::GatherNd:
    case OpId::Slice:
    case OpId::Tile:
    case OpId::Reverse:
    case OpId::PadGrad:
    case OpId::UnsortedSegmentSum:
    case OpId::TensorScatterNdUpdate:
    case OpId::TensorScatterNdAdd:
    case OpId::UniqueFirstIndices:
    case OpId::OneHot:
    case OpId::TensorArrayWrite:
      return UnsignedWidening::kSameBits;
    case OpId::Less:
    case OpId::LessEqual:
    case OpId::Greater:
    case OpId::GreaterEqual:
    case OpId::Maximum:
    case OpId::Minimum:
    case OpId::ClipByValue:
    case OpId::ReduceMax:
    case OpId::ReduceMin:
    case OpId::ArgMax:
    case OpId::ArgMin:
    case OpId::Argsort:
      return UnsignedWidening::kOrder;
    default:
      return UnsignedWidening::kChecked;
  }
}

// x ^ INT64_MIN on int64: uint64's order as int64's, and back.
Tensor flip_top_bit(const Tensor& x, CallSite site) {
  const Tensor top(Tensor::scalar_impl(0.0, INT64_MIN, DType::int64));
  return apply(OpId::BitwiseXor, {x, top}, {}, site);
}

// `t` in its compute dtype, as `def` reads it (see UnsignedWidening). A
// checked cast names the op in its error (kernel_cast).
Tensor widen_input(const OpDef& def, const Tensor& t, UnsignedWidening how, CallSite site) {
  Attrs cast;
  cast.dtype = compute_dtype(t.dtype());
  if (t.dtype() != DType::uint64) return apply(OpId::Cast, {t}, cast, site);
  if (how == UnsignedWidening::kChecked) cast.ints = {int64_t(def.id)};
  Tensor wide = apply(OpId::Cast, {t}, cast, site);
  return how == UnsignedWidening::kOrder ? flip_top_bit(wide, site) : wide;
}

// Casts the storage-dtype inputs to their compute dtype, applies the op,
// and casts a dtype-following output back. A shape rule's rejection of the
// compute dtype names the dtype the caller passed.
Tensor apply_widened(const OpDef& def, std::span<const Tensor> inputs, const Attrs& attrs,
                     CallSite site) {
  DType storage = attrs.dtype;
  for (const Tensor& t : inputs) {
    if (t.defined() && is_storage_dtype(t.dtype())) storage = t.dtype();
  }
  const DType wide = compute_dtype(storage);
  const UnsignedWidening how = unsigned_widening(def.id);
  std::vector<Tensor> widened;
  widened.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    const bool keep = !t.defined() || !is_storage_dtype(t.dtype());
    widened.push_back(keep ? t : widen_input(def, t, how, site));
  }
  Attrs wide_attrs = attrs;
  if (is_storage_dtype(attrs.dtype)) wide_attrs.dtype = compute_dtype(attrs.dtype);
  const bool follows = output_follows(def, inputs, attrs, storage, wide);
  Tensor out;
  try {
    out = apply(def.id, widened, wide_attrs, site);
  } catch (const Error& e) {
    const std::string needle = "unsupported dtype " + std::string(dtype_name(wide));
    const std::string& message = e.message();
    const size_t at = message.find(needle);
    if (at == std::string::npos) throw;
    detail::throw_error(
        e.kind(), message.substr(0, at) + "unsupported dtype " + std::string(dtype_name(storage)) +
                      " (computed as " + std::string(dtype_name(wide)) + ", which " +
                      std::string(def.name) + " does not take either); cast it to a dtype " +
                      std::string(def.name) + " takes" + message.substr(at + needle.size()));
  }
  if (!follows || out.dtype() != wide) return out;
  if (storage == DType::uint64 && how == UnsignedWidening::kOrder) out = flip_top_bit(out, site);
  Attrs back;
  back.dtype = storage;
  return apply(OpId::Cast, {out}, back, site);
}

}  // namespace

Tensor apply(OpId op, std::span<const Tensor> inputs, const Attrs& attrs, CallSite site) {
  if (computes_wider(op_def(op), inputs, attrs)) [[unlikely]]
    return apply_widened(op_def(op), inputs, attrs, site);
  Tensor output = record_or_run(op_def(op), inputs, attrs, site);
  if (check_numerics_on()) [[unlikely]]
    check_output_numerics(op, output, site);
  if (OpObserver* observer = t_op_observer) [[unlikely]]
    observer->on_op(op, inputs, attrs, site, output);
  return output;
}

Tensor zeros_op(const Shape& shape, DType dtype, CallSite site) {
  Attrs attrs;
  attrs.ints.assign(shape.begin(), shape.end());
  attrs.dtype = dtype;
  return apply(OpId::Zeros, {}, attrs, site);
}

}  // namespace ag::ops
