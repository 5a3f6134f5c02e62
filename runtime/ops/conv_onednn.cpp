// Convolution on oneDNN's primitives (float32); see conv_kernels.h.
//
// Every tensor is declared `any`, so that oneDNN picks the layouts of its
// fastest kernel (blocks of 8 or 16 channels), and each call reorders its
// inputs from the caller's layout (NHWC or NCHW) and its result back: a
// pass over each tensor, which the blocked kernel repays many times on a
// convolution of any size (the guide's: 7.1 GFLOP, 7.9 M elements moved).
// Consecutive convolutions could keep the blocked layout between them; they
// do not yet. A backward pass takes the caller's layouts instead where
// oneDNN's kernel for them has wider vectors (compile()).
#include <bit>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ag/error.h"
#include "ops/conv_kernels.h"
#include "ops/gemm.h"

#if AG_GEMM_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/onednn_primitives.h"
#endif

namespace ag::ops::conv_onednn {

#if AG_GEMM_ONEDNN
namespace {

using dnnl::memory;
using onednn::engine;
using onednn::scratch;
using onednn::wrap;
using Dims = memory::dims;

// fused_forward: a forward with an epilogue (cached_fused), which keys it too.
enum class Pass : int64_t { forward, backward_input, backward_filter, fused_forward };

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

// One pass of one geometry: its primitive, and the layouts it reads and
// writes its three tensors in (src or diff_src, weights or diff_weights,
// dst or diff_dst).
struct Compiled {
  dnnl::primitive primitive;
  memory::desc src, filter, dst;
  memory::desc scratchpad;  // what a primitive made with a user scratchpad takes; else empty
  std::string implementation;
};

template <class Primitive, class PrimitiveDesc>
Compiled compiled_from(const PrimitiveDesc& pd, const memory::desc& src, const memory::desc& filter,
                       const memory::desc& dst) {
  return {Primitive(pd), src, filter, dst, pd.scratchpad_desc(), pd.impl_info_str()};
}

// The layouts a primitive is made for: `any` (oneDNN picks its kernel's,
// blocks of 8 or 16 channels) or the caller's activations (NHWC or NCHW,
// no reorders).
struct Layouts {
  memory::desc src, filter, dst;
};

Layouts any_layouts(const Descs& d) {
  return {any_like(d.src), any_like(d.filter), any_like(d.dst)};
}

// The caller's activations, the filter in oneDNN's layout (a filter is
// small: its reorder costs little).
Layouts caller_activations(const Descs& d) {
  return {d.src, any_like(d.filter), d.dst};
}

// On AVX2, `any`'s blocks of 8 channels run the guide's convolution in
// 96-116 ms against 158-188 in NHWC. A zero `bias` (oneDNN's "no bias")
// leaves it out.
dnnl::convolution_forward::desc forward_desc(const Descs& d, const Layouts& l, dnnl::prop_kind kind,
                                             const memory::desc& bias = {}) {
  return {kind,         dnnl::algorithm::convolution_direct,
          l.src,        l.filter,
          bias,         l.dst,
          d.strides,    d.dilations,
          d.pad_before, d.pad_after};
}

// One pass's primitive for `layouts`.
Compiled compile_for(const Descs& d, Pass pass, const Layouts& layouts) {
  const dnnl::convolution_forward::primitive_desc forward(
      forward_desc(d, layouts,
                   pass == Pass::forward ? dnnl::prop_kind::forward_inference
                                         : dnnl::prop_kind::forward_training),
      engine());
  if (pass == Pass::forward)
    return compiled_from<dnnl::convolution_forward>(forward, forward.src_desc(),
                                                    forward.weights_desc(), forward.dst_desc());
  if (pass == Pass::backward_input) {
    const dnnl::convolution_backward_data::desc desc(
        dnnl::algorithm::convolution_direct, layouts.src, layouts.filter, layouts.dst, d.strides,
        d.dilations, d.pad_before, d.pad_after);
    const dnnl::convolution_backward_data::primitive_desc pd(desc, engine(), forward);
    return compiled_from<dnnl::convolution_backward_data>(pd, pd.diff_src_desc(), pd.weights_desc(),
                                                          pd.diff_dst_desc());
  }
  const dnnl::convolution_backward_weights::desc desc(
      dnnl::algorithm::convolution_direct, layouts.src, layouts.filter, layouts.dst, d.strides,
      d.dilations, d.pad_before, d.pad_after);
  const dnnl::convolution_backward_weights::primitive_desc pd(desc, engine(), forward);
  return compiled_from<dnnl::convolution_backward_weights>(
      pd, pd.src_desc(), pd.diff_weights_desc(), pd.diff_dst_desc());
}

// The vector width an implementation oneDNN names runs ("jit:avx2": 256,
// "brgconv:avx512_core": 512); 0 where its name does not say.
int vector_bits(const std::string& implementation) {
  if (implementation.find("avx512") != std::string::npos) return 512;
  if (implementation.find("avx") != std::string::npos) return 256;
  if (implementation.find("sse") != std::string::npos) return 128;
  return 0;
}

// oneDNN's kernel for the blocked layouts is sometimes of narrower vectors
// than the machine has: on an AMD EPYC with AVX-512, the filter gradient of
// LeNet's 6-to-16-channel 5x5 convolution ran jit:avx2 on blocks of 8
// channels in 278 us, where the caller's NHWC runs jit:avx512_core in 148 us
// and needs no reorders. A backward pass takes the caller's layouts where
// their kernel's vectors are wider. The forward keeps oneDNN's pick: the
// conv-epilogues pass fuses into that primitive, and eager's unfused
// forward must give the same bits.
Compiled compile(const ConvGeometry& g, Pass pass) {
  const Descs d = descs(g);
  Compiled blocked = compile_for(d, pass, any_layouts(d));
  if (pass == Pass::forward) return blocked;
  try {
    Compiled direct = compile_for(d, pass, caller_activations(d));
    if (vector_bits(direct.implementation) > vector_bits(blocked.implementation)) return direct;
  } catch (const dnnl::error&) {
    // no kernel for the caller's layouts: the blocked one
  }
  return blocked;
}

// One tensor of a pass: the caller's memory where the primitive takes its
// layout, else a copy in the primitive's layout, reordered from the
// caller's before the pass (an input) or to it after (the result).
struct Bound {
  memory user, primitive;
  bool reordered;
};

Bound bind(onednn::ScratchSlot slot, const memory::desc& user, const memory::desc& wanted,
           const void* data) {
  memory caller = wrap(user, data);
  if (user == wanted) return {caller, caller, false};
  return {caller, wrap(wanted, scratch(slot, wanted.get_size())), true};
}

// Runs one pass: of src, filter and dst (in the caller's layouts), the
// pass's result is diff_src (backward_input), diff_weights (backward_filter)
// or dst (forward); the other two are read.
void run(const ConvGeometry& g, Pass pass, const void* src, const void* filter, const void* dst) {
  sync_onednn_threads();
  const Descs d = descs(g);
  const Compiled& c = onednn::cached<Compiled>(g, pass, compile);
  thread_local dnnl::stream stream(engine());
  Bound bound[3] = {bind(onednn::kConvSrc, d.src, c.src, src),
                    bind(onednn::kConvFilter, d.filter, c.filter, filter),
                    bind(onednn::kConvDst, d.dst, c.dst, dst)};
  const int result = pass == Pass::backward_input ? 0 : pass == Pass::backward_filter ? 1 : 2;
  for (int i = 0; i < 3; ++i)
    if (i != result && bound[i].reordered)
      dnnl::reorder(bound[i].user, bound[i].primitive)
          .execute(stream, bound[i].user, bound[i].primitive);
  const int args[3] = {pass == Pass::backward_input ? DNNL_ARG_DIFF_SRC : DNNL_ARG_SRC,
                       pass == Pass::backward_filter ? DNNL_ARG_DIFF_WEIGHTS : DNNL_ARG_WEIGHTS,
                       pass == Pass::forward ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST};
  c.primitive.execute(stream, {{args[0], bound[0].primitive},
                               {args[1], bound[1].primitive},
                               {args[2], bound[2].primitive}});
  if (bound[result].reordered)
    dnnl::reorder(bound[result].primitive, bound[result].user)
        .execute(stream, bound[result].primitive, bound[result].user);
  stream.wait();
}

// Runs f, a oneDNN call on g, with its errors as InternalErrors.
template <class F>
void checked(const ConvGeometry& g, F f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    throw InternalError("convolution: oneDNN failed (status " + std::to_string(int(e.status)) +
                        "): " + e.what() + ", on an input of " + g.input_shape().to_list_string() +
                        " and a filter of " + g.filter_shape().to_list_string());
  }
}

void run_checked(const ConvGeometry& g, Pass pass, const void* src, const void* filter,
                 const void* dst) {
  checked(g, [&] { run(g, pass, src, filter, dst); });
}

}  // namespace

