// conv_bench: the TensorFlow guide's convolution, Conv2D(100, 3) on a
// [1, 200, 200, 100] image (7.1 GFLOP), graph against eager against the best
// this machine offers: a oneDNN convolution primitive called directly (the
// filter reordered to its layout once, outside the timing; the image and
// output reordered from and to NHWC, or already in its layout: the
// "blocked" row), im2col on OpenBLAS's sgemm, and LibTorch's conv2d (the
// "torch" row, NCHW, where LibTorch was found). The sgemm rows time the matrix product of the
// same size
// ([39204 x 900] x [900 x 100]) alone: the speed a convolution by matrix
// products could reach. tools/bench/summarize.py compares them.
//
// The pool rows: resnet's first pool, 3x3 at stride 2, SAME, over a
// [1, 112, 112, 64] NHWC image, max and average, eager and graph (on
// oneDNN's pooling primitive in an AG_GEMM=onednn build, on the runtime's
// loops with AG_GEMM=openblas) against oneDNN's primitive called directly.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ag/ag.h>

#include "bench_util.h"
#if AG_BENCH_TORCH
#include "torch_peer.h"
#endif

#if AG_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

using ag::Tensor;

constexpr int64_t kSide = 200, kChannels = 100, kFilters = 100, kKernel = 3;
constexpr int64_t kOut = kSide - kKernel + 1;  // VALID
constexpr int64_t kPatch = kKernel * kKernel * kChannels;
constexpr ag_bench::Tolerance kTolerance{1e-3, 1e-3};

struct Inputs {
  Tensor image = ag::random_normal({1, kSide, kSide, kChannels}, 0.0, 1.0, ag::float32, 1);
  Tensor filter =
      ag::random_normal({kKernel, kKernel, kChannels, kFilters}, 0.0, 0.05, ag::float32, 2);
};

const Inputs& inputs() {
  static const Inputs in;
  return in;
}

Tensor conv(const Tensor& image, const Tensor& filter) {
  return ag::conv2d(image, filter, {1}, "VALID");
}

// Each output position's 3x3x100 patch, a row of [kOut * kOut, kPatch].
void im2col(const float* image, float* patches) {
  for (int64_t i = 0; i < kOut; ++i)
    for (int64_t j = 0; j < kOut; ++j)
      for (int64_t di = 0; di < kKernel; ++di)
        for (int64_t dj = 0; dj < kKernel; ++dj)
          std::copy_n(
              image + ((i + di) * kSide + j + dj) * kChannels, kChannels,
              patches + ((i * kOut + j) * kKernel + di) * kKernel * kChannels + dj * kChannels);
}

void conv_im2col_cblas(const float* image, const float* filter, float* patches, float* out) {
  im2col(image, patches);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(kOut * kOut), int(kFilters),
              int(kPatch), 1.0f, patches, int(kPatch), filter, int(kFilters), 0.0f, out,
              int(kFilters));
}

#if AG_BENCH_ONEDNN
// The primitive in the layouts oneDNN picks for this CPU (blocks of channels),
// the filter reordered to its layout once. run() takes the image in NHWC and
// gives the output in NHWC, reordering both (what a model of NHWC tensors
// pays); run_blocked() reads and writes the primitive's layouts (what a model
// kept in them would pay).
struct OnednnConv {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward primitive;
  dnnl::memory filter, image_blocked, out_blocked;
  dnnl::memory::desc image_desc, out_desc;

