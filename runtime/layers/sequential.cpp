// Keras's Sequential.
#include "ag/error.h"
#include "ag/layers.h"

namespace ag::layers {

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, std::string name)
    : Layer("sequential", std::move(name)) {
  for (auto& layer : layers) add(std::move(layer));
}

Sequential& Sequential::add(std::shared_ptr<Layer> layer) {
  if (!layer) throw InvalidArgumentError("Sequential '" + name() + "': add() got no layer");
  if (built())
    throw FailedPreconditionError("Sequential '" + name() + "': cannot add layer '" +
                                  layer->name() +
                                  "' after the model was built by its first call; add every "
                                  "layer before calling it");
  for (const auto& l : layers_) {
    if (l->name() == layer->name())
      throw InvalidArgumentError("Sequential '" + name() + "': it holds a layer named '" +
                                 layer->name() +
                                 "' already; layer names are variable paths, so give each "
                                 "layer a distinct name");
  }
  layers_.push_back(std::move(layer));
  return *this;
}

void Sequential::build_weights(const Shape&, DType, CallSite site) {
  if (layers_.empty())
    throw ValueError(where(site) + ": it has no layers; add() some before calling it");
}

void Sequential::build_layers(const Shape& input_shape, DType dtype, CallSite site) {
  // Keras builds a Sequential by running it on a symbolic input; here a
  // zero input of that shape (an unknown dim taken as 1) runs through it.
  Shape shape = input_shape;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] == kUnknownDim) shape.set_dim(i, 1);
  }
  call(zeros(shape, dtype), /*training=*/false, site);
}

Tensor Sequential::call(const Tensor& inputs, bool training, CallSite site) {
  Tensor x = inputs;
  for (const auto& layer : layers_) x = (*layer)(x, training, site);
  return x;
}

std::vector<std::pair<std::string, Variable>> Sequential::named_variables() const {
  std::vector<std::pair<std::string, Variable>> out;
  for (const auto& layer : layers_) {
    for (auto& [path, v] : layer->named_variables()) out.emplace_back(name() + "/" + path, v);
  }
  return out;
}

}  // namespace ag::layers