// The epilogue's residual and activation as oneDNN post-ops (its bias is
// the primitive's own): the residual summed into a result that holds it.
dnnl::primitive_attr epilogue_attr(const ConvEpilogue& epilogue) {
  using Activation = ConvEpilogue::Activation;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops post_ops;
  if (epilogue.residual) post_ops.append_sum(1.0f);
  if (epilogue.activation == Activation::relu)
    post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  if (epilogue.activation == Activation::clip)
    post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, float(epilogue.lo),
                            float(epilogue.hi));
  attr.set_post_ops(post_ops);
  return attr;
}

namespace {

memory::desc bias_desc(const ConvGeometry& g) {
  return memory::desc({g.out_channels}, memory::data_type::f32, memory::format_tag::a);
}

// This thread's forward primitive of g with `epilogue` (onednn::cached,
// the epilogue in its key), made for the intra-op count, which it sets first.
const Compiled& cached_fused(const ConvGeometry& g, const ConvEpilogue& epilogue) {
  sync_onednn_threads();
  const std::initializer_list<int64_t> kind = {int64_t(Pass::fused_forward),
                                               epilogue.bias,
                                               epilogue.residual,
                                               int64_t(epilogue.activation),
                                               std::bit_cast<int64_t>(epilogue.lo),
                                               std::bit_cast<int64_t>(epilogue.hi)};
  return onednn::cached<Compiled>(g, kind, [&] {
    const dnnl::convolution_forward::primitive_desc pd(
        forward_desc(descs(g), any_layouts(descs(g)), dnnl::prop_kind::forward_inference,
                     epilogue.bias ? bias_desc(g) : memory::desc()),
        epilogue_attr(epilogue), engine());
    return compiled_from<dnnl::convolution_forward>(pd, pd.src_desc(), pd.weights_desc(),
                                                    pd.dst_desc());
  });
}

}  // namespace

