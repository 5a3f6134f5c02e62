// Batch and layer normalisation, softmax and their gradients on oneDNN's
// primitives (float32); see norm_kernels.h. The tensors stay in the caller's
// plain layout: these primitives read each element once or twice, so a
// reorder to a blocked layout would cost what it saves.
#include <atomic>
#include <bit>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "ops/gemm.h"
#include "ops/norm_kernels.h"

#if AG_GEMM_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/onednn_primitives.h"
#endif

namespace ag::ops::norm_onednn {

namespace {
std::atomic<int64_t> norm_onednn_made{0};
}  // namespace

int64_t primitives_made() {
  return norm_onednn_made.load();
}

#if AG_GEMM_ONEDNN

using dnnl::memory;
using dnnl::normalization_flags;
using dnnl::prop_kind;

// The primitive and the memory descriptors of its arguments, by DNNL_ARG_*.
class Compiled {
 public:
  dnnl::primitive primitive;
  std::vector<std::pair<int, memory::desc>> args;
  memory::desc scratchpad;
};

namespace {

// [outer, length, inner] as plain row-major memory; 2-D where inner is 1.
memory::desc norm_onednn_data_desc(const Problem& p) {
  if (p.inner == 1) return memory::desc({p.outer, p.length}, memory::data_type::f32, {p.length, 1});
  return memory::desc({p.outer, p.length, p.inner}, memory::data_type::f32,
                      {p.length * p.inner, p.inner, 1});
}

memory::desc norm_onednn_vector_desc(int64_t n) {
  return memory::desc({n}, memory::data_type::f32, memory::format_tag::a);
}

dnnl::primitive_attr norm_onednn_user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

Compiled compile_batch_norm(const Problem& p) {
  const memory::desc data = norm_onednn_data_desc(p), channels = norm_onednn_vector_desc(p.length);
  const auto flags = normalization_flags::use_global_stats | normalization_flags::use_scale |
                     normalization_flags::use_shift;
  const dnnl::batch_normalization_forward::primitive_desc pd(
      {prop_kind::forward_inference, data, p.epsilon, flags}, norm_onednn_user_scratchpad(),
      onednn::engine());
  return {dnnl::batch_normalization_forward(pd),
          {{DNNL_ARG_SRC, data},
           {DNNL_ARG_MEAN, channels},
           {DNNL_ARG_VARIANCE, channels},
           {DNNL_ARG_SCALE, channels},
           {DNNL_ARG_SHIFT, channels},
           {DNNL_ARG_DST, data}},
          pd.scratchpad_desc()};
}

Compiled compile_layer_norm(const Problem& p) {
  const memory::desc data = norm_onednn_data_desc(p), row = norm_onednn_vector_desc(p.length);
  const dnnl::layer_normalization_forward::primitive_desc pd(
      {prop_kind::forward_inference, data, p.epsilon,
       normalization_flags::use_scale | normalization_flags::use_shift},
      norm_onednn_user_scratchpad(), onednn::engine());
  return {
      dnnl::layer_normalization_forward(pd),
      {{DNNL_ARG_SRC, data}, {DNNL_ARG_SCALE, row}, {DNNL_ARG_SHIFT, row}, {DNNL_ARG_DST, data}},
      pd.scratchpad_desc()};
}

// y and the batch's statistics, which the caller drops.
Compiled compile_batch_norm_training(const Problem& p) {
  const memory::desc data = norm_onednn_data_desc(p), channels = norm_onednn_vector_desc(p.length);
  const dnnl::batch_normalization_forward::primitive_desc pd(
      {prop_kind::forward_training, data, p.epsilon,
       normalization_flags::use_scale | normalization_flags::use_shift},
      norm_onednn_user_scratchpad(), onednn::engine());
  return {dnnl::batch_normalization_forward(pd),
          {{DNNL_ARG_SRC, data},
           {DNNL_ARG_SCALE, channels},
           {DNNL_ARG_SHIFT, channels},
           {DNNL_ARG_DST, data},
           {DNNL_ARG_MEAN, channels},
           {DNNL_ARG_VARIANCE, channels}},
          pd.scratchpad_desc()};
}

// dx through the batch's statistics (the caller's), and dscale.
Compiled compile_batch_norm_grad(const Problem& p) {
  const memory::desc data = norm_onednn_data_desc(p), channels = norm_onednn_vector_desc(p.length);
  const auto flags = normalization_flags::use_scale;
  const dnnl::batch_normalization_forward::primitive_desc hint(
      {prop_kind::forward_training, data, p.epsilon, flags}, onednn::engine());
  const dnnl::batch_normalization_backward::primitive_desc pd(
      {prop_kind::backward, data, data, p.epsilon, flags}, norm_onednn_user_scratchpad(),
      onednn::engine(), hint);
  return {dnnl::batch_normalization_backward(pd),
          {{DNNL_ARG_SRC, data},
           {DNNL_ARG_MEAN, channels},
           {DNNL_ARG_VARIANCE, channels},
           {DNNL_ARG_SCALE, channels},
           {DNNL_ARG_DIFF_DST, data},
           {DNNL_ARG_DIFF_SRC, data},
           {DNNL_ARG_DIFF_SCALE, channels}},
          pd.scratchpad_desc()};
}

// dx, and dscale (oneDNN has no backward_data with a scale); the rows' mean
// and variance are the caller's.
Compiled compile_layer_norm_grad(const Problem& p) {
  const memory::desc data = norm_onednn_data_desc(p), row = norm_onednn_vector_desc(p.length),
                     stats = norm_onednn_vector_desc(p.outer);
  const auto flags = normalization_flags::use_scale;
  const dnnl::layer_normalization_forward::primitive_desc hint(
      {prop_kind::forward_training, data, stats, p.epsilon, flags}, onednn::engine());
  const dnnl::layer_normalization_backward::primitive_desc pd(
      {prop_kind::backward, data, data, stats, p.epsilon, flags}, norm_onednn_user_scratchpad(),
      onednn::engine(), hint);
  return {dnnl::layer_normalization_backward(pd),
          {{DNNL_ARG_SRC, data},
           {DNNL_ARG_MEAN, stats},
           {DNNL_ARG_VARIANCE, stats},
           {DNNL_ARG_SCALE, row},
           {DNNL_ARG_DIFF_DST, data},
           {DNNL_ARG_DIFF_SRC, data},
           {DNNL_ARG_DIFF_SCALE, row}},
          pd.scratchpad_desc()};
}

template <class Forward>
Compiled compile_softmax(const Problem& p) {
  const memory::desc data = norm_onednn_data_desc(p);
  const typename Forward::primitive_desc pd({prop_kind::forward_inference, data, 1},
                                            norm_onednn_user_scratchpad(), onednn::engine());
  return {Forward(pd), {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}}, pd.scratchpad_desc()};
}

// The backward primitive takes its forward's primitive descriptor as a hint.
template <class Forward, class Backward>
Compiled compile_softmax_grad(const Problem& p) {
  const memory::desc data = norm_onednn_data_desc(p);
  const typename Forward::primitive_desc hint({prop_kind::forward_training, data, 1},
                                              onednn::engine());
  const typename Backward::primitive_desc pd({data, data, 1}, norm_onednn_user_scratchpad(),
                                             onednn::engine(), hint);
  return {Backward(pd),
          {{DNNL_ARG_DST, data}, {DNNL_ARG_DIFF_DST, data}, {DNNL_ARG_DIFF_SRC, data}},
          pd.scratchpad_desc()};
}

Compiled compile(const Problem& p) {
  ++norm_onednn_made;
  switch (p.kind) {
    case Kind::batch_norm:
      return compile_batch_norm(p);
    case Kind::layer_norm:
      return compile_layer_norm(p);
    case Kind::softmax:
      return compile_softmax<dnnl::softmax_forward>(p);
    case Kind::softmax_grad:
      return compile_softmax_grad<dnnl::softmax_forward, dnnl::softmax_backward>(p);
    case Kind::layer_norm_grad:
      return compile_layer_norm_grad(p);
    case Kind::batch_norm_training:
      return compile_batch_norm_training(p);
    case Kind::batch_norm_grad:
      return compile_batch_norm_grad(p);
  }
  throw InternalError("norm_onednn: unknown problem kind");
}

std::string norm_onednn_describe(const Problem& p) {
  static const char* const kNames[] = {"batch_norm",     "layer_norm",      "softmax",
                                       "softmax_grad",   "layer_norm_grad", "batch_norm_training",
                                       "batch_norm_grad"};
  return std::string(kNames[int(p.kind)]) + " of [" + std::to_string(p.outer) + ", " +
         std::to_string(p.length) + ", " + std::to_string(p.inner) + "]";
}

// Runs f, a oneDNN call on p, with its errors as InternalErrors.
template <class F>
auto norm_onednn_checked(const Problem& p, F f) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    throw InternalError("oneDNN failed (status " + std::to_string(int(e.status)) +
                        "): " + e.what() + ", on " + norm_onednn_describe(p));
  }
}

