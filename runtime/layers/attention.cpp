// Keras's MultiHeadAttention, on einsum.
#include <cmath>

#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

namespace {

// The projections' order in the weights: query, key, value, attention_output.
enum Projection { kQuery = 0, kKey = 1, kValue = 2, kOutput = 3 };
constexpr const char* kProjectionNames[] = {"query", "key", "value", "attention_output"};

}  // namespace

MultiHeadAttention::MultiHeadAttention(int64_t num_heads, int64_t key_dim,
                                       MultiHeadAttentionOptions options)
    : Layer("multi_head_attention", options.name),
      num_heads_(num_heads),
      key_dim_(key_dim),
      options_(std::move(options)) {
  if (num_heads <= 0 || key_dim <= 0 || options_.value_dim.value_or(1) <= 0 ||
      options_.output_shape.value_or(1) <= 0)
    throw InvalidArgumentError(
        "MultiHeadAttention: num_heads, key_dim, value_dim and output_shape must be positive");
  if (!(options_.dropout >= 0 && options_.dropout < 1))
    throw InvalidArgumentError("MultiHeadAttention: dropout must be in [0, 1), got " +
                               std::to_string(options_.dropout));
}

void MultiHeadAttention::build_weights(const Shape& query_shape, DType dtype, CallSite) {
  const int64_t query_features = query_shape.dim(-1);
  const int64_t value_features = value_ ? value_->shape().dim(-1) : query_features;
  const int64_t key_features = key_ ? key_->shape().dim(-1) : value_features;
  const int64_t value_dim = options_.value_dim.value_or(key_dim_);
  const int64_t inputs[] = {query_features, key_features, value_features};
  const int64_t head_dims[] = {key_dim_, key_dim_, value_dim};
  for (int p = kQuery; p <= kValue; ++p) {
    const std::string name = kProjectionNames[p];
    add_weight(name + "/kernel", Shape{inputs[p], num_heads_, head_dims[p]},
               options_.kernel_initializer, dtype);
    if (options_.use_bias)
      add_weight(name + "/bias", Shape{num_heads_, head_dims[p]}, options_.bias_initializer, dtype);
  }
  const int64_t output_features = options_.output_shape.value_or(query_features);
  add_weight("attention_output/kernel", Shape{num_heads_, value_dim, output_features},
             options_.kernel_initializer, dtype);
  if (options_.use_bias)
    add_weight("attention_output/bias", Shape{output_features}, options_.bias_initializer, dtype);
}

Tensor MultiHeadAttention::operator()(const Tensor& query, const Tensor& value, const Tensor& key,
                                      const Tensor& attention_mask, bool training, CallSite site) {
  const Tensor& k = key.defined() ? key : value;
  for (const Tensor* t : {&value, &k}) {
    if (!t->defined() || t->shape().rank() != 3)
      throw ValueError(where(site) + ": the value and the key must be [batch, steps, features], " +
                       "but got one of shape " +
                       (t->defined() ? t->shape().to_string() : std::string("undefined")) +
                       "; reshape it to rank 3");
  }
  const int64_t batch = query.defined() && query.shape().rank() == 3 ? query.shape()[0] : -1;
  for (const Tensor* t : {&value, &k}) {
    const int64_t b = t->shape()[0];
    if (batch != kUnknownDim && b != kUnknownDim && batch >= 0 && b != batch)
      throw ValueError(where(site) + ": the query's batch is " + std::to_string(batch) +
                       " but the " + (t == &value ? "value" : "key") + "'s is " +
                       std::to_string(b) + "; pass one batch of each");
  }
  if (built()) {
    // Their features are fixed by the value and key kernels.
    const size_t stride = options_.use_bias ? 2 : 1;
    const int64_t key_features = weights_[kKey * stride].second.shape()[0];
    const int64_t value_features = weights_[kValue * stride].second.shape()[0];
    if (value.shape().dim(-1) != value_features || k.shape().dim(-1) != key_features)
      throw ValueError(where(site) + ": its weights were built for values with " +
                       std::to_string(value_features) + " features and keys with " +
                       std::to_string(key_features) + ", but got a value of shape " +
                       value.shape().to_string() + " and a key of shape " + k.shape().to_string() +
                       "; use a new layer for these inputs");
  }
  value_ = &value;
  key_ = &k;
  mask_ = &attention_mask;
  struct Reset {
    MultiHeadAttention* self;
    ~Reset() { self->value_ = self->key_ = self->mask_ = nullptr; }
  } reset{this};
  return Layer::operator()(query, training, site);
}

Tensor MultiHeadAttention::call(const Tensor& inputs, bool training, CallSite site) {
  if (value_) return attend(inputs, *value_, *key_, *mask_, training, site);
  return attend(inputs, inputs, inputs, Tensor(), training, site);
}

Tensor MultiHeadAttention::attend(const Tensor& query, const Tensor& value, const Tensor& key,
                                  const Tensor& mask, bool training, CallSite site) {
  const size_t stride = options_.use_bias ? 2 : 1;
  auto kernel = [&](int p) { return weights_[size_t(p) * stride].second.read(); };
  auto bias = [&](int p) { return weights_[size_t(p) * stride + 1].second.read(); };
  // [batch, steps, features] -> [batch, steps, heads, dim].
  auto project = [&](const Tensor& x, int p) {
    Tensor y = einsum("abc,cde->abde", {x, kernel(p)}, site);
    return options_.use_bias ? add(y, bias(p), site) : y;
  };
  Tensor q = mul(project(query, kQuery), 1.0 / std::sqrt(double(key_dim_)), site);
  Tensor k = project(key, kKey);
  Tensor v = project(value, kValue);
  // [batch, heads, query steps, key steps].
  Tensor scores = einsum("aecd,abcd->acbe", {k, q}, site);
  if (mask.defined()) {
    // Keras adds a large negative number where the mask is false.
    Tensor m = expand_dims(cast(mask, scores.dtype(), site), 1, site);
    scores = add(scores, mul(sub(m, 1.0, site), 1e9, site), site);
  }
  Tensor probs = softmax(scores, -1, site);
  if (training && options_.dropout > 0)
    probs = dropout(probs, options_.dropout, options_.seed, true, site);
  Tensor context = einsum("acbe,aecd->abcd", {probs, v}, site);  // [batch, T, heads, value_dim]
  Tensor out = einsum("abcd,cde->abe", {context, kernel(kOutput)}, site);
  return options_.use_bias ? add(out, bias(kOutput), site) : out;
}

}  // namespace ag::layers
