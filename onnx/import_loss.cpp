// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the classes on
// axis 1 of the input, the targets of its shape without that axis, an
// optional weight per class, ignore_index and a reduction (none, sum, or
// mean: the weighted mean, divided by the targets' summed weights).
#include <string>
#include <vector>

#include "ag/losses.h"
#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {

// The loss of log_probs at `target`, weighted by input `weight_input` and
// reduced as the node's attributes say.
Tensor weighted_negative_log_likelihood(NodeContext& ctx, const Tensor& log_probs,
                                        const Tensor& target, size_t weight_input) {
  const std::string reduction = ctx.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.invalid("reduction '" + reduction + "' is not none, sum or mean");
  if (log_probs.rank() < 2) ctx.invalid("the input needs a batch and a class axis");
  Tensor labels = target;
  Tensor kept;  // where the target is not ignore_index
  if (ctx.has_attr("ignore_index")) {
    kept = not_equal(labels, ctx.attr_int("ignore_index"));
    labels = where(kept, labels, 0);  // a class that exists; its loss is weighed 0
  }
  Tensor weights = ctx.has_input(weight_input) ? gather(ctx.input(weight_input), labels)
                                               : cast(ones_like(target), log_probs.dtype());
  if (kept.defined()) weights = mul(weights, cast(kept, log_probs.dtype()));
  Tensor loss = mul(negative_log_likelihood(log_probs, labels, 1), weights);
  if (reduction == "none") return loss;
  if (reduction == "sum") return reduce_sum(loss);
  return div(reduce_sum(loss), reduce_sum(weights));
}

}  // namespace

std::vector<Tensor> import_negative_log_likelihood_loss(NodeContext& ctx) {
  return {weighted_negative_log_likelihood(ctx, ctx.input(0), ctx.input(1), 2)};
}

// Its second output, optional, is the log-probabilities.
std::vector<Tensor> import_softmax_cross_entropy_loss(NodeContext& ctx) {
  const Tensor log_probs = log_softmax(ctx.input(0), 1);
  return {weighted_negative_log_likelihood(ctx, log_probs, ctx.input(1), 2), log_probs};
}

}  // namespace ag::onnx_io