class PreparedForward {
 public:
  // The primitive is this thread's cached one (shared, not copied: oneDNN
  // primitives run on several threads at once).
  PreparedForward(const ConvGeometry& g, const float* constant_filter, const ConvEpilogue& epilogue)
      : geometry_(g),
        descs_(descs(g)),
        epilogue_(epilogue),
        bias_(bias_desc(g)),
        threads_(intra_op_threads()),
        compiled_(cached_fused(g, epilogue)) {
    if (constant_filter) {
      filter_in_layout_ = memory(compiled_.filter, engine());
      dnnl::stream stream(engine());
      memory user = wrap(descs_.filter, constant_filter);
      dnnl::reorder(user, *filter_in_layout_).execute(stream, user, *filter_in_layout_);
      stream.wait();
    }
  }

  // The inputs and the result reordered through this thread's scratch, as
  // run() does; the filter only when it was not a constant. A residual is
  // summed into the result, which holds it first.
  void run(const float* x, const float* w, float* y, EpilogueTerms terms) const {
    sync_onednn_threads();
    thread_local dnnl::stream stream(engine());
    Bound src = bind(onednn::kConvSrc, descs_.src, compiled_.src, x),
          dst = bind(onednn::kConvDst, descs_.dst, compiled_.dst, y);
    if (epilogue_.residual) place_residual(stream, dst, terms.residual, y);
    memory filter = filter_in_layout_ ? *filter_in_layout_ : memory();
    if (!filter_in_layout_) {
      Bound bound = bind(onednn::kConvFilter, descs_.filter, compiled_.filter, w);
      if (bound.reordered)
        dnnl::reorder(bound.user, bound.primitive).execute(stream, bound.user, bound.primitive);
      filter = bound.primitive;
    }
    if (src.reordered)
      dnnl::reorder(src.user, src.primitive).execute(stream, src.user, src.primitive);
    const memory scratchpad = wrap(
        compiled_.scratchpad, scratch(onednn::kConvScratchpad, compiled_.scratchpad.get_size()));
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src.primitive},
                                            {DNNL_ARG_WEIGHTS, filter},
                                            {DNNL_ARG_DST, dst.primitive},
                                            {DNNL_ARG_SCRATCHPAD, scratchpad}};
    if (epilogue_.bias) args.emplace(DNNL_ARG_BIAS, wrap(bias_, terms.bias));
    compiled_.primitive.execute(stream, args);
    if (dst.reordered)
      dnnl::reorder(dst.primitive, dst.user).execute(stream, dst.primitive, dst.user);
    stream.wait();
  }

  const ConvGeometry& geometry() const { return geometry_; }
  const ConvEpilogue& epilogue() const { return epilogue_; }
  int threads() const { return threads_; }

 private:
  // The residual where the primitive sums it in: in dst's layout, unless y
  // is the residual already.
  void place_residual(dnnl::stream& stream, Bound& dst, const float* residual, float* y) const {
    memory user = wrap(descs_.dst, residual);
    if (dst.reordered) {
      dnnl::reorder(user, dst.primitive).execute(stream, user, dst.primitive);
    } else if (residual != y) {
      std::memcpy(y, residual, descs_.dst.get_size());
    }
  }

  ConvGeometry geometry_;
  Descs descs_;
  ConvEpilogue epilogue_;
  memory::desc bias_;
  int threads_;
  Compiled compiled_;  // this thread's cached primitive when made, shared
  std::optional<memory> filter_in_layout_;
};

