// Keras's Embedding.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

Embedding::Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options)
    : Layer("embedding", options.name),
      input_dim_(input_dim),
      output_dim_(output_dim),
      options_(std::move(options)) {
  if (input_dim <= 0 || output_dim <= 0)
    throw InvalidArgumentError("Embedding: input_dim and output_dim must be positive");
}

void Embedding::build_weights(const Shape&, DType, CallSite) {
  // The input holds indices: the weights are float32 whatever its dtype.
  add_weight("embeddings", Shape{input_dim_, output_dim_}, options_.embeddings_initializer,
             DType::float32);
}

Tensor Embedding::call(const Tensor& inputs, bool, CallSite site) {
  Tensor indices = inputs;
  if (inputs.dtype() != DType::int32 && inputs.dtype() != DType::int64) {
    if (!is_floating(inputs.dtype()))
      throw InvalidArgumentError(where(site) + ": the input's dtype is " +
                                 std::string(dtype_name(inputs.dtype())) +
                                 "; Embedding takes integer indices (int32 or int64)");
    indices = cast(inputs, DType::int32, site);  // Keras casts float indices too
  }
  return gather(weights_[0].second.read(), indices, 0, site);
}

}  // namespace ag::layers
