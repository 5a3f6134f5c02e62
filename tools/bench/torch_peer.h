// The benchmarks' LibTorch peers, from the same data and initial weights as
// the ag variants: the MLP training step (784-256-10, relu, mean softmax
// cross-entropy, plain SGD) with torch::autograd and torch::optim::SGD, the
// RNN loss (h = tanh(x_t W + h U + b) over the steps, the sum of the states)
// with and without its gradient, the LeNet training step (train_bench), and
// the guide's convolution (conv_bench). Each takes and gives row-major
// buffers in the ag layouts (NHWC images, HWIO filters) and keeps torch's own
// (NCHW, OIHW) inside, as a PyTorch user's model has them. Compiled only where
// CMake finds LibTorch (tools/bench/CMakeLists.txt, AG_BENCH_TORCH), so that
// the benchmarks themselves never include the torch headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ag_bench {

// LibTorch's intra-op threads: 1, as every benchmark here runs.
void use_one_torch_thread();

class TorchMlp {
 public:
  // Copies of the row-major weights ([in, hidden], [hidden], [hidden, out],
  // [out]), the batch x [batch, in] and its labels [batch].
  TorchMlp(int batch, int in, int hidden, int out, float learning_rate, const float* w1,
           const float* b1, const float* w2, const float* b2, const float* x,
           const int32_t* labels);
  ~TorchMlp();

