// The recurrent sequence ops on oneDNN's RNN primitives (float32; see
// rnn_kernels.h): lstm_forward / lstm_backward, lbr_gru (Keras's GRU with
// reset_after), gru (without) and vanilla_rnn (the simple RNN).
//
// The caller's tensors are oneDNN's plain layouts as they are: x and y
// `tnc`, the states `ldnc` (one layer, one direction), kernel and
// recurrent_kernel `ldigo` (Keras's gate orders are oneDNN's), the bias
// `ldgo`, except a GRU's: Keras's two rows become oneDNN's bias (z's and r's
// summed; h's input and recurrent parts the fourth gate of lbr_gru, or
// summed for gru) in a buffer of the thread's, and its gradient back. The
// weights are declared `any`, so that oneDNN may pick its brgemm kernel's
// layout (an LSTM of 128 units on a batch of 16: forward 495 against 720 us
// on the plain layout); each call then reorders them, a pass over the
// weights, except in a plan step whose weights are constants (a loaded
// model's), where PreparedForward reordered them once when the plan was
// built. The reorders and the arguments' memory objects are made with
// the primitive, once per geometry and thread; a call points them at its
// buffers (making them on every call cost 6 us of an 11 us LSTM forward of
// 8 steps, batch 1, 32 units). The backward pass needs the forward's
// workspace (each step's gates and states), which the op does not keep: it
// runs the forward pass again.
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ag/error.h"
#include "ag/threading.h"
#include "ops/gemm.h"
#include "ops/rnn_kernels.h"

#if AG_GEMM_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/onednn_primitives.h"
#endif