  explicit OnednnConv(const float* hwio_filter) {
    using dnnl::memory;
    const auto f32 = memory::data_type::f32;
    const auto any = memory::format_tag::any;
    image_desc = memory::desc({1, kChannels, kSide, kSide}, f32, memory::format_tag::nhwc);
    out_desc = memory::desc({1, kFilters, kOut, kOut}, f32, memory::format_tag::nhwc);
    const memory::desc user_filter({kFilters, kChannels, kKernel, kKernel}, f32,
                                   memory::format_tag::hwio);
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc(image_desc.dims(), f32, any), memory::desc(user_filter.dims(), f32, any),
        memory::desc(out_desc.dims(), f32, any), {1, 1}, {0, 0}, {0, 0});
    dnnl::convolution_forward::primitive_desc pd(desc, engine);
    primitive = dnnl::convolution_forward(pd);
    filter = memory(pd.weights_desc(), engine);
    image_blocked = memory(pd.src_desc(), engine);
    out_blocked = memory(pd.dst_desc(), engine);
    memory user(user_filter, engine, const_cast<float*>(hwio_filter));
    dnnl::reorder(user, filter).execute(stream, user, filter);
    stream.wait();
  }

  void run(const float* image, float* out) {
    dnnl::memory in(image_desc, engine, const_cast<float*>(image));
    dnnl::memory result(out_desc, engine, out);
    dnnl::reorder(in, image_blocked).execute(stream, in, image_blocked);
    run_blocked();
    dnnl::reorder(out_blocked, result).execute(stream, out_blocked, result);
    stream.wait();
  }

  void run_blocked() {
    primitive.execute(
        stream,
        {{DNNL_ARG_SRC, image_blocked}, {DNNL_ARG_WEIGHTS, filter}, {DNNL_ARG_DST, out_blocked}});
    stream.wait();
  }
};
#endif

constexpr int64_t kPoolSide = 112, kPoolChannels = 64, kPoolOut = 56;  // SAME at stride 2

const Tensor& pool_image() {
  static const Tensor image =
      ag::random_normal({1, kPoolSide, kPoolSide, kPoolChannels}, 0.0, 1.0, ag::float32, 3);
  return image;
}

Tensor pool(bool max, const Tensor& image) {
  return max ? ag::max_pool2d(image, {3}, {2}, "SAME") : ag::avg_pool2d(image, {3}, {2}, "SAME");
}

#if AG_BENCH_ONEDNN
// The pool as one oneDNN primitive on the NHWC tensors. SAME pads 112
// positions at stride 2 by 1, at the end: 55 * 2 + 3 - 112.
struct OnednnPool {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::pooling_forward primitive;
  dnnl::memory::desc image_desc, out_desc;

  explicit OnednnPool(bool max) {
    using dnnl::memory;
    const auto f32 = memory::data_type::f32;
    image_desc =
        memory::desc({1, kPoolChannels, kPoolSide, kPoolSide}, f32, memory::format_tag::nhwc);
    out_desc = memory::desc({1, kPoolChannels, kPoolOut, kPoolOut}, f32, memory::format_tag::nhwc);
    const dnnl::pooling_forward::desc desc(
        dnnl::prop_kind::forward_inference,
        max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding,
        image_desc, out_desc, {2, 2}, {3, 3}, {0, 0}, {1, 1});
    primitive = dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(desc, engine));
  }

  void run(const float* image, float* out) {
    primitive.execute(stream,
                      {{DNNL_ARG_SRC, dnnl::memory(image_desc, engine, const_cast<float*>(image))},
                       {DNNL_ARG_DST, dnnl::memory(out_desc, engine, out)}});
    stream.wait();
  }
};
#endif

// The max pool gradient rows: resnet's first pool; LeNet's two pools (2x2 at
// stride 2, windows that do not overlap, over six and sixteen channels); and
// the second with 32 channels. Between 16 and 32 channels, oneDNN's pair
// overtakes the runtime's channels-last loops (library/pool.cpp).
struct PoolGradCase {
  int64_t batch, side, channels, window, stride, out, pad_end;  // pad_end: SAME's padding
  const char* padding;
};
constexpr PoolGradCase kResnetPoolGrad{1, kPoolSide, kPoolChannels, 3, 2, kPoolOut, 1, "SAME"};
constexpr PoolGradCase kLenetPoolGrad{64, 24, 6, 2, 2, 12, 0, "VALID"};
constexpr PoolGradCase kLenet2PoolGrad{64, 8, 16, 2, 2, 4, 0, "VALID"};
constexpr PoolGradCase k32ChannelPoolGrad{64, 8, 32, 2, 2, 4, 0, "VALID"};

struct PoolGradInputs {
  Tensor image, dy;
};

const PoolGradInputs& pool_grad_inputs(const PoolGradCase& c) {
  static std::map<const PoolGradCase*, PoolGradInputs> made;
  auto [it, fresh] = made.try_emplace(&c);
  if (fresh) {
    it->second.image =
        ag::random_normal({c.batch, c.side, c.side, c.channels}, 0.0, 1.0, ag::float32, 3);
    it->second.dy =
        ag::random_normal({c.batch, c.out, c.out, c.channels}, 0.0, 1.0, ag::float32, 4);
  }
  return it->second;
}

