// onnx_bench's LibTorch peer (torch_peer.h): a TorchScript model run as a
// PyTorch user deploys one for CPU inference.
#include <torch/script.h>

#include <stdexcept>

#include "torch_peer.h"

namespace ag_bench {

namespace {

// LibTorch's reason without its stack trace (c10::Error::what() has both).
template <class F>
auto without_backtrace(const F& f) {
  try {
    return f();
  } catch (const c10::Error& e) {
    throw std::runtime_error(e.what_without_backtrace());
  }
}

}  // namespace

struct TorchScriptModel::State {
  torch::jit::Module module;
  torch::Tensor input, output;
};

TorchScriptModel::TorchScriptModel(const std::string& path, const void* input,
                                   const std::vector<int64_t>& shape, bool int64)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  // As PyTorch advises for CPU inference: frozen (weights as constants,
  // batch norms folded into the convolutions) and oneDNN's layouts where
  // they pay, 1.4x (resnet18) to 1.8x (mobilenet_v2) faster than the trace
  // itself. A module so optimized does not save: it is made here, not by
  // the exporter.
  s.module = without_backtrace([&] {
    torch::jit::Module traced = torch::jit::load(path);
    traced.eval();
    return torch::jit::optimize_for_inference(traced);
  });
  s.input =
      torch::from_blob(const_cast<void*>(input), shape, int64 ? torch::kInt64 : torch::kFloat32)
          .clone();
}

TorchScriptModel::~TorchScriptModel() = default;

// The model's first output (a recurrent module's also gives its final state).
void TorchScriptModel::run() {
  c10::InferenceMode inference;
  state_->output = without_backtrace([&] {
    const c10::IValue out = state_->module.forward({state_->input});
    return out.isTuple() ? out.toTupleRef().elements()[0].toTensor() : out.toTensor();
  });
}

std::vector<float> TorchScriptModel::output() const {
  torch::Tensor c = state_->output.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

std::vector<int64_t> TorchScriptModel::output_shape() const {
  return state_->output.sizes().vec();
}

}  // namespace ag_bench
