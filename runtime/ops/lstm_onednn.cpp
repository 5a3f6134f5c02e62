// An LSTM sequence on oneDNN's lstm_forward and lstm_backward primitives
// (float32); see lstm_kernels.h.
//
// The caller's tensors are oneDNN's plain layouts as they are: x and y
// `tnc`, the states `ldnc` (one layer, one direction), kernel and
// recurrent_kernel `ldigo`, the bias `ldgo`. The weights are declared `any`,
// so that oneDNN may pick its brgemm kernel's layout (an LSTM of 128 units
// on a batch of 16: forward 495 against 720 us on the plain layout); each
// call then reorders them, a pass over the weights. The reorders and the
// arguments' memory objects are made with the primitive, once per geometry
// and thread; a call points them at its buffers (making them on every call
// cost 6 us of an 11 us forward of 8 steps, batch 1, 32 units). The
// backward pass needs the forward's workspace (each step's gates and cell
// states), which the op does not keep: it runs the forward pass again.
#include <array>
#include <cstring>
#include <map>
#include <optional>
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

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(engine());
  return stream;
}

// A weight (or a weight's gradient) of a pass: a memory object over the
// caller's plain layout and, where the primitive wants another, one over
// this thread's buffer of `slot` and the reorder between them, all made
// with the primitive.
struct Weight {
  memory caller, bound;
  std::optional<dnnl::reorder> reorder;
  onednn::ScratchSlot slot;

  Weight(const memory::desc& plain, const memory::desc& wanted, onednn::ScratchSlot slot,
         bool gradient)
      : caller(plain, engine(), DNNL_MEMORY_NONE), bound(caller), slot(slot) {
    if (plain == wanted) return;
    bound = memory(wanted, engine(), DNNL_MEMORY_NONE);
    reorder = gradient ? dnnl::reorder(bound, caller) : dnnl::reorder(caller, bound);
  }

  // Points it at the caller's buffer: the weight reordered into the
  // primitive's layout, or for a gradient, which oneDNN adds to, zeros there.
  void bind(const float* data, bool gradient) {
    caller.set_data_handle(const_cast<float*>(data));
    if (reorder) bound.set_data_handle(scratch(slot, bound.get_desc().get_size()));
    if (gradient) {
      std::memset(bound.get_data_handle(), 0, bound.get_desc().get_size());
    } else if (reorder) {
      reorder->execute(thread_stream(), caller, bound);
    }
  }

  // A gradient computed in the primitive's layout, into the caller's.
  void unbind() {
    if (reorder) reorder->execute(thread_stream(), bound, caller);
  }
};

// One pass: its primitive, and its arguments' memory objects, which each
// call points at its buffers.
struct Pass {
  dnnl::primitive primitive;
  memory::desc scratchpad, workspace;
  Args args;
  std::vector<Weight> weights;  // kernel and recurrent_kernel, then their gradients

  template <class PrimitiveDesc>
  Pass(const PrimitiveDesc& pd, const Descs& d, bool gradients)
      : primitive(pd), scratchpad(pd.scratchpad_desc()), workspace(pd.workspace_desc()) {
    auto none = [](const memory::desc& desc) { return memory(desc, engine(), DNNL_MEMORY_NONE); };
    for (int arg : {DNNL_ARG_SRC_LAYER, DNNL_ARG_DIFF_SRC_LAYER}) args[arg] = none(d.x);
    for (int arg : {DNNL_ARG_DST_LAYER, DNNL_ARG_DIFF_DST_LAYER}) args[arg] = none(d.y);
    for (int arg : {DNNL_ARG_SRC_ITER, DNNL_ARG_SRC_ITER_C, DNNL_ARG_DST_ITER, DNNL_ARG_DST_ITER_C,
                    DNNL_ARG_DIFF_SRC_ITER, DNNL_ARG_DIFF_SRC_ITER_C, DNNL_ARG_DIFF_DST_ITER,
                    DNNL_ARG_DIFF_DST_ITER_C})
      args[arg] = none(d.state);
    for (int arg : {DNNL_ARG_BIAS, DNNL_ARG_DIFF_BIAS}) args[arg] = none(d.bias);
    args[DNNL_ARG_SCRATCHPAD] = none(scratchpad);
    args[DNNL_ARG_WORKSPACE] = none(workspace);
    weights.emplace_back(d.kernel, pd.weights_layer_desc(), onednn::kLstmWeightsLayer, false);
    weights.emplace_back(d.recurrent_kernel, pd.weights_iter_desc(), onednn::kLstmWeightsIter,
                         false);
    args[DNNL_ARG_WEIGHTS_LAYER] = weights[0].bound;
    args[DNNL_ARG_WEIGHTS_ITER] = weights[1].bound;
    if (!gradients) return;
    weights.emplace_back(d.kernel, pd.diff_weights_layer_desc(), onednn::kLstmDiffWeightsLayer,
                         true);
    weights.emplace_back(d.recurrent_kernel, pd.diff_weights_iter_desc(),
                         onednn::kLstmDiffWeightsIter, true);
    args[DNNL_ARG_DIFF_WEIGHTS_LAYER] = weights[2].bound;
    args[DNNL_ARG_DIFF_WEIGHTS_ITER] = weights[3].bound;
  }

  void set(int arg, const void* data) { args.at(arg).set_data_handle(const_cast<void*>(data)); }