Tensor pool_grad(const PoolGradCase& c, const Tensor& image, const Tensor& dy) {
  return ag::max_pool_grad(image, dy, {c.window}, {c.stride}, c.padding);
}

#if AG_BENCH_ONEDNN
// The max pool's gradient as oneDNN computes it: its backward reads where
// the maxima are from a workspace that a forward_training pass writes, so
// the pair runs on every call (max_pool_grad's operands are x and dy).
struct OnednnPoolGrad {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::pooling_forward forward;
  dnnl::pooling_backward backward;
  dnnl::memory::desc image_desc, out_desc;
  dnnl::memory workspace, out;

  explicit OnednnPoolGrad(const PoolGradCase& c) {
    using dnnl::memory;
    const auto f32 = memory::data_type::f32;
    const auto nhwc = memory::format_tag::nhwc;
    image_desc = memory::desc({c.batch, c.channels, c.side, c.side}, f32, nhwc);
    out_desc = memory::desc({c.batch, c.channels, c.out, c.out}, f32, nhwc);
    const memory::dims strides{c.stride, c.stride}, window{c.window, c.window},
        pad_end{c.pad_end, c.pad_end};
    const dnnl::pooling_forward::desc forward_desc(dnnl::prop_kind::forward_training,
                                                   dnnl::algorithm::pooling_max, image_desc,
                                                   out_desc, strides, window, {0, 0}, pad_end);
    const dnnl::pooling_forward::primitive_desc forward_pd(forward_desc, engine);
    const dnnl::pooling_backward::desc backward_desc(dnnl::algorithm::pooling_max, image_desc,
                                                     out_desc, strides, window, {0, 0}, pad_end);
    forward = dnnl::pooling_forward(forward_pd);
    backward = dnnl::pooling_backward(
        dnnl::pooling_backward::primitive_desc(backward_desc, engine, forward_pd));
    workspace = memory(forward_pd.workspace_desc(), engine);
    out = memory(out_desc, engine);
  }

  void run(const float* image, const float* dy, float* dx) {
    using dnnl::memory;
    forward.execute(stream, {{DNNL_ARG_SRC, memory(image_desc, engine, const_cast<float*>(image))},
                             {DNNL_ARG_DST, out},
                             {DNNL_ARG_WORKSPACE, workspace}});
    backward.execute(stream, {{DNNL_ARG_DIFF_DST, memory(out_desc, engine, const_cast<float*>(dy))},
                              {DNNL_ARG_WORKSPACE, workspace},
                              {DNNL_ARG_DIFF_SRC, memory(image_desc, engine, dx)}});
    stream.wait();
  }
};
#endif

void check_pool_grad_rows(const PoolGradCase& c) {
  const PoolGradInputs& in = pool_grad_inputs(c);
  const Tensor eager = pool_grad(c, in.image, in.dy);
  auto graph_fn = ag::function([&c](Tensor x, Tensor dy) { return pool_grad(c, x, dy); });
  ag_bench::check_same("max pool grad graph", eager, graph_fn(in.image, in.dy));
#if AG_BENCH_ONEDNN
  std::vector<float> dx(size_t(eager.num_elements()));
  OnednnPoolGrad(c).run(in.image.data<float>(), in.dy.data<float>(), dx.data());
  ag_bench::check_close("max pool grad oneDNN primitives", eager.data<float>(), dx.data(),
                        eager.num_elements(), kTolerance);
#endif
}

void check_pool_rows(bool max) {
  const std::string what = max ? "max pool" : "avg pool";
  const Tensor eager = pool(max, pool_image());
  auto graph_fn = ag::function([max](Tensor x) { return pool(max, x); });
  ag_bench::check_same(what + " graph", eager, graph_fn(pool_image()));
#if AG_BENCH_ONEDNN
  std::vector<float> out(size_t(eager.num_elements()));
  OnednnPool(max).run(pool_image().data<float>(), out.data());
  ag_bench::check_close(what + " oneDNN primitive", eager.data<float>(), out.data(),
                        eager.num_elements(), kTolerance);
#endif
}

