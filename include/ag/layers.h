// Keras's layers, losses and metrics by their names: ag::layers::Dense,
// Conv2D, Sequential, ... are ag::Modules whose weights are ag::Variables made
// on the layer's first call from the input's shape (Keras's build), so the
// same layer runs eagerly and inside a traced ag::function:
//
//   ag::layers::Sequential model;
//   model.add(ag::layers::Conv2D(8, 3, {.activation = "relu"}));
//   model.add(ag::layers::MaxPool2D());
//   model.add(ag::layers::Flatten());
//   model.add(ag::layers::Dense(10));
//   ag::Tensor logits = model(images, /*training=*/true);
//   model.trainable_variables();   // "sequential/conv2d/kernel", ...
//
// Each layer is composed of ops, so its gradient, its graph and its ONNX
// export come from theirs. A first call inside a trace makes the weights
// eagerly (the variables' init_scope): their initial values never depend on
// the function's arguments. docs/layers.md has the Keras correspondences.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/function.h"
#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag::layers {

// Keras's initializers by name: "glorot_uniform", "glorot_normal",
// "he_uniform", "he_normal", "lecun_uniform", "zeros", "ones", "uniform"
// (RandomUniform(-0.05, 0.05), Embedding's), "orthogonal" (the recurrent
// kernels'). The values are made in C++ from the seed (an initializer
// without one takes the next of a process-wide sequence), never by graph
// ops, so they are the same eagerly and when a layer is built inside a trace.
struct Initializer {
  Initializer(const char* name) : name(name) {}
  Initializer(std::string name, std::optional<uint64_t> seed = std::nullopt)
      : name(std::move(name)), seed(seed) {}
  std::string name;
  std::optional<uint64_t> seed;
};

// Values of `shape` from `init`: fans as Keras computes them (a kernel's
// last dim is its outputs, the one before its inputs, the dims before those
// the receptive field). Another name is an InvalidArgumentError listing them.
Tensor initial_value(const Initializer& init, const Shape& shape, DType dtype = DType::float32);

// A pair of sizes (height, width); an integer gives both.
struct Dims2 {
  Dims2(int64_t n) : h(n), w(n) {}
  Dims2(int64_t h, int64_t w) : h(h), w(w) {}
  int64_t h, w;
};

// The base of every layer (Keras's Layer). Not copyable: a copy would share
// the variables; move it (into a Sequential, say) instead.
class Layer : public Module {
 public:
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;
  Layer(Layer&&) = default;
  ~Layer() override = default;

  // Builds the layer on its first call, checks the input against what it
  // was built for (rank, the dims its weights fix), and runs it. `training`
  // selects the training behaviour of Dropout, BatchNormalization and
  // MultiHeadAttention's dropout.
  Tensor operator()(const Tensor& inputs, bool training = false,
                    CallSite site = CallSite::current());
  // Makes the weights for inputs of `input_shape` now (its batch dim may be
  // unknown; a Sequential runs its layers once on zeros of that shape to
  // build them); does nothing once built.
  void build(const Shape& input_shape, DType dtype = DType::float32,
             CallSite site = CallSite::current());
  bool built() const { return built_; }

  // "dense", "dense_1", ...: Keras's names, unique per process; or the name
  // given to the constructor.
  const std::string& name() const { return name_; }
  // Keras's class name: "Dense", "Conv2D", ...
  virtual std::string_view class_name() const = 0;

  // (path, variable), paths as Keras's variable names: "dense/kernel",
  // "sequential/conv2d_1/bias". Empty before the layer is built.
  virtual std::vector<std::pair<std::string, Variable>> named_variables() const;
  std::vector<Variable> variables() const;
  std::vector<Variable> trainable_variables() const;
  // BatchNormalization's moving_mean and moving_variance.
  std::vector<Variable> non_trainable_variables() const;

 protected:
  Layer(std::string_view default_name, std::string name);

  // The input's expected rank, as Keras's InputSpec (0: any rank of at
  // least min_input_rank()).
  virtual int64_t input_rank() const { return 0; }
  virtual int64_t min_input_rank() const { return 1; }
  // Makes the weights; `input_shape` passed the rank check.
  virtual void build_weights(const Shape& input_shape, DType dtype, CallSite site);
  // What build() does after build_weights, but a first call does not: the
  // call builds the sublayers itself.
  virtual void build_layers(const Shape&, DType, CallSite) {}
  virtual Tensor call(const Tensor& inputs, bool training, CallSite site) = 0;
  // The axis whose size the weights fix (negative: from the end), or 0 for
  // none.
  virtual int64_t fixed_axis() const { return 0; }