// This thread's primitive of p, compiled on its first use; past 256
// problems (shapes that change on every call) the cache starts over.
const Compiled& norm_onednn_cached(const Problem& p) {
  constexpr size_t kMaxCached = 256;
  thread_local std::map<std::vector<int64_t>, Compiled> cache;
  std::vector<int64_t> key = {int64_t(p.kind), p.outer, p.length, p.inner,
                              int64_t(std::bit_cast<uint32_t>(p.epsilon))};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxCached) cache.clear();
  return cache.emplace(std::move(key), compile(p)).first->second;
}

const void* norm_onednn_buffer(int arg, const Buffers& b) {
  switch (arg) {
    case DNNL_ARG_SRC:
      return b.x;
    case DNNL_ARG_DST:  // a gradient's DST is the forward's output, y
      return b.dy ? b.x : b.out;
    case DNNL_ARG_DIFF_DST:
      return b.dy;
    case DNNL_ARG_MEAN:
      return b.mean_out ? b.mean_out : b.mean;
    case DNNL_ARG_VARIANCE:
      return b.variance_out ? b.variance_out : b.variance;
    case DNNL_ARG_SCALE:
      return b.scale;
    case DNNL_ARG_SHIFT:
      return b.offset;
    case DNNL_ARG_DIFF_SCALE:
      return b.diff_scale;
    default:  // DNNL_ARG_DIFF_SRC
      return b.out;
  }
}

