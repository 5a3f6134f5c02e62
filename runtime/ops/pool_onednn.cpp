// Pooling on oneDNN's primitives (float32); see pool_kernels.h.
//
// The primitives read and write the caller's layout as it is. On resnet's
// first pool ([1, 112, 112, 64], 3x3, stride 2) NHWC takes 0.25 ms and NCHW
// 0.45; oneDNN's blocked layout would take NCHW to about 0.3 (reorders of
// 0.16 and a pool of 0.15) and NHWC nowhere faster, so channels-first
// pools could gain a third with the reorders; they do not yet.
//
// The pools are oneDNN's pooling_v2, which has dilations; it counts a
// dilation's gaps (dilation - 1).
#include <string>
#include <vector>

#include "ag/error.h"
#include "ops/gemm.h"
#include "ops/pool_kernels.h"

#if AG_GEMM_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ops/onednn_primitives.h"
#endif

namespace ag::ops::pool_onednn {

bool supports(const ConvGeometry& g) {
  if (g.batch <= 0 || g.in_channels <= 0 || g.in_positions() <= 0 || g.out_positions() <= 0)
    return false;
  for (size_t i = 0; i < size_t(g.rank); ++i) {
    const int64_t span = g.dilations[i] * (g.kernel[i] - 1) + 1;
    if (g.pad_before[i] >= span || g.pad_after[i] >= span || g.dilations[i] > g.in[i]) return false;
  }
  return true;
}

#if AG_GEMM_ONEDNN
namespace {

using dnnl::memory;
using onednn::engine;
using onednn::scratch;
using onednn::wrap;

enum class Pass : int64_t { max_forward, avg_forward, max_backward, avg_backward };

bool is_max(Pass pass) {
  return pass == Pass::max_forward || pass == Pass::max_backward;
}

const char* op_name(Pass pass) {
  switch (pass) {
    case Pass::max_forward:
      return "max_pool";
    case Pass::avg_forward:
      return "avg_pool";
    case Pass::max_backward:
      return "max_pool_grad";
    case Pass::avg_backward:
      break;
  }
  return "avg_pool_grad";
}

// A batch of g's channels at the spatial positions `spatial`, in g's layout.
memory::desc layout_desc(const ConvGeometry& g, const std::vector<int64_t>& spatial) {
  using Tag = memory::format_tag;
  static constexpr Tag kChannelsFirst[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
  static constexpr Tag kChannelsLast[] = {Tag::nwc, Tag::nhwc, Tag::ndhwc};
  memory::dims dims = {g.batch, g.in_channels};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  const size_t rank = size_t(g.rank) - 1;
  return memory::desc(dims, memory::data_type::f32,
                      g.channels_first ? kChannelsFirst[rank] : kChannelsLast[rank]);
}

// One pass of one geometry. A forward pass is `forward` alone; the backward
// of an average is `backward` alone; the backward of a maximum is both: the
// forward records in `workspace` where each window's maximum is, which the
// backward reads, since max_pool_grad's operands (x, dy) do not say.
struct Primitives {
  dnnl::primitive forward, backward;
  memory::desc workspace;
};

Primitives compile(const ConvGeometry& g, Pass pass) {
  const memory::desc src = layout_desc(g, g.in), dst = layout_desc(g, g.out);
  memory::dims gaps = g.dilations;
  for (int64_t& gap : gaps) gap -= 1;
  const bool backward = pass == Pass::max_backward || pass == Pass::avg_backward;
  const dnnl::algorithm algorithm =
      is_max(pass) ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  const dnnl::pooling_v2_forward::desc forward_desc(
      backward ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference, algorithm,
      src, dst, g.strides, g.kernel, gaps, g.pad_before, g.pad_after);
  const dnnl::pooling_v2_forward::primitive_desc forward(forward_desc, engine());
  if (!backward) return {dnnl::pooling_v2_forward(forward), {}, {}};
  const dnnl::pooling_v2_backward::desc backward_desc(algorithm, src, dst, g.strides, g.kernel,
                                                      gaps, g.pad_before, g.pad_after);
  const dnnl::pooling_v2_backward::primitive_desc pd(backward_desc, engine(), forward);
  if (pass == Pass::avg_backward) return {{}, dnnl::pooling_v2_backward(pd), {}};
  return {dnnl::pooling_v2_forward(forward), dnnl::pooling_v2_backward(pd),
          forward.workspace_desc()};
}

// Runs `pass` from `in` (x, or dy for avg_backward) to `out` (y or dx); the
// max backward also reads dy.
void run(const ConvGeometry& g, Pass pass, const float* in, const float* dy, float* out) {
  sync_onednn_threads();
  const Primitives& p = onednn::cached<Primitives>(g, pass, compile);
  thread_local dnnl::stream stream(engine());
  const memory::desc src = layout_desc(g, g.in), dst = layout_desc(g, g.out);
  switch (pass) {
    case Pass::max_forward:
    case Pass::avg_forward:
      p.forward.execute(stream, {{DNNL_ARG_SRC, wrap(src, in)}, {DNNL_ARG_DST, wrap(dst, out)}});
      break;
    case Pass::avg_backward:
      p.backward.execute(stream,
                         {{DNNL_ARG_DIFF_DST, wrap(dst, in)}, {DNNL_ARG_DIFF_SRC, wrap(src, out)}});
      break;
    case Pass::max_backward: {
      const memory workspace =
          wrap(p.workspace, scratch(onednn::kPoolWorkspace, p.workspace.get_size()));
      p.forward.execute(stream,
                        {{DNNL_ARG_SRC, wrap(src, in)},
                         {DNNL_ARG_DST, wrap(dst, scratch(onednn::kPoolOutput, dst.get_size()))},
                         {DNNL_ARG_WORKSPACE, workspace}});
      p.backward.execute(stream, {{DNNL_ARG_DIFF_DST, wrap(dst, dy)},
                                  {DNNL_ARG_WORKSPACE, workspace},
                                  {DNNL_ARG_DIFF_SRC, wrap(src, out)}});
      break;
    }
  }
  stream.wait();
}

void run_checked(const ConvGeometry& g, Pass pass, const float* in, const float* dy, float* out) {
  try {
    run(g, pass, in, dy, out);
  } catch (const dnnl::error& e) {
    throw InternalError(std::string(op_name(pass)) + ": oneDNN failed (status " +
                        std::to_string(int(e.status)) + "): " + e.what() + ", on an input of " +
                        g.input_shape().to_list_string() + " and a window of " +
                        Shape(g.kernel).to_list_string());
  }
}

}  // namespace

void max_pool(const ConvGeometry& g, const float* x, float* y) {
  run_checked(g, Pass::max_forward, x, nullptr, y);
}
void avg_pool(const ConvGeometry& g, const float* x, float* y) {
  run_checked(g, Pass::avg_forward, x, nullptr, y);
}
void max_pool_grad(const ConvGeometry& g, const float* x, const float* dy, float* dx) {
  run_checked(g, Pass::max_backward, x, dy, dx);
}
void avg_pool_grad(const ConvGeometry& g, const float* dy, float* dx) {
  run_checked(g, Pass::avg_backward, dy, nullptr, dx);
}

#else

namespace {
[[noreturn]] void unavailable() {
  throw UnimplementedError("pooling: this build has no oneDNN (AG_GEMM=openblas)");
}
}  // namespace

void max_pool(const ConvGeometry&, const float*, float*) {
  unavailable();
}
void avg_pool(const ConvGeometry&, const float*, float*) {
  unavailable();
}
void max_pool_grad(const ConvGeometry&, const float*, const float*, float*) {
  unavailable();
}
void avg_pool_grad(const ConvGeometry&, const float*, float*) {
  unavailable();
}

#endif

}  // namespace ag::ops::pool_onednn