  Variable add_weight(const std::string& name, const Shape& shape, const Initializer& init,
                      DType dtype, bool trainable = true);
  // "layer 'dense' (Dense) called at main.cpp:12": the start of its errors.
  std::string where(CallSite site) const;
  // (path, variable) of this layer's own weights, in the order made.
  std::vector<std::pair<std::string, Variable>> weights_ = {};

 private:
  void check_input(const Shape& shape, CallSite site) const;
  void build_weights_once(const Shape& input_shape, DType dtype, CallSite site);

  std::string name_;
  bool built_ = false;
  int64_t built_fixed_dim_ = -1;
};

// The activation of Dense and the convolutions: "" (none, Keras's None),
// "linear", "relu", "tanh", "sigmoid", "softmax", "elu", "selu",
// "softplus", "softsign", "hard_sigmoid".
Tensor activate(const Tensor& x, const std::string& activation, CallSite site);
// An InvalidArgumentError listing the names unless `activation` is one.
void check_activation(const std::string& activation);

// ---- Dense ------------------------------------------------------------------

struct DenseOptions {
  std::string activation = "";
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "";
};

// Keras's Dense: activation(inputs @ kernel + bias) on the last axis;
// kernel [in, units], bias [units]. Inputs of rank 2 or more.
class Dense : public Layer {
 public:
  explicit Dense(int64_t units, DenseOptions options = {});
  std::string_view class_name() const override { return "Dense"; }
  int64_t units() const { return units_; }

 protected:
  int64_t min_input_rank() const override { return 2; }
  int64_t fixed_axis() const override { return -1; }
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  int64_t units_;
  DenseOptions options_;
};

// ---- Convolutions -------------------------------------------------------------

struct ConvOptions {
  Dims2 strides = 1;
  std::string padding = "valid";              // or "same"
  std::string data_format = "channels_last";  // or "channels_first"
  Dims2 dilation_rate = 1;
  std::string activation = "";
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::string name = "";
};

// Keras's Conv2D: kernel [kh, kw, in_channels, filters], bias [filters];
// inputs [batch, height, width, channels] (channels_first: [batch, channels,
// height, width]).
class Conv2D : public Layer {
 public:
  Conv2D(int64_t filters, Dims2 kernel_size, ConvOptions options = {});
  std::string_view class_name() const override { return "Conv2D"; }

 protected:
  Conv2D(std::string_view default_name, int64_t filters, Dims2 kernel_size, ConvOptions options,
         int64_t spatial_dims);
  int64_t input_rank() const override { return spatial_dims_ + 2; }
  int64_t fixed_axis() const override;
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  int64_t filters_;
  Dims2 kernel_size_;
  ConvOptions options_;
  int64_t spatial_dims_;
};

// Keras's Conv1D: kernel [kernel_size, in_channels, filters]; inputs
// [batch, steps, channels]. The options' pairs use their first value.
class Conv1D : public Conv2D {
 public:
  Conv1D(int64_t filters, int64_t kernel_size, ConvOptions options = {});
  std::string_view class_name() const override { return "Conv1D"; }
};

// ---- Pooling ------------------------------------------------------------------

struct PoolOptions {
  std::optional<Dims2> strides = std::nullopt;  // the pool size when not given
  std::string padding = "valid";
  std::string data_format = "channels_last";
  std::string name = "";
};

// Keras's MaxPool2D (MaxPooling2D) and AveragePooling2D on [batch, height,
// width, channels]; an average counts only the positions inside the input.
class MaxPool2D : public Layer {
 public:
  explicit MaxPool2D(Dims2 pool_size = 2, PoolOptions options = {});
  std::string_view class_name() const override { return "MaxPool2D"; }

 protected:
  MaxPool2D(std::string_view default_name, Dims2 pool_size, PoolOptions options, bool average);
  int64_t input_rank() const override { return 4; }
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  Dims2 pool_size_;
  PoolOptions options_;
  bool average_;
};
using MaxPooling2D = MaxPool2D;

class AveragePooling2D : public MaxPool2D {
 public:
  explicit AveragePooling2D(Dims2 pool_size = 2, PoolOptions options = {});
  std::string_view class_name() const override { return "AveragePooling2D"; }
};
using AvgPool2D = AveragePooling2D;

struct GlobalPoolOptions {
  std::string data_format = "channels_last";
  bool keepdims = false;
  std::string name = "";
};

// Keras's GlobalAveragePooling2D: the mean over height and width.
class GlobalAveragePooling2D : public Layer {
 public:
  explicit GlobalAveragePooling2D(GlobalPoolOptions options = {});
  std::string_view class_name() const override { return "GlobalAveragePooling2D"; }

 protected:
  int64_t input_rank() const override { return 4; }
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  GlobalPoolOptions options_;
};

// ---- Shapes and regularisation -------------------------------------------------

// Keras's Flatten: [batch, ...] -> [batch, product of the rest]
// (channels_first inputs are first moved to channels_last, as Keras does).
class Flatten : public Layer {
 public:
  explicit Flatten(std::string data_format = "channels_last", std::string name = "");
  std::string_view class_name() const override { return "Flatten"; }