  // The inputs every pass reads, and this thread's scratchpad.
  void bind_inputs(const Inputs<float>& in) {
    set(DNNL_ARG_SRC_LAYER, in.x);
    set(DNNL_ARG_SRC_ITER, in.h0);
    set(DNNL_ARG_SRC_ITER_C, in.c0);
    set(DNNL_ARG_BIAS, in.bias);
    weights[0].bind(in.kernel, false);
    weights[1].bind(in.recurrent_kernel, false);
    set(DNNL_ARG_SCRATCHPAD, scratch(onednn::kConvScratchpad, scratchpad.get_size()));
  }

  void execute() {
    primitive.execute(thread_stream(), args);
    thread_stream().wait();
  }
};

Pass make_forward(const Problem& p, dnnl::prop_kind kind) {
  return Pass(forward_pd(p, kind), descs(p), false);
}

// The backward pass with the training forward pass it runs first.
struct Backward {
  Pass forward, backward;
};

Backward make_backward(const Problem& p) {
  const dnnl::lstm_forward::primitive_desc hint = forward_pd(p, dnnl::prop_kind::forward_training);
  const Descs d = descs(p);
  const auto direction = p.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                   : dnnl::rnn_direction::unidirectional_left2right;
  const memory::desc kernel = any_layout(d.kernel), recurrent = any_layout(d.recurrent_kernel);
  const dnnl::lstm_backward::desc desc(
      dnnl::prop_kind::backward, direction, d.x, d.state, d.state, kernel, recurrent, d.bias, d.y,
      d.state, d.state, d.x, d.state, d.state, kernel, recurrent, d.bias, d.y, d.state, d.state);
  const dnnl::lstm_backward::primitive_desc pd(desc, user_scratchpad(), engine(), hint);
  return {Pass(hint, d, false), Pass(pd, d, true)};
}

// This thread's primitives for the problem (kind 0: forward, 1: backward)
// at the intra-op thread count, made on first use; past 256 geometries the
// cache starts over.
template <class Primitives, class Make>
Primitives& cached(const Problem& p, int64_t kind, Make make) {
  using Key = std::array<int64_t, 7>;
  thread_local std::map<Key, Primitives> cache;
  const Key key{kind, p.time, p.batch, p.input, p.units, int64_t(p.reverse), intra_op_threads()};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();
  return cache.emplace(key, make()).first->second;
}

}  // namespace

void forward_onednn(const Problem& p, const Inputs<float>& in, const Outputs<float>& out) {
  sync_onednn_threads();
  Pass& f = cached<Pass>(p, 0, [&] { return make_forward(p, dnnl::prop_kind::forward_inference); });
  f.bind_inputs(in);
  f.set(DNNL_ARG_DST_LAYER, out.y);
  f.set(DNNL_ARG_DST_ITER, out.h);
  f.set(DNNL_ARG_DST_ITER_C, out.c);
  f.execute();
}

void backward_onednn(const Problem& p, const Inputs<float>& in, const float* dy, const float* dh,
                     const float* dc, const Gradients<float>& grads) {
  sync_onednn_threads();
  Backward& b = cached<Backward>(p, 1, [&] { return make_backward(p); });
  // The forward pass, for its outputs and workspace, into this thread's buffers.
  const size_t y_bytes = b.forward.args.at(DNNL_ARG_DST_LAYER).get_desc().get_size();
  const size_t state_bytes = b.forward.args.at(DNNL_ARG_DST_ITER).get_desc().get_size();
  char* outputs =
      static_cast<char*>(scratch(onednn::kLstmForwardOutputs, y_bytes + 2 * state_bytes));
  void* workspace = scratch(onednn::kLstmWorkspace, b.forward.workspace.get_size());
  const void* forward_outputs[3] = {outputs, outputs + y_bytes, outputs + y_bytes + state_bytes};
  const int output_args[3] = {DNNL_ARG_DST_LAYER, DNNL_ARG_DST_ITER, DNNL_ARG_DST_ITER_C};
  b.forward.bind_inputs(in);
  for (int k = 0; k < 3; ++k) b.forward.set(output_args[k], forward_outputs[k]);
  b.forward.set(DNNL_ARG_WORKSPACE, workspace);
  b.forward.execute();
  // The backward pass (its scratch buffers bound after the forward ran).
  Pass& pass = b.backward;
  pass.bind_inputs(in);
  for (int k = 0; k < 3; ++k) pass.set(output_args[k], forward_outputs[k]);
  pass.set(DNNL_ARG_WORKSPACE, workspace);
  pass.set(DNNL_ARG_DIFF_DST_LAYER, dy);
  pass.set(DNNL_ARG_DIFF_DST_ITER, dh);
  pass.set(DNNL_ARG_DIFF_DST_ITER_C, dc);
  pass.set(DNNL_ARG_DIFF_SRC_LAYER, grads.x);
  pass.set(DNNL_ARG_DIFF_SRC_ITER, grads.h0);
  pass.set(DNNL_ARG_DIFF_SRC_ITER_C, grads.c0);
  pass.weights[2].bind(grads.kernel, true);
  pass.weights[3].bind(grads.recurrent_kernel, true);
  std::memset(grads.bias, 0, 4 * size_t(p.units) * sizeof(float));
  pass.set(DNNL_ARG_DIFF_BIAS, grads.bias);
  pass.execute();
  pass.weights[2].unbind();
  pass.weights[3].unbind();
  thread_stream().wait();
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
