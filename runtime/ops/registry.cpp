// The op table built from ops.def (op_def), the ops' prepare functions,
// and the hash of Attrs.
#include "ops/conv_geometry.h"
#include "ops/kernels.h"
#include "ops/op_registry.h"

#include <bit>
#include <string>

#include "ag/error.h"

namespace ag::ops {
namespace {

// Identity takes every dtype: graphs pass values through it.
constexpr uint32_t flags_of(OpId id, uint32_t flags) {
  return id == OpId::Identity ? flags | kStrings : flags;
}

[[noreturn]] void throw_takes_no_strings(std::string_view op) {
  throw InvalidArgumentError(
      std::string(op) + ": string tensors are not supported: " + std::string(op) +
      " computes on numbers; convert strings to numbers with ag::strings::to_number(x, "
      "dtype), or numbers to strings with ag::strings::as_string(x)");
}

// An op's shape rule; for an op without kStrings, first the rejection of
// string tensors, so that no string reaches a numeric kernel by any path
// (eager calls, traces, loaded models, plans all ask the shape rule).
template <InferFn F, uint32_t Flags>
ValueType infer_of(const InferContext& ctx) {
  if constexpr (Flags & kStrings) {
    return F(ctx);
  } else {
    for (const ValueType& t : ctx.inputs) {
      if (t.dtype == DType::string) throw_takes_no_strings(ctx.op_name);
    }
    ValueType out = F(ctx);
    if (out.dtype == DType::string) throw_takes_no_strings(ctx.op_name);
    return out;
  }
}

constexpr OpDef kOps[] = {
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx) \
  {OpId::id, name,                                                   \
   arity,    &infer_of<&infer, flags_of(OpId::id, flags)>,           \
   kernel,   flags_of(OpId::id, flags),                              \
   gradient},
#include "ag/ops.def"
#undef AG_OP
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == size_t(OpId::kCount));

}  // namespace

const OpDef& op_def(OpId id) {
  return kOps[size_t(id)];
}

PrepareFn prepare_fn(OpId id) {
  switch (id) {
    case OpId::Conv:
      return &prepare_conv;
    case OpId::FusedConv:
      return &prepare_fused_conv;
    case OpId::Softmax:
      return &prepare_softmax;
    case OpId::SoftmaxGrad:
      return &prepare_softmax_grad;
    case OpId::BatchNorm:
      return &prepare_batch_norm;
    case OpId::LayerNorm:
      return &prepare_layer_norm;
    case OpId::FusedBatchNorm:
      return &prepare_fused_batch_norm;
    case OpId::FusedBatchNormGrad:
      return &prepare_fused_batch_norm_grad;
    case OpId::LayerNormGrad:
      return &prepare_layer_norm_grad;
    case OpId::LstmSequence:
    case OpId::GruSequence:
    case OpId::SimpleRnnSequence:
      return &prepare_rnn_sequence;
    default:
      return nullptr;
  }
}

int in_place_input(const OpDef& op, const Attrs& attrs) {
  if (op.flags & kInPlace) return 0;
  if (op.id != OpId::FusedConv) return -1;
  const ConvEpilogue e = FusedConvAttrs::decode(attrs).epilogue;
  return e.residual ? int(e.residual_input()) : -1;
}

size_t Attrs::hash() const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (int64_t v : ints) mix(uint64_t(v));
  mix(uint64_t(axis));
  mix(keepdims);
  mix(uint64_t(dtype));
  mix(std::bit_cast<uint64_t>(lo));
  mix(std::bit_cast<uint64_t>(hi));
  mix(seed);
  return size_t(h);
}

}  // namespace ag::ops