namespace ag::ops::rnn_kernels {

#if AG_GEMM_ONEDNN
namespace {

using dnnl::memory;
using onednn::engine;
using onednn::scratch;
using Tag = memory::format_tag;
using Args = std::unordered_map<int, memory>;

// oneDNN's bias gates: lbr_gru has a fourth, the candidate's recurrent bias.
int64_t bias_gates(Cell cell) {
  return cell == Cell::gru ? 4 : gates(cell);
}

// The caller's layouts of the problem's tensors.
struct Descs {
  memory::desc x, state, kernel, recurrent_kernel, bias, y;
};

Descs descs(const Problem& p) {
  const auto f32 = memory::data_type::f32;
  const int64_t g = gates(p.cell);
  return {memory::desc({p.time, p.batch, p.input}, f32, Tag::tnc),
          memory::desc({1, 1, p.batch, p.units}, f32, Tag::ldnc),
          memory::desc({1, 1, p.input, g, p.units}, f32, Tag::ldigo),
          memory::desc({1, 1, p.units, g, p.units}, f32, Tag::ldigo),
          memory::desc({1, 1, bias_gates(p.cell), p.units}, f32, Tag::ldgo),
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

dnnl::rnn_direction direction(const Problem& p) {
  return p.reverse ? dnnl::rnn_direction::unidirectional_right2left
                   : dnnl::rnn_direction::unidirectional_left2right;
}

dnnl::algorithm activation(Cell cell) {
  return cell == Cell::rnn_relu      ? dnnl::algorithm::eltwise_relu
         : cell == Cell::rnn_sigmoid ? dnnl::algorithm::eltwise_logistic
                                     : dnnl::algorithm::eltwise_tanh;
}

// The forward primitive's descriptor of a cell's primitive kind: the
// LSTM's has the cell state's arguments, the simple RNN's an activation.
template <class Primitive>
typename Primitive::primitive_desc forward_pd_of(const Problem& p, dnnl::prop_kind kind) {
  const Descs d = descs(p);
  const memory::desc kernel = any_layout(d.kernel), recurrent = any_layout(d.recurrent_kernel);
  if constexpr (std::is_same_v<Primitive, dnnl::lstm_forward>) {
    const typename Primitive::desc desc(kind, direction(p), d.x, d.state, d.state, kernel,
                                        recurrent, d.bias, d.y, d.state, d.state);
    return {desc, user_scratchpad(), engine()};
  } else if constexpr (std::is_same_v<Primitive, dnnl::vanilla_rnn_forward>) {
    const typename Primitive::desc desc(kind, activation(p.cell), direction(p), d.x, d.state,
                                        kernel, recurrent, d.bias, d.y, d.state);
    return {desc, user_scratchpad(), engine()};
  } else {
    const typename Primitive::desc desc(kind, direction(p), d.x, d.state, kernel, recurrent, d.bias,
                                        d.y, d.state);
    return {desc, user_scratchpad(), engine()};
  }
}

template <class Primitive, class Hint>
typename Primitive::primitive_desc backward_pd_of(const Problem& p, const Hint& hint) {
  const Descs d = descs(p);
  const memory::desc kernel = any_layout(d.kernel), recurrent = any_layout(d.recurrent_kernel);
  const auto kind = dnnl::prop_kind::backward;
  if constexpr (std::is_same_v<Primitive, dnnl::lstm_backward>) {
    const typename Primitive::desc desc(kind, direction(p), d.x, d.state, d.state, kernel,
                                        recurrent, d.bias, d.y, d.state, d.state, d.x, d.state,
                                        d.state, kernel, recurrent, d.bias, d.y, d.state, d.state);
    return {desc, user_scratchpad(), engine(), hint};
  } else if constexpr (std::is_same_v<Primitive, dnnl::vanilla_rnn_backward>) {
    const typename Primitive::desc desc(kind, activation(p.cell), direction(p), d.x, d.state,
                                        kernel, recurrent, d.bias, d.y, d.state, d.x, d.state,
                                        kernel, recurrent, d.bias, d.y, d.state);
    return {desc, user_scratchpad(), engine(), hint};
  } else {
    const typename Primitive::desc desc(kind, direction(p), d.x, d.state, kernel, recurrent, d.bias,
                                        d.y, d.state, d.x, d.state, kernel, recurrent, d.bias, d.y,
                                        d.state);
    return {desc, user_scratchpad(), engine(), hint};
  }
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

// The bias in oneDNN's layout: the caller's, or a GRU's converted from
// Keras's two rows [2, 3 * units] into this thread's buffer.
const float* onednn_bias(const Problem& p, const float* keras) {
  if (!is_gru(p.cell)) return keras;
  thread_local std::vector<float> bias;
  const int64_t u = p.units, width = 3 * u;
  bias.assign(size_t(bias_gates(p.cell) * u), 0.0f);
  const int64_t summed = p.cell == Cell::gru ? 2 * u : width;  // lbr_gru keeps h's apart
  for (int64_t j = 0; j < width; ++j)
    bias[size_t(j)] = keras[j] + (j < summed ? keras[width + j] : 0.0f);
  if (p.cell == Cell::gru)
    std::copy(keras + width + 2 * u, keras + 2 * width, bias.begin() + width);
  return bias.data();
}

// oneDNN's bias gradient (in `onednn`) as Keras's rows: where the two biases
// add up, each has the sum's gradient.
void keras_bias_gradient(const Problem& p, const float* onednn, float* keras) {
  const int64_t u = p.units, width = 3 * u;
  std::copy(onednn, onednn + width, keras);
  std::copy(onednn, onednn + width, keras + width);
  if (p.cell == Cell::gru) std::copy(onednn + width, onednn + width + u, keras + width + 2 * u);
}

// One pass: its primitive, and its arguments' memory objects, which each
// call points at its buffers.
struct Pass {
  dnnl::primitive primitive;
  memory::desc scratchpad, workspace;
  Args args;
  std::vector<Weight> weights;  // kernel and recurrent_kernel, then their gradients

  template <class PrimitiveDesc>
  Pass(const PrimitiveDesc& pd, const Problem& p, bool gradients)
      : primitive(pd), scratchpad(pd.scratchpad_desc()), workspace(pd.workspace_desc()) {
    const Descs d = descs(p);
    auto none = [](const memory::desc& desc) { return memory(desc, engine(), DNNL_MEMORY_NONE); };
    for (int arg : {DNNL_ARG_SRC_LAYER, DNNL_ARG_DIFF_SRC_LAYER}) args[arg] = none(d.x);
    for (int arg : {DNNL_ARG_DST_LAYER, DNNL_ARG_DIFF_DST_LAYER}) args[arg] = none(d.y);
    for (int arg :
         {DNNL_ARG_SRC_ITER, DNNL_ARG_DST_ITER, DNNL_ARG_DIFF_SRC_ITER, DNNL_ARG_DIFF_DST_ITER})
      args[arg] = none(d.state);
    if (p.cell == Cell::lstm) {
      for (int arg : {DNNL_ARG_SRC_ITER_C, DNNL_ARG_DST_ITER_C, DNNL_ARG_DIFF_SRC_ITER_C,
                      DNNL_ARG_DIFF_DST_ITER_C})
        args[arg] = none(d.state);
    }
    for (int arg : {DNNL_ARG_BIAS, DNNL_ARG_DIFF_BIAS}) args[arg] = none(d.bias);
    args[DNNL_ARG_SCRATCHPAD] = none(scratchpad);
    args[DNNL_ARG_WORKSPACE] = none(workspace);
    weights.emplace_back(d.kernel, pd.weights_layer_desc(), onednn::kRnnWeightsLayer, false);
    weights.emplace_back(d.recurrent_kernel, pd.weights_iter_desc(), onednn::kRnnWeightsIter,
                         false);
    args[DNNL_ARG_WEIGHTS_LAYER] = weights[0].bound;
    args[DNNL_ARG_WEIGHTS_ITER] = weights[1].bound;
    if (!gradients) return;
    weights.emplace_back(d.kernel, pd.diff_weights_layer_desc(), onednn::kRnnDiffWeightsLayer,
                         true);
    weights.emplace_back(d.recurrent_kernel, pd.diff_weights_iter_desc(),
                         onednn::kRnnDiffWeightsIter, true);
    args[DNNL_ARG_DIFF_WEIGHTS_LAYER] = weights[2].bound;
    args[DNNL_ARG_DIFF_WEIGHTS_ITER] = weights[3].bound;
  }

  void set(int arg, const void* data) { args.at(arg).set_data_handle(const_cast<void*>(data)); }

  // The inputs every pass reads, and this thread's scratchpad.
  void bind_inputs(const Problem& p, const Inputs<float>& in) {
    bind_states(p, in);
    set(DNNL_ARG_BIAS, onednn_bias(p, in.bias));
    weights[0].bind(in.kernel, false);
    weights[1].bind(in.recurrent_kernel, false);
  }

  // x, the initial states and this thread's scratchpad.
  void bind_states(const Problem& p, const Inputs<float>& in) {
    set(DNNL_ARG_SRC_LAYER, in.x);
    set(DNNL_ARG_SRC_ITER, in.h0);
    if (p.cell == Cell::lstm) set(DNNL_ARG_SRC_ITER_C, in.c0);
    set(DNNL_ARG_SCRATCHPAD, scratch(onednn::kConvScratchpad, scratchpad.get_size()));
  }

  void execute() {
    primitive.execute(thread_stream(), args);
    thread_stream().wait();
  }
};

// The backward pass with the training forward pass it runs first.
struct Backward {
  Pass forward, backward;
};

template <class Forward, class BackwardPrimitive>
struct Primitives {
  static Pass forward(const Problem& p, dnnl::prop_kind kind) {
    return Pass(forward_pd_of<Forward>(p, kind), p, false);
  }
  static Backward backward(const Problem& p) {
    const auto hint = forward_pd_of<Forward>(p, dnnl::prop_kind::forward_training);
    return {Pass(hint, p, false), Pass(backward_pd_of<BackwardPrimitive>(p, hint), p, true)};
  }
};

// Calls f with the Primitives of the problem's cell.
template <class F>
auto with_primitives(const Problem& p, F f) {
  switch (p.cell) {
    case Cell::lstm:
      return f(Primitives<dnnl::lstm_forward, dnnl::lstm_backward>{});
    case Cell::gru:
      return f(Primitives<dnnl::lbr_gru_forward, dnnl::lbr_gru_backward>{});
    case Cell::gru_reset_before:
      return f(Primitives<dnnl::gru_forward, dnnl::gru_backward>{});
    default:
      return f(Primitives<dnnl::vanilla_rnn_forward, dnnl::vanilla_rnn_backward>{});
  }
}

// This thread's primitives for the problem (kind 0: forward, 1: backward)
// at the intra-op thread count, made on first use; past 256 geometries the
// cache starts over.
template <class Made, class Make>
Made& cached(const Problem& p, int64_t kind, Make make) {
  using Key = std::array<int64_t, 8>;
  thread_local std::map<Key, Made> cache;
  const Key key{kind,
                p.time,
                p.batch,
                p.input,
                p.units,
                int64_t(p.reverse),
                int64_t(p.cell),
                intra_op_threads()};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();
  return cache.emplace(key, make()).first->second;
}

// This thread's forward (inference) pass for the problem.
Pass& forward_pass(const Problem& p) {
  return cached<Pass>(p, 0, [&] {
    return with_primitives(
        p, [&](auto made) { return made.forward(p, dnnl::prop_kind::forward_inference); });
  });
}

void bind_outputs(Pass& f, const Problem& p, const Outputs<float>& out) {
  f.set(DNNL_ARG_DST_LAYER, out.y);
  f.set(DNNL_ARG_DST_ITER, out.h);
  if (p.cell == Cell::lstm) f.set(DNNL_ARG_DST_ITER_C, out.c);
}

}  // namespace

void forward_onednn(const Problem& p, const Inputs<float>& in, const Outputs<float>& out) {
  sync_onednn_threads();
  Pass& f = forward_pass(p);
  f.bind_inputs(p, in);
  bind_outputs(f, p, out);
  f.execute();
}

class PreparedForward {
 public:
  // Reorders the weights into the layouts of this thread's forward
  // primitive for the problem, which a call on any thread has too (the
  // same problem and thread count give the same primitive).
  PreparedForward(const Problem& p, const float* kernel, const float* recurrent_kernel,
                  const float* bias)
      : problem_(p), threads_(intra_op_threads()) {
    Pass& f = forward_pass(p);
    dnnl::stream stream(engine());
    const float* given[2] = {kernel, recurrent_kernel};
    for (int k = 0; k < 2; ++k) {
      const Weight& w = f.weights[size_t(k)];
      weights_[k] = memory(w.bound.get_desc(), engine());
      memory caller(w.caller.get_desc(), engine(), const_cast<float*>(given[k]));
      dnnl::reorder(caller, weights_[k]).execute(stream, caller, weights_[k]);
    }
    stream.wait();
    if (bias) {
      const float* converted = onednn_bias(p, bias);
      bias_.assign(converted, converted + bias_gates(p.cell) * p.units);
    }
  }

  const Problem& problem() const { return problem_; }
  int threads() const { return threads_; }

  void run(const Inputs<float>& in, const Outputs<float>& out) const {
    Pass& f = forward_pass(problem_);
    f.bind_states(problem_, in);
    f.set(DNNL_ARG_BIAS, bias_.empty() ? onednn_bias(problem_, in.bias) : bias_.data());
    for (int k = 0; k < 2; ++k)
      f.weights[size_t(k)].bound.set_data_handle(weights_[k].get_data_handle());
    bind_outputs(f, problem_, out);
    f.execute();
  }

 private:
  Problem problem_;
  int threads_;
  memory weights_[2];
  std::vector<float> bias_;
};

std::shared_ptr<const PreparedForward> prepare_forward(const Problem& p, const float* kernel,
                                                       const float* recurrent_kernel,
                                                       const float* bias) {
  sync_onednn_threads();
  const Pass& f = forward_pass(p);
  if (!f.weights[0].reorder && !f.weights[1].reorder) return nullptr;
  return std::make_shared<const PreparedForward>(p, kernel, recurrent_kernel, bias);
}

// After ag::set_intra_op_threads changed the count, the unprepared pass.
void forward_onednn(const PreparedForward& prepared, const Inputs<float>& in,
                    const Outputs<float>& out) {
  sync_onednn_threads();
  if (prepared.threads() != intra_op_threads()) return forward_onednn(prepared.problem(), in, out);
  prepared.run(in, out);
}

void backward_onednn(const Problem& p, const Inputs<float>& in, const float* dy, const float* dh,
                     const float* dc, const Gradients<float>& grads) {
  sync_onednn_threads();
  Backward& b = cached<Backward>(
      p, 1, [&] { return with_primitives(p, [&](auto made) { return made.backward(p); }); });
  const bool lstm = p.cell == Cell::lstm;
  // The forward pass, for its outputs and workspace, into this thread's buffers.
  const size_t y_bytes = b.forward.args.at(DNNL_ARG_DST_LAYER).get_desc().get_size();
  const size_t state_bytes = b.forward.args.at(DNNL_ARG_DST_ITER).get_desc().get_size();
  char* outputs =
      static_cast<char*>(scratch(onednn::kRnnForwardOutputs, y_bytes + 2 * state_bytes));
  void* workspace = scratch(onednn::kRnnWorkspace, b.forward.workspace.get_size());
  const void* forward_outputs[3] = {outputs, outputs + y_bytes, outputs + y_bytes + state_bytes};
  const int output_args[3] = {DNNL_ARG_DST_LAYER, DNNL_ARG_DST_ITER, DNNL_ARG_DST_ITER_C};
  const int num_outputs = lstm ? 3 : 2;
  b.forward.bind_inputs(p, in);
  for (int k = 0; k < num_outputs; ++k) b.forward.set(output_args[k], forward_outputs[k]);
  b.forward.set(DNNL_ARG_WORKSPACE, workspace);
  b.forward.execute();
  // The backward pass (its scratch buffers bound after the forward ran).
  Pass& pass = b.backward;
  pass.bind_inputs(p, in);
  for (int k = 0; k < num_outputs; ++k) pass.set(output_args[k], forward_outputs[k]);
  pass.set(DNNL_ARG_WORKSPACE, workspace);
  pass.set(DNNL_ARG_DIFF_DST_LAYER, dy);
  pass.set(DNNL_ARG_DIFF_DST_ITER, dh);
  pass.set(DNNL_ARG_DIFF_SRC_LAYER, grads.x);
  pass.set(DNNL_ARG_DIFF_SRC_ITER, grads.h0);
  if (lstm) {
    pass.set(DNNL_ARG_DIFF_DST_ITER_C, dc);
    pass.set(DNNL_ARG_DIFF_SRC_ITER_C, grads.c0);
  }
  pass.weights[2].bind(grads.kernel, true);
  pass.weights[3].bind(grads.recurrent_kernel, true);
  // The bias's gradient, which oneDNN adds to: a GRU's in a buffer of oneDNN's layout.
  thread_local std::vector<float> gru_bias;
  const size_t bias_floats = size_t(bias_gates(p.cell) * p.units);
  if (is_gru(p.cell)) gru_bias.resize(bias_floats);
  float* diff_bias = is_gru(p.cell) ? gru_bias.data() : grads.bias;
  std::memset(diff_bias, 0, bias_floats * sizeof(float));
  pass.set(DNNL_ARG_DIFF_BIAS, diff_bias);
  pass.execute();
  pass.weights[2].unbind();
  pass.weights[3].unbind();
  thread_stream().wait();
  if (is_gru(p.cell)) keras_bias_gradient(p, diff_bias, grads.bias);
}

#else

namespace {
[[noreturn]] void unavailable() {
  throw UnimplementedError(
      "the recurrent sequence ops: this build has no oneDNN (AG_GEMM=openblas)");
}
}  // namespace

void forward_onednn(const Problem&, const Inputs<float>&, const Outputs<float>&) {
  unavailable();
}
class PreparedForward {};
std::shared_ptr<const PreparedForward> prepare_forward(const Problem&, const float*, const float*,
                                                       const float*) {
  unavailable();
}
void forward_onednn(const PreparedForward&, const Inputs<float>&, const Outputs<float>&) {
  unavailable();
}
void backward_onednn(const Problem&, const Inputs<float>&, const float*, const float*, const float*,
                     const Gradients<float>&) {
  unavailable();
}

#endif

}  // namespace ag::ops::rnn_kernels
