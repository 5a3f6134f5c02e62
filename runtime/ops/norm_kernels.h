// The float32 kernels of batch_norm, layer_norm and softmax
// and of the softmax gradients on oneDNN's primitives (AG_GEMM=onednn
// builds: norm_onednn.cpp). Each op's file (library/batch_norm.cpp,
// layer_norm.cpp, softmax.cpp) has its own loops for float64, for empty
// tensors and for builds without oneDNN, and chooses.
//
// A problem is the tensor seen as [outer, length, inner] around one axis:
// batch norm's channels are `length`; layer norm normalises rows of
// `length` (inner is 1); softmax runs along `length`.
#pragma once

#include <cstdint>
#include <memory>

#include "ops/op_registry.h"

namespace ag::ops {
// The normalisation ops' inputs all float32 or all float64, else an
// InvalidArgumentError naming the input (names[i]) by its role.
void require_norm_dtypes(const InferContext& ctx, const char* const* names);
}  // namespace ag::ops

namespace ag::ops::norm_onednn {

enum class Kind : int64_t {
  batch_norm,           // y = (x - mean) * scale / sqrt(variance + epsilon) + offset, per channel
  layer_norm,           // y = (x - mean(row)) / sqrt(var(row) + epsilon) * scale + offset
  softmax,              // y = exp(x) / sum(exp(x)) along the axis
  softmax_grad,         // dx from softmax's y and dy
  layer_norm_grad,      // dx from x, its rows' mean and variance, scale and dy
  batch_norm_training,  // batch_norm by x's own per-channel statistics
  batch_norm_grad,      // its dx from x, those statistics, scale and dy
};

struct Problem {
  Kind kind;
  int64_t outer = 1, length = 1, inner = 1;
  float epsilon = 0;
};

// A problem's primitive, made once: when a plan is built (an op's prepare
// function), or on a thread's first call of the problem (kept for the next).
// Runs from any number of threads at once (each with its own scratchpad).
class Compiled;
std::shared_ptr<const Compiled> prepare(const Problem& p);

// The problem's computation on buffers: `prepared` where a plan step has
// one, else null (the thread's cached primitive runs). Pointers a kind does
// not read may be null.
struct Buffers {
  const float* x = nullptr;  // x (forward), y (the gradients)
  const float* dy = nullptr;
  const float* mean = nullptr;
  const float* variance = nullptr;
  const float* scale = nullptr;
  const float* offset = nullptr;
  float* out = nullptr;
  float* diff_scale = nullptr;  // the gradients: where dscale goes, [length]
  float* mean_out = nullptr;    // batch_norm_training: where the statistics go
  float* variance_out = nullptr;
};
void run(const Compiled* prepared, const Problem& p, const Buffers& b);

// How many primitives this process has made (prepared or cached), for the
// tests that a plan step prepares its primitive once.
int64_t primitives_made();

}  // namespace ag::ops::norm_onednn
