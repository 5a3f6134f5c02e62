// An LSTM sequence on oneDNN's lstm_forward and lstm_backward primitives
// (float32); see lstm_kernels.h.
//
// The caller's tensors are oneDNN's plain layouts as they are: x and y
// `tnc`, the states `ldnc` (one layer, one direction), kernel and
// recurrent_kernel `ldigo`, the bias `ldgo`. The weights are declared `any`,
// so that oneDNN may pick its brgemm kernel's layout (an LSTM of 128 units
// on a batch of 16: forward 495 against 720 us on the plain layout); each
// call then reorders them, a pass over the weights. The backward pass needs
// the forward's workspace (each step's gates and cell states), which the op
// does not keep: it runs the forward pass again.
#include <array>
#include <cstring>
#include <map>
#include <unordered_map>

#include "ag/error.h"
#include "ag/threading.h"
#include "ops/gemm.h"
#include "ops/lstm_kernels.h"

#if AG_GEMM_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/onednn_primitives.h"
#endif

namespace ag::ops::lstm {

#if AG_GEMM_ONEDNN
namespace {

using dnnl::memory;
using onednn::engine;
using onednn::scratch;
using onednn::wrap;
using Tag = memory::format_tag;
using Args = std::unordered_map<int, memory>;

// The caller's layouts of the problem's tensors.
struct Descs {
  memory::desc x, state, kernel, recurrent_kernel, bias, y;
};

Descs descs(const Problem& p) {
  const auto f32 = memory::data_type::f32;
  return {memory::desc({p.time, p.batch, p.input}, f32, Tag::tnc),
          memory::desc({1, 1, p.batch, p.units}, f32, Tag::ldnc),
          memory::desc({1, 1, p.input, 4, p.units}, f32, Tag::ldigo),
          memory::desc({1, 1, p.units, 4, p.units}, f32, Tag::ldigo),
          memory::desc({1, 1, 4, p.units}, f32, Tag::ldgo),
          memory::desc({p.time, p.batch, p.units}, f32, Tag::tnc)};
}

memory::desc any_layout(const memory::desc& plain) {
  return memory::desc(plain.dims(), memory::data_type::f32, Tag::any);
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::lstm_forward::primitive_desc forward_pd(const Problem& p, dnnl::prop_kind kind) {
  const Descs d = descs(p);
  const auto direction = p.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                   : dnnl::rnn_direction::unidirectional_left2right;
  const dnnl::lstm_forward::desc desc(kind, direction, d.x, d.state, d.state, any_layout(d.kernel),
                                      any_layout(d.recurrent_kernel), d.bias, d.y, d.state,
                                      d.state);
  return {desc, user_scratchpad(), engine()};
}

struct Forward {
  dnnl::lstm_forward::primitive_desc pd;
  dnnl::lstm_forward primitive;
};

// The backward pass with the training forward pass it runs first.
struct Backward {
  Forward forward;
  dnnl::lstm_backward::primitive_desc pd;
  dnnl::lstm_backward primitive;
};

Forward make_forward(const Problem& p, dnnl::prop_kind kind) {
  dnnl::lstm_forward::primitive_desc pd = forward_pd(p, kind);
  return {pd, dnnl::lstm_forward(pd)};
}

Backward make_backward(const Problem& p) {
  Forward forward = make_forward(p, dnnl::prop_kind::forward_training);
  const Descs d = descs(p);
  const auto direction = p.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                   : dnnl::rnn_direction::unidirectional_left2right;
  const memory::desc kernel = any_layout(d.kernel), recurrent = any_layout(d.recurrent_kernel);
  const dnnl::lstm_backward::desc desc(
      dnnl::prop_kind::backward, direction, d.x, d.state, d.state, kernel, recurrent, d.bias, d.y,
      d.state, d.state, d.x, d.state, d.state, kernel, recurrent, d.bias, d.y, d.state, d.state);
  dnnl::lstm_backward::primitive_desc pd(desc, user_scratchpad(), engine(), forward.pd);
  return {std::move(forward), pd, dnnl::lstm_backward(pd)};
}

// This thread's primitives for the problem (kind 0: forward, 1: backward)
// at the intra-op thread count, made on first use; past 256 geometries the
// cache starts over.
template <class Primitives, class Make>
const Primitives& cached(const Problem& p, int64_t kind, Make make) {
  using Key = std::array<int64_t, 7>;
  thread_local std::map<Key, Primitives> cache;
  const Key key{kind, p.time, p.batch, p.input, p.units, int64_t(p.reverse), intra_op_threads()};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();
  return cache.emplace(key, make()).first->second;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(engine());
  return stream;
}

// The caller's tensor at `data` in the primitive's layout `wanted`:
// itself, or reordered into this thread's buffer of `slot`.
memory bind(const memory::desc& plain, const memory::desc& wanted, const float* data,
            onednn::ScratchSlot slot) {
  memory caller = wrap(plain, data);
  if (plain == wanted) return caller;
  memory bound = wrap(wanted, scratch(slot, wanted.get_size()));
  dnnl::reorder(caller, bound).execute(thread_stream(), caller, bound);
  return bound;
}

memory scratchpad(const memory::desc& desc) {
  return wrap(desc, scratch(onednn::kConvScratchpad, desc.get_size()));
}

// The arguments every pass reads: the inputs, the weights bound to `pd`'s
// layouts.
template <class PrimitiveDesc>
Args input_args(const Descs& d, const PrimitiveDesc& pd, const Inputs<float>& in) {
  return {{DNNL_ARG_SRC_LAYER, wrap(d.x, in.x)},
          {DNNL_ARG_SRC_ITER, wrap(d.state, in.h0)},
          {DNNL_ARG_SRC_ITER_C, wrap(d.state, in.c0)},
          {DNNL_ARG_WEIGHTS_LAYER,
           bind(d.kernel, pd.weights_layer_desc(), in.kernel, onednn::kLstmWeightsLayer)},
          {DNNL_ARG_WEIGHTS_ITER, bind(d.recurrent_kernel, pd.weights_iter_desc(),
                                       in.recurrent_kernel, onednn::kLstmWeightsIter)},
          {DNNL_ARG_BIAS, wrap(d.bias, in.bias)},
          {DNNL_ARG_SCRATCHPAD, scratchpad(pd.scratchpad_desc())}};
}

// A weight's gradient, which oneDNN adds to: zeros in the primitive's
// layout, at `out` where that is the caller's.
memory zeroed_gradient(const memory::desc& plain, const memory::desc& wanted, float* out,
                       onednn::ScratchSlot slot) {
  void* data = plain == wanted ? static_cast<void*>(out) : scratch(slot, wanted.get_size());
  std::memset(data, 0, wanted.get_size());
  return wrap(wanted, data);
}

// The gradient `computed` into the caller's layout at `out`, where it is not there yet.
void unbind(memory computed, const memory::desc& plain, float* out) {
  if (computed.get_data_handle() == out) return;
  memory caller = wrap(plain, out);
  dnnl::reorder(computed, caller).execute(thread_stream(), computed, caller);
}

}  // namespace

void forward_onednn(const Problem& p, const Inputs<float>& in, const Outputs<float>& out) {
  sync_onednn_threads();
  const Descs d = descs(p);
  const Forward& f =
      cached<Forward>(p, 0, [&] { return make_forward(p, dnnl::prop_kind::forward_inference); });
  Args args = input_args(d, f.pd, in);
  args.insert({{DNNL_ARG_DST_LAYER, wrap(d.y, out.y)},
               {DNNL_ARG_DST_ITER, wrap(d.state, out.h)},
               {DNNL_ARG_DST_ITER_C, wrap(d.state, out.c)}});
  f.primitive.execute(thread_stream(), args);
  thread_stream().wait();
}

void backward_onednn(const Problem& p, const Inputs<float>& in, const float* dy, const float* dh,
                     const float* dc, const Gradients<float>& grads) {
  sync_onednn_threads();
  const Descs d = descs(p);
  const Backward& b = cached<Backward>(p, 1, [&] { return make_backward(p); });
  dnnl::stream& stream = thread_stream();
  // The forward pass, for its outputs and workspace.
  const size_t state_bytes = d.state.get_size();
  char* outputs =
      static_cast<char*>(scratch(onednn::kLstmForwardOutputs, d.y.get_size() + 2 * state_bytes));
  const memory y = wrap(d.y, outputs), h = wrap(d.state, outputs + d.y.get_size()),
               c = wrap(d.state, outputs + d.y.get_size() + state_bytes);
  const memory workspace =
      wrap(b.forward.pd.workspace_desc(),
           scratch(onednn::kLstmWorkspace, b.forward.pd.workspace_desc().get_size()));
  Args forward_args = input_args(d, b.forward.pd, in);
  forward_args.insert({{DNNL_ARG_DST_LAYER, y},
                       {DNNL_ARG_DST_ITER, h},
                       {DNNL_ARG_DST_ITER_C, c},
                       {DNNL_ARG_WORKSPACE, workspace}});
  b.forward.primitive.execute(stream, forward_args);
  stream.wait();  // before the backward pass's binding reuses the scratch buffers
  // The backward pass.
  Args args = input_args(d, b.pd, in);
  const memory kernel_grad = zeroed_gradient(d.kernel, b.pd.diff_weights_layer_desc(), grads.kernel,
                                             onednn::kLstmDiffWeightsLayer);
  const memory recurrent_grad =
      zeroed_gradient(d.recurrent_kernel, b.pd.diff_weights_iter_desc(), grads.recurrent_kernel,
                      onednn::kLstmDiffWeightsIter);
  std::memset(grads.bias, 0, d.bias.get_size());
  args.insert({{DNNL_ARG_DST_LAYER, y},
               {DNNL_ARG_DST_ITER, h},
               {DNNL_ARG_DST_ITER_C, c},
               {DNNL_ARG_WORKSPACE, workspace},
               {DNNL_ARG_DIFF_DST_LAYER, wrap(d.y, dy)},
               {DNNL_ARG_DIFF_DST_ITER, wrap(d.state, dh)},
               {DNNL_ARG_DIFF_DST_ITER_C, wrap(d.state, dc)},
               {DNNL_ARG_DIFF_SRC_LAYER, wrap(d.x, grads.x)},
               {DNNL_ARG_DIFF_SRC_ITER, wrap(d.state, grads.h0)},
               {DNNL_ARG_DIFF_SRC_ITER_C, wrap(d.state, grads.c0)},
               {DNNL_ARG_DIFF_WEIGHTS_LAYER, kernel_grad},
               {DNNL_ARG_DIFF_WEIGHTS_ITER, recurrent_grad},
               {DNNL_ARG_DIFF_BIAS, wrap(d.bias, grads.bias)}});
  b.primitive.execute(stream, args);
  unbind(kernel_grad, d.kernel, grads.kernel);
  unbind(recurrent_grad, d.recurrent_kernel, grads.recurrent_kernel);
  stream.wait();
}

#else

namespace {
[[noreturn]] void unavailable() {
  throw UnimplementedError("lstm_sequence: this build has no oneDNN (AG_GEMM=openblas)");
}
}  // namespace

void forward_onednn(const Problem&, const Inputs<float>&, const Outputs<float>&) {
  unavailable();
}
void backward_onednn(const Problem&, const Inputs<float>&, const float*, const float*, const float*,
                     const Gradients<float>&) {
  unavailable();
}

#endif

}  // namespace ag::ops::lstm
