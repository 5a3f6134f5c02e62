// dropout (tf.nn.dropout): each element of x kept with probability 1 - rate
// and scaled by 1 / (1 - rate), else 0. It is x times the op dropout_mask,
// whose values are 0 or the scale: the multiply's gradient then reuses the
// same mask. The mask's random bits come from the counter-based generator of
// ops/random.h, as random_uniform's do: a seed gives the same first mask
// eagerly and in a graph.
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"
#include "ops/random.h"

namespace ag::ops {
namespace {

void dropout_check_rate(double rate, const std::string& op) {
  if (!(rate >= 0.0 && rate < 1.0)) {
    char spelled[32];
    std::snprintf(spelled, sizeof spelled, "%g", rate);
    throw InvalidArgumentError(op + ": rate must be in [0, 1) (the probability of dropping an " +
                               "element), got " + spelled);
  }
}

// A uniform value in [0, 1) from 53 random bits.
double dropout_unit_interval(uint64_t bits) {
  return double(bits >> 11) * (1.0 / double(uint64_t{1} << 53));
}

void dropout_check_dtype(DType dtype, const std::string& op) {
  if (!is_floating(dtype)) {
    throw InvalidArgumentError(op + ": x must be float32 or float64 (it is scaled by " +
                               "1 / (1 - rate)), got " + std::string(dtype_name(dtype)));
  }
}

}  // namespace

ValueType infer_dropout_mask(const InferContext& ctx) {
  dropout_check_dtype(ctx.inputs[0].dtype, std::string(ctx.op_name));
  dropout_check_rate(ctx.attrs.lo, std::string(ctx.op_name));
  return ctx.inputs[0];
}

void kernel_dropout_mask(const KernelContext& ctx) {
  if (!ctx.rng) throw InternalError(std::string(ctx.op_name) + ": kernel called without a state");
  RandomState& rng = *ctx.rng;
  const int64_t n = ctx.out_shape->num_elements();
  const double rate = ctx.attrs->lo;
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T>) {
      const T scale = T(1) / (T(1) - T(rate));
      T* out = static_cast<T*>(ctx.out);
      for (int64_t i = 0; i < n; ++i) {
        out[i] = dropout_unit_interval(random_bits(rng, uint64_t(i))) >= rate ? scale : T(0);
      }
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
  rng.counter += uint64_t(n);
}

}  // namespace ag::ops

namespace ag::api {

Tensor dropout(const Tensor& x, double rate, std::optional<uint64_t> seed, bool training,
               CallSite site) {
  ops::dropout_check_dtype(x.dtype(), "dropout");
  ops::dropout_check_rate(rate, "dropout");
  if (!training || rate == 0.0) return x;
  ops::Attrs attrs;
  attrs.lo = rate;
  attrs.seed = seed ? *seed : ops::next_auto_seed();
  return mul(x, ops::apply(ops::OpId::DropoutMask, {x}, attrs, site), site);
}

}  // namespace ag::api