 protected:
  int64_t min_input_rank() const override { return 1; }
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  std::string data_format_;
};

// Keras's Dropout: with training, each element kept with probability
// 1 - rate and scaled by 1 / (1 - rate) (ag::dropout); without, the input.
class Dropout : public Layer {
 public:
  explicit Dropout(double rate, std::optional<uint64_t> seed = std::nullopt, std::string name = "");
  std::string_view class_name() const override { return "Dropout"; }

 protected:
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  double rate_;
  std::optional<uint64_t> seed_;
};

// ---- Normalisation -------------------------------------------------------------

struct BatchNormalizationOptions {
  int64_t axis = -1;
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;  // beta
  bool scale = true;   // gamma
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  Initializer moving_mean_initializer = "zeros";
  Initializer moving_variance_initializer = "ones";
  std::string name = "";
};

// Keras's BatchNormalization. Training: normalised by the batch's mean and
// (biased) variance over every axis but `axis`, and the moving statistics
// move towards them: moving = moving * momentum + batch * (1 - momentum).
// Inference: normalised by the moving statistics.
class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(BatchNormalizationOptions options = {});
  std::string_view class_name() const override { return "BatchNormalization"; }

 protected:
  int64_t fixed_axis() const override { return options_.axis; }
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  BatchNormalizationOptions options_;
  int64_t rank_ = 0, axis_ = 0;  // axis_ non-negative, both set by the build
  std::optional<Variable> gamma_, beta_, moving_mean_, moving_variance_;
};

struct LayerNormalizationOptions {
  int64_t axis = -1;  // the last axis only
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  Initializer beta_initializer = "zeros";
  Initializer gamma_initializer = "ones";
  std::string name = "";
};

// Keras's LayerNormalization over the last axis: gamma and beta [features].
class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(LayerNormalizationOptions options = {});
  std::string_view class_name() const override { return "LayerNormalization"; }

 protected:
  int64_t fixed_axis() const override { return -1; }
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  LayerNormalizationOptions options_;
};

// ---- Embedding ----------------------------------------------------------------

struct EmbeddingOptions {
  Initializer embeddings_initializer = "uniform";
  std::string name = "";
};

// Keras's Embedding: integer indices in [0, input_dim) -> rows of
// embeddings [input_dim, output_dim]; the output has one more axis.
class Embedding : public Layer {
 public:
  Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options = {});
  std::string_view class_name() const override { return "Embedding"; }

 protected:
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  int64_t input_dim_, output_dim_;
  EmbeddingOptions options_;
};

// ---- Recurrent ------------------------------------------------------------------

struct RecurrentOptions {
  std::string activation = "tanh";
  std::string recurrent_activation = "sigmoid";
  bool use_bias = true;
  Initializer kernel_initializer = "glorot_uniform";
  Initializer recurrent_initializer = "orthogonal";
  Initializer bias_initializer = "zeros";
  // LSTM: the forget gate's bias starts at 1 (Keras's unit_forget_bias).
  bool unit_forget_bias = true;
  // GRU: r multiplies the recurrent kernel's product (Keras's default).
  bool reset_after = true;
  // The output at every step [batch, time, units], not only the last one.
  bool return_sequences = false;
  // Over the sequence from its end (the outputs then run backwards too).
  bool go_backwards = false;
  std::string name = "";
};

// Keras's LSTM and GRU over inputs [batch, time, features], from zero
// states, with ag::rnn's cells (Keras's weight layouts and gate orders):
// kernel [features, gates * units], recurrent_kernel [units, gates * units],
// bias [gates * units] (GRU with reset_after: [2, 3 * units]). Traced, the
// loop over time is one While node.
class LSTM : public Layer {
 public:
  explicit LSTM(int64_t units, RecurrentOptions options = {});
  std::string_view class_name() const override { return "LSTM"; }

 protected:
  LSTM(std::string_view default_name, int64_t units, RecurrentOptions options, int64_t gates);
  int64_t input_rank() const override { return 3; }
  int64_t fixed_axis() const override { return -1; }
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  int64_t units_;
  RecurrentOptions options_;
  int64_t gates_;
};

class GRU : public LSTM {
 public:
  explicit GRU(int64_t units, RecurrentOptions options = {});
  std::string_view class_name() const override { return "GRU"; }
};

// ---- Attention -------------------------------------------------------------------

struct MultiHeadAttentionOptions {
  std::optional<int64_t> value_dim = std::nullopt;  // key_dim when not given
  double dropout = 0.0;                             // on the attention scores, in training
  bool use_bias = true;
  std::optional<int64_t> output_shape = std::nullopt;  // the query's features when not given
  Initializer kernel_initializer = "glorot_uniform";
  Initializer bias_initializer = "zeros";
  std::optional<uint64_t> seed = std::nullopt;  // the dropout's
  std::string name = "";
};