void norm_onednn_execute(const Compiled& c, const Buffers& b) {
  sync_onednn_threads();
  thread_local dnnl::stream stream(onednn::engine());
  std::unordered_map<int, memory> args;
  for (const auto& [arg, desc] : c.args) args[arg] = onednn::wrap(desc, norm_onednn_buffer(arg, b));
  args[DNNL_ARG_SCRATCHPAD] =
      onednn::wrap(c.scratchpad, onednn::scratch(onednn::kConvScratchpad, c.scratchpad.get_size()));
  c.primitive.execute(stream, args);
  stream.wait();
}

}  // namespace

std::shared_ptr<const Compiled> prepare(const Problem& p) {
  return norm_onednn_checked(p, [&] { return std::make_shared<const Compiled>(compile(p)); });
}

void run(const Compiled* prepared, const Problem& p, const Buffers& b) {
  norm_onednn_checked(
      p, [&] { norm_onednn_execute(prepared ? *prepared : norm_onednn_cached(p), b); });
}

#else

class Compiled {};

namespace {
[[noreturn]] void norm_onednn_unavailable() {
  throw UnimplementedError("normalisation: this build has no oneDNN (AG_GEMM=openblas)");
}
}  // namespace

std::shared_ptr<const Compiled> prepare(const Problem&) {
  norm_onednn_unavailable();
}
void run(const Compiled*, const Problem&, const Buffers&) {
  norm_onednn_unavailable();
}

#endif

}  // namespace ag::ops::norm_onednn
