// What the oneDNN engines of the model kernels share (conv_onednn.cpp,
// pool_onednn.cpp, rnn_onednn.cpp; AG_GEMM=onednn builds only): the CPU engine, memory over
// a caller's buffer, per-thread scratch buffers, and a per-thread cache of
// primitives by geometry.
#pragma once

#if AG_GEMM_ONEDNN

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ag/threading.h"
#include "ops/conv_geometry.h"

namespace ag::ops::onednn {

inline const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

inline dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, engine(), const_cast<void*>(data));
}

// The scratch buffers' slots: a convolution's three reordered tensors and a
// prepared primitive's scratchpad, a max pool backward's forward output and
// workspace, a recurrent sequence's weights and their gradients in its primitive's
// layouts, its workspace and the outputs of the forward pass its backward
// pass runs again.
enum ScratchSlot {
  kConvSrc,
  kConvFilter,
  kConvDst,
  kConvScratchpad,
  kPoolOutput,
  kPoolWorkspace,
  kRnnWeightsLayer,
  kRnnWeightsIter,
  kRnnDiffWeightsLayer,
  kRnnDiffWeightsIter,
  kRnnWorkspace,
  kRnnForwardOutputs,
};
inline constexpr int kScratchSlots = 12;

// This thread's buffer of `slot`, kept at the size of the largest asked for
// so far, so that a call does not fault its pages in anew (the guide's
// convolution: 32 MB, 8,000 pages).
inline void* scratch(ScratchSlot slot, size_t bytes) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> buffers[kScratchSlots];
  thread_local size_t sizes[kScratchSlots] = {};
  if (sizes[slot] < bytes) {
    buffers[slot].reset();
    buffers[slot].reset(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    if (!buffers[slot]) throw std::bad_alloc();
    sizes[slot] = bytes;
  }
  return buffers[slot].get();
}

// This thread's primitives of one type, by geometry and kind (below).
template <class Primitives>
std::map<std::vector<int64_t>, Primitives>& thread_cache() {
  thread_local std::map<std::vector<int64_t>, Primitives> cache;
  return cache;
}

// This thread's compile() for g's geometry, `kind` (a pass; an epilogue)
// and the intra-op thread count (the callers set OpenMP's count to it
// before), compiled on its first use. A model has a few dozen; past 256
// (shapes that change on every call) the cache starts over. A lookup
// allocates nothing: eager convolutions and pools ask on every call.
template <class Primitives, class Compile>
const Primitives& cached(const ConvGeometry& g, std::initializer_list<int64_t> kind,
                         Compile compile) {
  constexpr size_t kMaxCached = 256;
  std::map<std::vector<int64_t>, Primitives>& cache = thread_cache<Primitives>();
  // The thread count too: a primitive keeps the count it was made for.
  thread_local std::vector<int64_t> key;
  key.assign(kind);
  key.insert(key.end(), {g.rank, g.channels_first, g.batch, g.in_channels, g.out_channels, g.groups,
                         intra_op_threads()});
  for (const auto* v : {&g.in, &g.kernel, &g.strides, &g.dilations, &g.pad_before, &g.pad_after})
    key.insert(key.end(), v->begin(), v->end());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxCached) cache.clear();
  std::vector<int64_t> stored = key;  // compile() may look up another primitive
  return cache.emplace(std::move(stored), compile()).first->second;
}

// This thread's compile(g, pass), as above.
template <class Primitives, class Pass, class Compile>
const Primitives& cached(const ConvGeometry& g, Pass pass, Compile compile) {
  return cached<Primitives>(g, {int64_t(pass)}, [&] { return compile(g, pass); });
}

}  // namespace ag::ops::onednn

#endif
