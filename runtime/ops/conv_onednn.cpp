// Convolution on oneDNN's primitives (float32); see conv_kernels.h.
//
// The input and output stay in the caller's layout (NHWC or NCHW, as plain
// strided memory, which oneDNN's AVX2 and AVX-512 kernels take as they are).
// The filter is declared `any`, so that oneDNN picks its blocked layout; it
// is reordered into that layout on each call, which costs a pass over the
// filter (the guide's 3x3x100x100 filter: 90,000 elements against the
// convolution's 7.1 GFLOP).
#include <map>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ops/conv_kernels.h"
#include "ops/gemm.h"

#if AG_GEMM_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace ag::ops::conv_onednn {

#if AG_GEMM_ONEDNN
namespace {

using dnnl::memory;
using Dims = memory::dims;

enum class Pass : int64_t { forward, backward_input, backward_filter };

// oneDNN's dims and strides of a batch of `channels` at g's positions
// `spatial`, in g's layout; logical order [batch, channels, spatial...].
memory::desc activation_desc(const ConvGeometry& g, int64_t channels,
                             const std::vector<int64_t>& spatial) {
  Dims dims = {g.batch, channels}, strides(size_t(g.rank) + 2);
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  int64_t step = g.channels_first ? 1 : channels;  // the innermost spatial stride
  for (int i = g.rank - 1; i >= 0; --i) {
    strides[size_t(i) + 2] = step;
    step *= spatial[size_t(i)];
  }
  strides[1] = g.channels_first ? step : 1;
  strides[0] = step * (g.channels_first ? channels : 1);
  return memory::desc(dims, memory::data_type::f32, strides);
}

// The filter [kernel..., in/groups, out] as oneDNN's weights: [out, in,
// kernel...], or [groups, out/groups, in/groups, kernel...] with groups.
memory::desc filter_desc(const ConvGeometry& g) {
  const int64_t in_per_group = g.in_channels / g.groups;
  const int64_t out_per_group = g.out_channels / g.groups;
  Dims dims, strides;
  if (g.groups > 1) {
    dims = {g.groups, out_per_group, in_per_group};
    strides = {out_per_group, 1, g.out_channels};
  } else {
    dims = {g.out_channels, in_per_group};
    strides = {1, g.out_channels};
  }
  int64_t step = in_per_group * g.out_channels;
  std::vector<int64_t> kernel_strides(size_t(g.rank));
  for (int i = g.rank - 1; i >= 0; --i) {
    kernel_strides[size_t(i)] = step;
    step *= g.kernel[size_t(i)];
  }
  dims.insert(dims.end(), g.kernel.begin(), g.kernel.end());
  strides.insert(strides.end(), kernel_strides.begin(), kernel_strides.end());
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc any_like(const memory::desc& d) {
  return memory::desc(d.dims(), memory::data_type::f32, memory::format_tag::any);
}

const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

// The descriptors shared by the three passes of one geometry.
struct Descs {
  memory::desc src, filter, dst;
  Dims strides, dilations, pad_before, pad_after;
};

Descs descs(const ConvGeometry& g) {
  Descs d{activation_desc(g, g.in_channels, g.in),
          filter_desc(g),
          activation_desc(g, g.out_channels, g.out),
          g.strides,
          g.dilations,
          g.pad_before,
          g.pad_after};
  for (auto& dilation : d.dilations) dilation -= 1;  // oneDNN counts the gaps
  return d;
}

dnnl::convolution_forward::primitive_desc forward_desc(const Descs& d) {
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, d.src,
      any_like(d.filter), d.dst, d.strides, d.dilations, d.pad_before, d.pad_after);
  return {desc, engine()};
}

// One pass of one geometry: its primitive, and the filter's layout in it.
struct Compiled {
  dnnl::primitive primitive;
  memory::desc filter;  // the primitive's (weights or diff_weights)
  std::string implementation;
};

Compiled compile(const ConvGeometry& g, Pass pass) {
  const Descs d = descs(g);
  auto forward = forward_desc(d);
  if (pass == Pass::forward)
    return {dnnl::convolution_forward(forward), forward.weights_desc(), forward.impl_info_str()};
  if (pass == Pass::backward_input) {
    dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.src,
                                               any_like(d.filter), d.dst, d.strides, d.dilations,
                                               d.pad_before, d.pad_after);
    dnnl::convolution_backward_data::primitive_desc pd(desc, engine(), forward);
    return {dnnl::convolution_backward_data(pd), pd.weights_desc(), pd.impl_info_str()};
  }
  dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, d.src,
                                                any_like(d.filter), d.dst, d.strides, d.dilations,
                                                d.pad_before, d.pad_after);
  dnnl::convolution_backward_weights::primitive_desc pd(desc, engine(), forward);
  return {dnnl::convolution_backward_weights(pd), pd.diff_weights_desc(), pd.impl_info_str()};
}

