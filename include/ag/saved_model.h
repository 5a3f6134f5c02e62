// SavedModel: traced functions saved with their variables, callable later
// without the source and without agc (tf.saved_model). Built on ONNX: the
// folder holds one ONNX model per signature, which ONNX's tools and engines
// read as they are (each variable an initializer holding its value at save
// time), and a manifest naming them.
//
//   ag::saved_model::save(model, "exported", {{"serve", serve},     // ag::function with an
//                                             {"embed", embed}});  // input_signature
//   ag::saved_model::SavedModel m = ag::saved_model::load("exported");
//   std::vector<ag::Tensor> y = m.signature("serve")({x});
//   m.variable("w").assign(new_w);  // read by every signature
//
// tf.saved_model.save(obj, export_dir, signatures): a signature is a traced
// function: an ag::function with an input_signature (its trace for it; None
// dims accept any size), a ConcreteFunction, or a graph. The module's
// variables are saved once each, by their paths: a layer's (or a
// Sequential's) as ag::train::Checkpoint names them ("kernel",
// "layer_with_weights-0/kernel"), all of them, read by a signature or not;
// for any other ag::Module, the variables its signatures read, by their names
// ("w", then "w_1" for a second variable named "w"). They are loaded as
// ag::Variables that every signature reads on each call: assigning one
// changes what the signatures compute, as a restored tf.Variable does. A
// signature that assigns variables cannot be saved (ONNX has no state): save
// the functions that compute, and train in C++.
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
  Signature(std::string name, Graph graph) : name(std::move(name)), graph(std::move(graph)) {}
  // The graph of a concrete function.
  template <class R>
  Signature(std::string name, const ConcreteFunction<R>& f)
      : Signature(std::move(name), f.graph()) {}
  // The trace of a function for its input_signature (tf.function's
  // get_concrete_function()).
  template <class F>
  Signature(std::string name, const PolymorphicFunction<F>& f)
      : Signature(std::move(name), f.get_concrete_function().graph()) {}

  std::string name;
  Graph graph;
};

// Writes the signatures and the module's variables into the folder `dir`
// (made if missing): "<name>.onnx" per signature, "variables.pb" (the
// variables' values, as the initializers of an ONNX ModelProto) and
// "saved_model.txt". A variable a signature reads that a layer does not hold
// is an InvalidArgumentError (a SavedModel holds its object's variables).
void save(const Module& module, const std::string& dir, const std::vector<Signature>& signatures);
// One function, as the signature "serving_default" (tf.saved_model.save
// with signatures=f).
template <class F>
void save(const Module& module, const std::string& dir, const PolymorphicFunction<F>& f) {
  save(module, dir, {Signature("serving_default", f)});
}
// The same for the variables the signatures read, without a module.
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