// Keras's MultiHeadAttention on [batch, steps, features] inputs: the query,
// key and value projected per head (query/kernel [query features, heads,
// key_dim], key/kernel, value/kernel [value features, heads, value_dim], a
// bias [heads, dim] each), softmax(q k^T / sqrt(key_dim)) over the key's
// steps, and the heads' results projected back (attention_output/kernel
// [heads, value_dim, output features]). layer(x) is self-attention.
class MultiHeadAttention : public Layer {
 public:
  MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options = {});
  std::string_view class_name() const override { return "MultiHeadAttention"; }

  using Layer::operator();
  // Keras's call(query, value, key, attention_mask): key (undefined: the
  // value) [batch, S, features]; attention_mask (optional) bool or 0/1
  // [batch, T, S], true where a query step may attend to a key step.
  Tensor operator()(const Tensor& query, const Tensor& value, const Tensor& key,
                    const Tensor& attention_mask = Tensor(), bool training = false,
                    CallSite site = CallSite::current());

 protected:
  int64_t input_rank() const override { return 3; }
  int64_t fixed_axis() const override { return -1; }
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  Tensor attend(const Tensor& query, const Tensor& value, const Tensor& key, const Tensor& mask,
                bool training, CallSite site);

  int64_t num_heads_, key_dim_;
  MultiHeadAttentionOptions options_;
  // The value and key of a call with them, while it runs (the base's call
  // takes one input).
  const Tensor* value_ = nullptr;
  const Tensor* key_ = nullptr;
  const Tensor* mask_ = nullptr;
};

// ---- Sequential -------------------------------------------------------------------

// Keras's Sequential: its layers called in order, each on the previous one's
// output, with the same `training`. Its variables' paths are its name, then
// each layer's: "sequential/dense/kernel".
class Sequential : public Layer {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers = {}, std::string name = "");
  std::string_view class_name() const override { return "Sequential"; }

  // Appends a layer (moved in, or shared).
  template <class L>
    requires std::is_base_of_v<Layer, std::decay_t<L>> && (!std::is_lvalue_reference_v<L>)
  Sequential& add(L&& layer) {
    return add(std::shared_ptr<Layer>(std::make_shared<std::decay_t<L>>(std::forward<L>(layer))));
  }
  Sequential& add(std::shared_ptr<Layer> layer);
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }

  std::vector<std::pair<std::string, Variable>> named_variables() const override;

 protected:
  void build_weights(const Shape& input_shape, DType dtype, CallSite site) override;
  void build_layers(const Shape& input_shape, DType dtype, CallSite site) override;
  Tensor call(const Tensor& inputs, bool training, CallSite site) override;

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace ag::layers

namespace ag::losses {

// Keras's loss classes: callable as loss(y_true, y_pred), the mean over the
// batch of the per-example loss (Keras's default reduction,
// sum_over_batch_size).
class SparseCategoricalCrossentropy {
 public:
  explicit SparseCategoricalCrossentropy(bool from_logits = false) : from_logits_(from_logits) {}
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred,
                    CallSite site = CallSite::current()) const;

 private:
  bool from_logits_;
};

class MeanSquaredError {
 public:
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred,
                    CallSite site = CallSite::current()) const;
};

}  // namespace ag::losses

namespace ag::metrics {

// Keras's metrics: update_state accumulates a batch in two float32
// Variables (total, count), so an update traces into a train step too;
// result() is total / count (0 before any update); reset_state() zeroes both.
class Metric {
 public:
  virtual ~Metric() = default;
  Tensor result() const;
  void reset_state();
  const std::string& name() const { return name_; }
  std::vector<Variable> variables() const { return {total_, count_}; }

 protected:
  explicit Metric(std::string name);
  // Adds `matches` (1 where right, 0 where wrong) to the state.
  void accumulate(const Tensor& matches, CallSite site);

 private:
  std::string name_;
  Variable total_;
  Variable count_;
};

// Keras's Accuracy: how often y_pred equals y_true (compared after casting
// y_pred to y_true's dtype).
class Accuracy : public Metric {
 public:
  explicit Accuracy(std::string name = "accuracy") : Metric(std::move(name)) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    CallSite site = CallSite::current());
};

// Keras's SparseCategoricalAccuracy: how often argmax(y_pred, -1) equals the
// integer label y_true (of y_pred's shape without its last axis, or with a
// last axis of 1).
class SparseCategoricalAccuracy : public Metric {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy")
      : Metric(std::move(name)) {}
  void update_state(const Tensor& y_true, const Tensor& y_pred,
                    CallSite site = CallSite::current());
};

}  // namespace ag::metrics