  // Forward, backward (loss.backward()) and the SGD update; returns the loss.
  float train_step();
  // The current weights, row-major, for the result checks.
  std::vector<std::vector<float>> weights() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class TorchRnn {
 public:
  // Copies of x [batch, steps, units] and of w, u [units, units], b [units].
  TorchRnn(int64_t batch, int64_t steps, int64_t units, const float* x, const float* w,
           const float* u, const float* b);
  ~TorchRnn();

  // The loss without a gradient (under torch::NoGradGuard).
  float forward();
  // The loss, then loss.backward(): the gradients of w, u and b.
  float forward_backward();
  // dW, dU, db of the last forward_backward, row-major.
  std::vector<std::vector<float>> gradients() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// LeNet-5 on 28x28x1 images: conv 5x5 to 6 channels, relu, 2x2 max pool,
// conv 5x5 to 16, relu, 2x2 max pool, flatten (in NHWC order, as ag's
// reshape of an NHWC tensor flattens), dense 120, relu, dense 84, relu,
// dense 10; mean sparse softmax cross-entropy; plain SGD.
struct LenetWeights {
  // HWIO filters, [in, out] dense kernels, as ag's conv2d and matmul take them.
  std::vector<float> conv1, bias1, conv2, bias2, dense1, bias3, dense2, bias4, dense3, bias5;
};

class TorchLenet {
 public:
  // Copies of the weights, the batch x [batch, 28, 28, 1] and its labels.
  TorchLenet(int batch, float learning_rate, const LenetWeights& weights, const float* x,
             const int32_t* labels);
  ~TorchLenet();

  // Forward, backward and the SGD update; returns the loss.
  float train_step();
  // The current weights, in the ag layouts.
  LenetWeights weights() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A VALID, stride-1 convolution without bias (torch::conv2d), the image and
// the filter copied once to torch's NCHW and OIHW.
class TorchConv {
 public:
  // image [1, side, side, channels] (NHWC), filter [k, k, channels, filters] (HWIO).
  TorchConv(int64_t side, int64_t channels, int64_t filters, int64_t kernel, const float* image,
            const float* filter);
  ~TorchConv();

  // One call of the convolution, its result left in torch's layout.
  void run();
  // The last result, as NHWC.
  std::vector<float> result_nhwc() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ag_bench

namespace ag_bench {

// An LSTM language model's training step: tokens [batch, time] through
// torch::nn::Embedding, a one-layer batch-first torch::nn::LSTM and a
// torch::nn::Linear to the vocabulary; mean cross-entropy against the next
// tokens; plain SGD. The weights come in ag's layouts (Keras's LSTM kernels
// [input, 4 units] with gates i, f, c, o, which are torch's i, f, g, o
// transposed; a dense kernel [units, vocab]); torch's second LSTM bias,
// which ag's cell does not have, is zero and not trained.
struct LstmLmWeights {
  std::vector<float> embedding, kernel, recurrent_kernel, bias, dense, dense_bias;
};

class TorchLstmLm {
 public:
  TorchLstmLm(int64_t batch, int64_t time, int64_t vocab, int64_t embed, int64_t units,
              float learning_rate, const LstmLmWeights& weights, const int32_t* tokens,
              const int32_t* targets);
  ~TorchLstmLm();

  // Forward, backward and the SGD update; returns the loss.
  float train_step();
  // The current weights, in ag's layouts.
  LstmLmWeights weights() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A transformer encoder layer as torch::nn::TransformerEncoderLayer has it
// (post-norm, relu, no dropout, batch first): self-attention, add and
// layer norm, a feed-forward of two dense layers, add and layer norm. The
// weights come as ag's dense kernels [in, out] (query, key, value, output,
// ff1, ff2) with their biases, and the two norms' gamma and beta.
struct EncoderLayerWeights {
  std::vector<float> wq, bq, wk, bk, wv, bv, wo, bo, w1, b1, w2, b2, gamma1, beta1, gamma2, beta2;
};

class TorchEncoderLayer {
 public:
  TorchEncoderLayer(int64_t batch, int64_t time, int64_t width, int64_t heads, int64_t ff,
                    const EncoderLayerWeights& weights, const float* x, const float* probe);
  ~TorchEncoderLayer();

  // loss = sum(layer(x) * probe), then loss.backward(); returns the loss.
  float forward_backward();
  // The gradients of the last forward_backward, in EncoderLayerWeights'
  // order and ag's layouts.
  std::vector<std::vector<float>> gradients() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// examples/digits's CNN on 8x8x1 images: conv 3x3 "same" to 16 channels,
// relu, 2x2 max pool, conv 3x3 "same" to 32, relu, 2x2 max pool, flatten (in
// NHWC order), dense 10; mean sparse softmax cross-entropy; Adam, its
// epsilon placed as Keras's (1e-7) for the first step.
struct DigitsCnnWeights {
  // HWIO filters and an [in, out] dense kernel, as ag's layers hold them.
  std::vector<float> conv1, bias1, conv2, bias2, dense, bias3;
};

class TorchDigitsCnn {
 public:
  TorchDigitsCnn(int64_t batch, float learning_rate, const DigitsCnnWeights& weights,
                 const float* images, const int32_t* labels);
  ~TorchDigitsCnn();
  // Forward, backward and the Adam update; returns the loss.
  float train_step();
  // The current weights, in DigitsCnnWeights' order and ag's layouts.
  std::vector<std::vector<float>> weights() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ag_bench

namespace ag_bench {

// A model as a PyTorch user deploys it for CPU inference: the file
// torch.jit.trace saved (tests/onnx/torch_models.py --torchscript), loaded
// with torch::jit::load, in eval mode, through
// torch::jit::optimize_for_inference (frozen, batch norms folded, oneDNN's
// layouts), called under torch::InferenceMode on one float32 input
// (onnx_bench's <model>/torch rows; torch_script_peer.cpp).
class TorchScriptModel {
 public:
  // Loads `path` and copies the row-major input of `shape`, float32 or, with
  // `int64`, int64. Here and in run(), LibTorch's errors are thrown as
  // std::runtime_error with its reason.
  TorchScriptModel(const std::string& path, const void* input, const std::vector<int64_t>& shape,
                   bool int64 = false);
  ~TorchScriptModel();

  // One call of the model's forward; its output is kept.
  void run();
  // The last output, row-major, and its shape.
  std::vector<float> output() const;
  std::vector<int64_t> output_shape() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ag_bench