std::shared_ptr<const PreparedForward> prepare_forward(const ConvGeometry& g,
                                                       const float* constant_filter,
                                                       const ConvEpilogue& epilogue) {
  std::shared_ptr<const PreparedForward> prepared;
  checked(
      g, [&] { prepared = std::make_shared<const PreparedForward>(g, constant_filter, epilogue); });
  return prepared;
}

void forward(const ConvGeometry& g, const ConvEpilogue& epilogue, const float* x, const float* w,
             float* y, EpilogueTerms terms) {
  checked(g, [&] { PreparedForward(g, nullptr, epilogue).run(x, w, y, terms); });
}

// After ag::set_intra_op_threads changed the count, this thread's cached
// primitive for the new one.
void forward(const PreparedForward& prepared, const float* x, const float* w, float* y,
             EpilogueTerms terms) {
  if (prepared.threads() != intra_op_threads())
    return forward(prepared.geometry(), prepared.epilogue(), x, w, y, terms);
  checked(prepared.geometry(), [&] { prepared.run(x, w, y, terms); });
}

void forward(const ConvGeometry& g, const float* x, const float* w, float* y) {
  run_checked(g, Pass::forward, x, w, y);
}
void backward_input(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
  run_checked(g, Pass::backward_input, dx, w, dy);
}
void backward_filter(const ConvGeometry& g, const float* x, const float* dy, float* dw) {
  run_checked(g, Pass::backward_filter, x, dw, dy);
}
std::string forward_implementation(const ConvGeometry& g) {
  return onednn::cached<Compiled>(g, Pass::forward, compile).implementation;
}

// (The primitive asked of here is the one prepare_forward then takes.)
bool applies_epilogue_to_the_sum(const ConvGeometry& g, const ConvEpilogue& epilogue) {
  bool brgemm = false;
  checked(g, [&] {
    const std::string& implementation = cached_fused(g, epilogue).implementation;
    brgemm = implementation.starts_with("brg") || implementation.starts_with("brdgmm");
  });
  return brgemm;
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
bool applies_epilogue_to_the_sum(const ConvGeometry&, const ConvEpilogue&) {
  unavailable();
}

class PreparedForward {};

std::shared_ptr<const PreparedForward> prepare_forward(const ConvGeometry&, const float*,
                                                       const ConvEpilogue&) {
  unavailable();
}
void forward(const PreparedForward&, const float*, const float*, float*, EpilogueTerms) {
  unavailable();
}
void forward(const ConvGeometry&, const ConvEpilogue&, const float*, const float*, float*,
             EpilogueTerms) {
  unavailable();
}

#endif

}  // namespace ag::ops::conv_onednn