std::vector<int64_t> cache_key(const ConvGeometry& g, Pass pass) {
  std::vector<int64_t> key = {int64_t(pass), g.rank,         g.channels_first, g.batch,
                              g.in_channels, g.out_channels, g.groups};
  for (const auto* v : {&g.in, &g.kernel, &g.strides, &g.dilations, &g.pad_before, &g.pad_after})
    key.insert(key.end(), v->begin(), v->end());
  return key;
}

// This thread's primitives, by geometry and pass. A model has a few dozen;
// past kMaxCached (shapes that change on every call) the cache starts over.
constexpr size_t kMaxCached = 256;

const Compiled& compiled(const ConvGeometry& g, Pass pass) {
  thread_local std::map<std::vector<int64_t>, Compiled> cache;
  std::vector<int64_t> key = cache_key(g, pass);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxCached) cache.clear();
  return cache.emplace(std::move(key), compile(g, pass)).first->second;
}

memory wrap(const memory::desc& desc, const void* data) {
  return memory(desc, engine(), const_cast<void*>(data));
}

// Runs one pass: `filter` (the caller's layout) is read, or written when it
// is the result (backward_filter).
void run(const ConvGeometry& g, Pass pass, const void* src, void* filter, void* dst) {
  sync_onednn_threads();
  const Descs d = descs(g);
  const Compiled& c = compiled(g, pass);
  thread_local dnnl::stream stream(engine());
  memory user_filter = wrap(d.filter, filter);
  const bool reordered = c.filter != d.filter;
  memory filter_memory = reordered ? memory(c.filter, engine()) : user_filter;
  if (reordered && pass != Pass::backward_filter)
    dnnl::reorder(user_filter, filter_memory).execute(stream, user_filter, filter_memory);
  const int src_arg = pass == Pass::backward_input ? DNNL_ARG_DIFF_SRC : DNNL_ARG_SRC;
  const int dst_arg = pass == Pass::forward ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST;
  const int filter_arg = pass == Pass::backward_filter ? DNNL_ARG_DIFF_WEIGHTS : DNNL_ARG_WEIGHTS;
  c.primitive.execute(
      stream,
      {{src_arg, wrap(d.src, src)}, {filter_arg, filter_memory}, {dst_arg, wrap(d.dst, dst)}});
  if (reordered && pass == Pass::backward_filter)
    dnnl::reorder(filter_memory, user_filter).execute(stream, filter_memory, user_filter);
  stream.wait();
}

void run_checked(const ConvGeometry& g, Pass pass, const void* src, void* filter, void* dst) {
  try {
    run(g, pass, src, filter, dst);
  } catch (const dnnl::error& e) {
    throw InternalError("convolution: oneDNN failed (status " + std::to_string(int(e.status)) +
                        "): " + e.what() + ", on an input of " + g.input_shape().to_list_string() +
                        " and a filter of " + g.filter_shape().to_list_string());
  }
}

}  // namespace

void forward(const ConvGeometry& g, const float* x, const float* w, float* y) {
  run_checked(g, Pass::forward, x, const_cast<float*>(w), y);
}
void backward_input(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
  run_checked(g, Pass::backward_input, dx, const_cast<float*>(w), const_cast<float*>(dy));
}
void backward_filter(const ConvGeometry& g, const float* x, const float* dy, float* dw) {
  run_checked(g, Pass::backward_filter, x, dw, const_cast<float*>(dy));
}
std::string forward_implementation(const ConvGeometry& g) {
  return compiled(g, Pass::forward).implementation;
}

#else

namespace {
[[noreturn]] void unavailable() {
  throw UnimplementedError("convolution: this build has no oneDNN (AG_GEMM=openblas)");
}
}  // namespace

void forward(const ConvGeometry&, const float*, const float*, float*) {
  unavailable();
}
void backward_input(const ConvGeometry&, const float*, const float*, float*) {
  unavailable();
}
void backward_filter(const ConvGeometry&, const float*, const float*, float*) {
  unavailable();
}
std::string forward_implementation(const ConvGeometry&) {
  unavailable();
}

#endif

}  // namespace ag::ops::conv_onednn
