// A layer's variables by their place in it, as ag::train::Checkpoint and
// ag::saved_model name them (tf.train.Checkpoint's paths). Internal.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ag/layers.h"

namespace ag::train::internal {

// Appends the variables of `layer` under `prefix` ("" for none): its own by
// their paths without the layer's name ("kernel"), a Sequential's k-th layer
// that has variables as "layer_with_weights-k". Not by the layers' names,
// which count the layers made so far: a second model's "conv2d_2" restores
// what the first saved as "conv2d".
void add_layer_variables(const layers::Layer& layer, const std::string& prefix,
                         std::vector<std::pair<std::string, Variable>>& out);

}  // namespace ag::train::internal
