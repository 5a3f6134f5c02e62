// SavedModel: traced functions saved with their variables, callable later
// without the source and without agc (tf.saved_model). Built on ONNX: the
// folder holds one ONNX model per signature, which ONNX's tools and engines
// read as they are (each variable an initializer holding its value at save
// time), and a manifest naming them.
//
//   ag::saved_model::save("exported", {{"serve", serve.graph()},
//                                      {"embed", embed.graph()}});
//   ag::saved_model::SavedModel m = ag::saved_model::load("exported");
//   std::vector<ag::Tensor> y = m.signature("serve")({x});
//   m.variable("dense/kernel").assign(new_kernel);  // read by every signature
//
// A signature is the graph of a traced function, a ConcreteFunction's
// graph() (trace it with an input_signature for None dims). The variables
// the signatures read are saved once each, by their names ("w", then "w_1"
// for a second variable named "w"), and loaded as ag::Variables that every
// signature reads on each call: assigning one changes what the signatures
// compute, as a restored tf.Variable does. A signature that assigns
// variables cannot be saved (ONNX has no state): save the functions that
// compute, and train in C++.
// Link with autograph_cpp::ag_onnx.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ag/function.h"
#include "ag/onnx.h"
#include "ag/variable.h"

namespace ag::saved_model {

// A signature's name (a file name: letters, digits, '_' and '-') and graph.
struct Signature {
  std::string name;
  Graph graph;
};

// Writes the signatures and the variables they read into the folder `dir`
// (made if missing): "<name>.onnx" per signature and "saved_model.txt".
void save(const std::string& dir, const std::vector<Signature>& signatures);

class SavedModel {
 public:
  // The signatures' names, in the order they were saved.
  std::vector<std::string> signature_names() const;
  // A signature, as a loaded ONNX model: call it with its inputs.
  const onnx::Model& signature(const std::string& name) const;
  // The saved variables, by their saved names, in the order the signatures
  // read them.
  const std::vector<std::pair<std::string, Variable>>& variables() const;
  Variable variable(const std::string& name) const;

  struct Impl;
  explicit SavedModel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// Reads what save() wrote. A missing folder or manifest is a NotFoundError,
// a manifest or model that does not parse a DataLossError.
SavedModel load(const std::string& dir);

}  // namespace ag::saved_model