// Every row computes what eager computes.
void check_rows() {
  const Inputs& in = inputs();
  const Tensor eager = conv(in.image, in.filter);
  auto graph_fn = ag::function([](Tensor x, Tensor w) { return conv(x, w); });
  ag_bench::check_same("conv graph", eager, graph_fn(in.image, in.filter));
  std::vector<float> patches(size_t(kOut * kOut * kPatch)), out(size_t(eager.num_elements()));
  conv_im2col_cblas(in.image.data<float>(), in.filter.data<float>(), patches.data(), out.data());
  ag_bench::check_close("conv im2col + cblas", eager.data<float>(), out.data(),
                        eager.num_elements(), kTolerance);
#if AG_BENCH_ONEDNN
  OnednnConv onednn(in.filter.data<float>());
  onednn.run(in.image.data<float>(), out.data());
  ag_bench::check_close("conv oneDNN primitive", eager.data<float>(), out.data(),
                        eager.num_elements(), kTolerance);
#endif
#if AG_BENCH_TORCH
  ag_bench::TorchConv torch(kSide, kChannels, kFilters, kKernel, in.image.data<float>(),
                            in.filter.data<float>());
  torch.run();
  ag_bench::check_close("conv LibTorch", eager.data<float>(), torch.result_nhwc().data(),
                        eager.num_elements(), kTolerance);
#endif
  check_pool_rows(true);
  check_pool_rows(false);
  check_pool_grad_rows(kResnetPoolGrad);
  check_pool_grad_rows(kLenetPoolGrad);
}

void set_flops(benchmark::State& state) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kOut * kOut * kPatch * kFilters * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void bm_eager(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize(conv(in.image, in.filter));
  set_flops(state);
}

void bm_graph(benchmark::State& state) {
  const Inputs& in = inputs();
  auto fn = ag::function([](Tensor x, Tensor w) { return conv(x, w); });
  for (auto _ : state) benchmark::DoNotOptimize(fn(in.image, in.filter));
  set_flops(state);
}

void bm_hand_im2col_cblas(benchmark::State& state) {
  const Inputs& in = inputs();
  std::vector<float> patches(size_t(kOut * kOut * kPatch)), out(size_t(kOut * kOut * kFilters));
  for (auto _ : state) {
    conv_im2col_cblas(in.image.data<float>(), in.filter.data<float>(), patches.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  set_flops(state);
}

// The product alone, on patches made once.
void bm_sgemm_cblas(benchmark::State& state) {
  std::vector<float> patches(size_t(kOut * kOut * kPatch), 0.5f),
      out(size_t(kOut * kOut * kFilters));
  const float* filter = inputs().filter.data<float>();
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(kOut * kOut), int(kFilters),
                int(kPatch), 1.0f, patches.data(), int(kPatch), filter, int(kFilters), 0.0f,
                out.data(), int(kFilters));
    benchmark::DoNotOptimize(out.data());
  }
  set_flops(state);
}

#if AG_BENCH_ONEDNN
void bm_hand_onednn(benchmark::State& state) {
  const Inputs& in = inputs();
  OnednnConv onednn(in.filter.data<float>());
  std::vector<float> out(size_t(kOut * kOut * kFilters));
  for (auto _ : state) onednn.run(in.image.data<float>(), out.data());
  set_flops(state);
}

// The ceiling: the image already in the primitive's layout.
void bm_hand_onednn_blocked(benchmark::State& state) {
  const Inputs& in = inputs();
  OnednnConv onednn(in.filter.data<float>());
  std::vector<float> out(size_t(kOut * kOut * kFilters));
  onednn.run(in.image.data<float>(), out.data());
  for (auto _ : state) onednn.run_blocked();
  set_flops(state);
}

void bm_sgemm_onednn(benchmark::State& state) {
  std::vector<float> patches(size_t(kOut * kOut * kPatch), 0.5f),
      out(size_t(kOut * kOut * kFilters));
  const float* filter = inputs().filter.data<float>();
  for (auto _ : state) {
    if (dnnl_sgemm('N', 'N', kOut * kOut, kFilters, kPatch, 1.0f, patches.data(), kPatch, filter,
                   kFilters, 0.0f, out.data(), kFilters) != dnnl_success)
      ag_bench::fail("conv: dnnl_sgemm failed");
    benchmark::DoNotOptimize(out.data());
  }
  set_flops(state);
}
#endif

