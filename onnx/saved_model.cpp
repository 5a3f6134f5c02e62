// ag::saved_model (ag/saved_model.h). The folder:
//   saved_model.txt  "autograph-cpp saved model 1", then a line
//                    "signature <name>" per signature and "variable <name>"
//                    per variable, in order;
//   <name>.onnx      each signature's model, as ag::onnx::save writes it,
//                    with a metadata entry "ag.variable.<initializer>" =
//                    "<variable name>" for each variable it reads;
//   variables.pb     a ModelProto whose graph's initializers are the
//                    variables' values, by their saved names (the variables
//                    no signature reads among them).
#include "ag/saved_model.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ag/error.h"
#include "ag/layers.h"
#include "exporter.h"
#include "graph/variable_state.h"
#include "importer.h"
#include "tensor_proto.h"
#include "train/layer_paths.h"

namespace ag::saved_model {
namespace {

const char* const kManifest = "saved_model.txt";
const char* const kHeader = "autograph-cpp saved model 1";
const char* const kVariableKey = "ag.variable.";
const char* const kVariablesFile = "variables.pb";

void check_signature_names(const std::vector<Signature>& signatures) {
  if (signatures.empty())
    throw InvalidArgumentError("saved_model::save: no signatures; give at least one");
  std::set<std::string> seen;
  for (const Signature& s : signatures) {
    const bool file_name = !s.name.empty() && std::all_of(s.name.begin(), s.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    if (!file_name) {
      throw InvalidArgumentError("saved_model::save: the signature name '" + s.name +
                                 "' cannot name a file of the saved model: use letters, digits, "
                                 "'_' and '-'");
    }
    if (!seen.insert(s.name).second)
      throw InvalidArgumentError("saved_model::save: two signatures are named '" + s.name + "'");
  }
}

// Saved names for the variables: the module's paths, or each variable's own
// name, made distinct.
class VariableNames {
 public:
  // `held`: the module's variables by their paths, or null.
  explicit VariableNames(const std::vector<std::pair<std::string, Variable>>* held)
      : held_(held != nullptr) {
    if (!held) return;
    for (const auto& [path, v] : *held) {
      if (!taken_.insert(path).second)
        throw InvalidArgumentError(
            "saved_model::save: two of the module's variables have the "
            "path '" +
            path + "'");
      names_.emplace_back(v.state(), path);
    }
  }

  // The saved name of a variable the signature `signature` reads.
  const std::string& of(const std::shared_ptr<detail::VariableState>& v,
                        const std::string& signature) {
    for (const auto& [state, name] : names_) {
      if (state == v) return name;
    }
    if (held_)
      throw InvalidArgumentError(
          "saved_model::save: signature '" + signature + "' reads the variable '" + v->name +
          "', which the module does not hold; a SavedModel saves its module's variables: save "
          "the layer that holds it, or read a variable of this module");
    const std::string base = v->name.empty() ? "Variable" : v->name;
    std::string name = base;
    for (int k = 1; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
    taken_.insert(name);
    names_.emplace_back(v, name);
    return names_.back().second;
  }
  // (variable, saved name), the module's first, then in the order read.
  const std::vector<std::pair<std::shared_ptr<detail::VariableState>, std::string>>& all() const {
    return names_;
  }

 private:
  bool held_;
  std::vector<std::pair<std::shared_ptr<detail::VariableState>, std::string>> names_;
  std::set<std::string> taken_;
};

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  const std::filesystem::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(bytes.data(), std::streamsize(bytes.size()))) {
      throw FailedPreconditionError("saved_model::save: cannot write '" + path.string() +
                                    "' (is its folder writable?)");
    }
  }
  std::filesystem::rename(partial, path);
}

std::string read_file(const std::filesystem::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw NotFoundError("saved_model::load: " + what + " '" + path.string() + "' is missing");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

namespace {

// The variables' values, as the initializers of a model without nodes.
std::string variables_file(const VariableNames& names) {
  ::onnx::ModelProto model;
  model.set_ir_version(::onnx::IR_VERSION);
  model.mutable_graph()->set_name("variables");
  for (const auto& [state, name] : names.all()) {
    Tensor value;
    {
      std::lock_guard lock(state->mu);
      value = state->value;
    }
    *model.mutable_graph()->add_initializer() = onnx_io::tensor_to_proto(value, name);
  }
  return model.SerializeAsString();
}

// Both forms of save: `held` is the module's variables by path, or null to
// name the variables the signatures read by their own names.
void save_signatures(const std::string& dir, const std::vector<Signature>& signatures,
                     const std::vector<std::pair<std::string, Variable>>* held) {
  check_signature_names(signatures);
  VariableNames names(held);
  std::vector<std::pair<std::string, std::string>> models;  // (file, bytes)
  for (const Signature& s : signatures) {
    onnx_io::ExportedVariables variables;
    ::onnx::ModelProto model = onnx_io::export_model(s.graph, {.graph_name = s.name}, &variables);
    for (const auto& [initializer, state] : variables) {
      auto* entry = model.add_metadata_props();
      entry->set_key(kVariableKey + initializer);
      entry->set_value(names.of(state, s.name));
    }
    models.emplace_back(s.name + ".onnx", model.SerializeAsString());
  }
  models.emplace_back(kVariablesFile, variables_file(names));
  std::string manifest = std::string(kHeader) + "\n";
  for (const Signature& s : signatures) manifest += "signature " + s.name + "\n";
  for (const auto& [state, name] : names.all()) manifest += "variable " + name + "\n";
  std::filesystem::create_directories(dir);
  for (const auto& [file, bytes] : models) write_file(std::filesystem::path(dir) / file, bytes);
  write_file(std::filesystem::path(dir) / kManifest, manifest);
}

}  // namespace

void save(const Module& module, const std::string& dir, const std::vector<Signature>& signatures) {
  const auto* layer = dynamic_cast<const layers::Layer*>(&module);
  if (!layer) return save_signatures(dir, signatures, nullptr);
  if (!layer->built())
    throw FailedPreconditionError("saved_model::save: layer '" + layer->name() +
                                  "' has no variables yet: call it once (or build(input_shape)) "
                                  "before saving it");
  std::vector<std::pair<std::string, Variable>> held;
  train::internal::add_layer_variables(*layer, "", held);
  save_signatures(dir, signatures, &held);
}

void save(const std::string& dir, const std::vector<Signature>& signatures) {
  save_signatures(dir, signatures, nullptr);
}

struct SavedModel::Impl {
  std::vector<std::string> signature_names;
  std::map<std::string, onnx::Model> signatures;
  std::vector<std::pair<std::string, Variable>> variables;
};

namespace {

struct Manifest {
  std::vector<std::string> signatures, variables;
};

Manifest read_manifest(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    throw NotFoundError("saved_model::load: no folder '" + dir.string() + "'");
  std::istringstream text(read_file(dir / kManifest, "the manifest"));
  std::string line;
  if (!std::getline(text, line) || line != kHeader) {
    throw DataLossError("saved_model::load: '" + (dir / kManifest).string() +
                        "' does not start with '" + kHeader +
                        "': not a saved model of this "
                        "version, or damaged");
  }
  Manifest m;
  while (std::getline(text, line)) {
    if (line.rfind("signature ", 0) == 0) {
      m.signatures.push_back(line.substr(10));
    } else if (line.rfind("variable ", 0) == 0) {
      m.variables.push_back(line.substr(9));
    } else if (!line.empty()) {
      throw DataLossError("saved_model::load: '" + (dir / kManifest).string() +
                          "' has a line it cannot read: '" + line + "'");
    }
  }
  return m;
}

// The signature's model, its variable initializers bound to `variables`
// (made from the first signature that holds each).
onnx::Model load_signature(const std::filesystem::path& file, const std::string& name,
                           std::map<std::string, Variable>& variables) {
  auto model = std::make_shared<::onnx::ModelProto>();
  if (!model->ParseFromString(read_file(file, "the model of signature '" + name + "'")))
    throw DataLossError("saved_model::load: '" + file.string() + "' is not an ONNX model");
  std::map<std::string, std::string> saved_names;  // initializer -> variable
  for (const auto& entry : model->metadata_props()) {
    if (entry.key().rfind(kVariableKey, 0) == 0)
      saved_names[entry.key().substr(std::string(kVariableKey).size())] = entry.value();
  }
  onnx_io::InitializerVariables bound;
  for (const auto& init : model->graph().initializer()) {
    auto saved = saved_names.find(init.name());
    if (saved == saved_names.end()) continue;
    auto it = variables.find(saved->second);
    if (it == variables.end()) {
      Tensor value = onnx_io::tensor_from_proto(init, "variable '" + saved->second + "'");
      it = variables.emplace(saved->second, Variable(value, saved->second)).first;
    }
    bound.emplace(init.name(), it->second);
  }
  return onnx_io::load_with_variables(std::move(model), file.string(), std::move(bound));
}

// The variables of variables.pb, by their saved names (none for a folder
// without it: the signatures' initializers hold the values then).
std::map<std::string, Variable> load_variables(const std::filesystem::path& dir) {
  std::map<std::string, Variable> variables;
  const std::filesystem::path file = dir / kVariablesFile;
  if (!std::filesystem::exists(file)) return variables;
  ::onnx::ModelProto model;
  if (!model.ParseFromString(read_file(file, "the variables file")))
    throw DataLossError("saved_model::load: '" + file.string() +
                        "' does not parse: the saved model is damaged");
  for (const auto& init : model.graph().initializer()) {
    Tensor value = onnx_io::tensor_from_proto(init, "variable '" + init.name() + "'");
    variables.emplace(init.name(), Variable(value, init.name()));
  }
  return variables;
}

}  // namespace

SavedModel load(const std::string& dir) {
  const Manifest manifest = read_manifest(dir);
  auto impl = std::make_shared<SavedModel::Impl>();
  std::map<std::string, Variable> variables = load_variables(dir);
  for (const std::string& name : manifest.signatures) {
    impl->signature_names.push_back(name);
    impl->signatures.emplace(
        name, load_signature(std::filesystem::path(dir) / (name + ".onnx"), name, variables));
  }
  for (const std::string& name : manifest.variables) {
    auto it = variables.find(name);
    if (it == variables.end()) {
      throw DataLossError("saved_model::load: the manifest of '" + dir + "' names variable '" +
                          name + "', which neither " + kVariablesFile +
                          " nor a signature's model holds");
    }
    impl->variables.emplace_back(name, it->second);
  }
  return SavedModel(std::move(impl));
}

std::vector<std::string> SavedModel::signature_names() const {
  return impl_->signature_names;
}

const onnx::Model& SavedModel::signature(const std::string& name) const {
  auto it = impl_->signatures.find(name);
  if (it == impl_->signatures.end()) {
    std::string known;
    for (const std::string& n : impl_->signature_names) known += (known.empty() ? "" : ", ") + n;
    throw InvalidArgumentError("SavedModel.signature: no signature named '" + name +
                               "'; the saved model has " + known);
  }
  return it->second;
}

const std::vector<std::pair<std::string, Variable>>& SavedModel::variables() const {
  return impl_->variables;
}

Variable SavedModel::variable(const std::string& name) const {
  for (const auto& [n, v] : impl_->variables) {
    if (n == name) return v;
  }
  throw InvalidArgumentError("SavedModel.variable: no variable named '" + name + "'");
}

}  // namespace ag::saved_model