#if AG_BENCH_TORCH
// The peer: LibTorch's conv2d on the image and filter in its NCHW and OIHW.
void bm_torch(benchmark::State& state) {
  const Inputs& in = inputs();
  ag_bench::TorchConv torch(kSide, kChannels, kFilters, kKernel, in.image.data<float>(),
                            in.filter.data<float>());
  for (auto _ : state) torch.run();
  set_flops(state);
}
#endif

void bm_pool_eager(benchmark::State& state, bool max) {
  for (auto _ : state) benchmark::DoNotOptimize(pool(max, pool_image()));
}

void bm_pool_graph(benchmark::State& state, bool max) {
  auto fn = ag::function([max](Tensor x) { return pool(max, x); });
  for (auto _ : state) benchmark::DoNotOptimize(fn(pool_image()));
}

void bm_pool_grad_eager(benchmark::State& state, const PoolGradCase& c) {
  const PoolGradInputs& in = pool_grad_inputs(c);
  for (auto _ : state) benchmark::DoNotOptimize(pool_grad(c, in.image, in.dy));
}

void bm_pool_grad_graph(benchmark::State& state, const PoolGradCase& c) {
  const PoolGradInputs& in = pool_grad_inputs(c);
  auto fn = ag::function([&c](Tensor x, Tensor dy) { return pool_grad(c, x, dy); });
  for (auto _ : state) benchmark::DoNotOptimize(fn(in.image, in.dy));
}

#if AG_BENCH_ONEDNN
void bm_pool_grad_hand_onednn(benchmark::State& state, const PoolGradCase& c) {
  const PoolGradInputs& in = pool_grad_inputs(c);
  OnednnPoolGrad onednn(c);
  std::vector<float> dx(size_t(in.image.num_elements()));
  for (auto _ : state) onednn.run(in.image.data<float>(), in.dy.data<float>(), dx.data());
}

void bm_pool_hand_onednn(benchmark::State& state, bool max) {
  OnednnPool onednn(max);
  std::vector<float> out(size_t(kPoolOut * kPoolOut * kPoolChannels));
  for (auto _ : state) onednn.run(pool_image().data<float>(), out.data());
}
#endif

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
#if AG_BENCH_TORCH
  ag_bench::use_one_torch_thread();
#endif
  check_rows();
  auto add = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMillisecond)->MinTime(1.0);
  };
  add("conv_guide/eager", bm_eager);
  add("conv_guide/graph", bm_graph);
  add("conv_guide/hand_im2col_cblas", bm_hand_im2col_cblas);
  add("conv_guide/sgemm_cblas", bm_sgemm_cblas);
#if AG_BENCH_ONEDNN
  add("conv_guide/hand_onednn", bm_hand_onednn);
  add("conv_guide/hand_onednn_blocked", bm_hand_onednn_blocked);
  add("conv_guide/sgemm_onednn", bm_sgemm_onednn);
#endif
#if AG_BENCH_TORCH
  add("conv_guide/torch", bm_torch);
#endif
  add("max_pool_resnet/eager", [](benchmark::State& s) { bm_pool_eager(s, true); });
  add("max_pool_resnet/graph", [](benchmark::State& s) { bm_pool_graph(s, true); });
  add("avg_pool_resnet/eager", [](benchmark::State& s) { bm_pool_eager(s, false); });
  add("avg_pool_resnet/graph", [](benchmark::State& s) { bm_pool_graph(s, false); });
  const std::pair<const char*, const PoolGradCase*> pool_grads[] = {{"resnet", &kResnetPoolGrad},
                                                                    {"lenet", &kLenetPoolGrad},
                                                                    {"lenet2", &kLenet2PoolGrad},
                                                                    {"32ch", &k32ChannelPoolGrad}};
  for (const auto& [name, c] : pool_grads) {
    const std::string row = std::string("max_pool_grad_") + name;
    add(row + "/eager", [c](benchmark::State& s) { bm_pool_grad_eager(s, *c); });
    add(row + "/graph", [c](benchmark::State& s) { bm_pool_grad_graph(s, *c); });
#if AG_BENCH_ONEDNN
    add(row + "/hand_onednn", [c](benchmark::State& s) { bm_pool_grad_hand_onednn(s, *c); });
#endif
  }
#if AG_BENCH_ONEDNN
  add("max_pool_resnet/hand_onednn", [](benchmark::State& s) { bm_pool_hand_onednn(s, true); });
  add("avg_pool_resnet/hand_onednn", [](benchmark::State& s) { bm_pool_hand_onednn(s, false); });
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
