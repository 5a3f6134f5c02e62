// ag::onnx::load: check the model with ONNX's checker, then trace its graph
// (onnx/importer.h) into a concrete function for the graph inputs' specs.
//
// An input whose value a node needs while tracing (Reshape's shape, the axes
// of a reduction, Slice's bounds) is a value the trace depends on, like a
// Python argument of tf.function: the model is then traced once per value of
// it, at the first call with that value.
#include <onnx/checker.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "ag/error.h"
#include "ag/onnx.h"
#include "graph/graph.h"
#include "importer.h"
#include "tensor_proto.h"

namespace ag::onnx {

// The highest opset of the default domain whose semantics we implement.
constexpr int64_t kMaxOpset = 17;

struct Model::Impl {
  std::string name;
  int64_t opset = 0;
  std::shared_ptr<const ::onnx::ModelProto> model;
  std::vector<std::string> input_names, output_names;
  std::vector<TensorSpec> input_specs;
  // Initializers read from these variables (a saved model's weights).
  onnx_io::InitializerVariables variables;

  // The trace for the values of the inputs it depends on; `by_value` lists
  // those inputs, and grows when a trace finds another one.
  using Key = std::vector<std::pair<size_t, std::vector<int64_t>>>;
  struct Trace {
    // Runs with detail::run_concrete: Model::operator() checks the inputs
    // itself, so a call skips ConcreteFunction's signature check and result
    // rebuilding, and costs what a call of the traced function costs.
    std::shared_ptr<detail::ConcreteCore> core;
    // The graph as traced and as optimised, their placeholders named after
    // the graph inputs they stand for.
    Graph graph;
    Graph optimized_graph;
  };
  mutable std::mutex mu;
  mutable std::vector<bool> by_value;
  // Entries are never removed, so pointers to them stay valid.
  mutable std::map<Key, Trace> traces;
  mutable const Trace* last = nullptr;
  // The trace made at load, when it needs the value of no input: then it is
  // the only one, and a call runs it without the lock and the lookup.
  const Trace* unspecialised = nullptr;

  Key key_of(const std::vector<Tensor>& inputs) const;
  // Traces for `inputs` (null at load: no values known). Empty when the trace
  // needs the value of an input and none is given.
  std::optional<Trace> trace(const std::vector<Tensor>* inputs) const;
  // The trace of the last call, or the one made at load; an error when the
  // model has run for no input values yet.
  const Trace& last_trace() const;
};

namespace {

int64_t default_opset(const ::onnx::ModelProto& model, const std::string& name) {
  for (const auto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") {
      if (import.version() > kMaxOpset) {
        throw UnimplementedError(name + ": opset " + std::to_string(import.version()) +
                                 " is newer than the newest we implement, " +
                                 std::to_string(kMaxOpset));
      }
      return import.version();
    }
  }
  throw InvalidArgumentError(name + ": the model imports no opset of the default ONNX domain");
}

// The model's inputs are one vector argument of the traced function, so the
// trace names their placeholders inputs_0, inputs_1, ...; the graph we show
// names them after the ONNX graph inputs.
Graph with_input_names(const Graph& traced, const std::vector<std::string>& names,
                       const std::string& model_name) {
  auto body = std::make_shared<graph::Body>(traced.body());
  for (size_t k = 0; k < names.size(); ++k)
    body->nodes[size_t(body->placeholders[k])].name = body->unique_name(names[k]);
  return Graph(body, model_name);
}

}  // namespace

Model::Impl::Key Model::Impl::key_of(const std::vector<Tensor>& inputs) const {
  Key key;
  for (size_t k = 0; k < by_value.size(); ++k)
    if (by_value[k]) key.emplace_back(k, inputs[k].to_vector<int64_t>());
  return key;
}

std::optional<Model::Impl::Trace> Model::Impl::trace(const std::vector<Tensor>* inputs) const {
  for (;;) {
    std::vector<TensorSpec> specs;
    std::vector<std::string> names;
    for (size_t k = 0; k < input_specs.size(); ++k) {
      if (by_value[k]) continue;
      specs.push_back(input_specs[k]);
      names.push_back(input_names[k]);
    }
    // The placeholder of each input traced symbolically, to recognise it in NeedsValue.
    std::vector<const void*> placeholder_ids(input_specs.size(), nullptr);
    auto run = [&](const std::vector<Tensor>& symbolic) {
      std::vector<Tensor> all;
      for (size_t k = 0, next = 0; k < input_specs.size(); ++k) {
        all.push_back(by_value[k] ? (*inputs)[k] : symbolic[next++]);
        if (!by_value[k]) placeholder_ids[k] = all.back().id();
      }
      return onnx_io::run_graph(model->graph(), all, nullptr, opset, &variables);
    };
    auto fn = function(run, {.name = name, .arg_names = {"inputs"}});
    try {
      // What fn.get_concrete_function(specs) does, keeping the trace's core.
      detail::Tracer<std::vector<Tensor>, decltype(run), std::vector<TensorSpec>&> tracer{
          &run, &fn.core()->options().arg_names, {specs}};
      auto core =
          fn.core()->concrete_for(detail::collect_atoms(specs), {&tracer, &decltype(tracer)::run});
      return Trace{core, with_input_names(detail::concrete_graph(*core), names, name),
                   with_input_names(detail::concrete_optimized_graph(*core), names, name)};
    } catch (const onnx_io::NeedsValue& need) {
      auto it = std::find(placeholder_ids.begin(), placeholder_ids.end(), need.tensor_id);
      if (it == placeholder_ids.end()) throw UnimplementedError(name + ": " + need.message);
      by_value[size_t(it - placeholder_ids.begin())] = true;
      if (!inputs) return std::nullopt;
    } catch (const Error& e) {
      onnx_io::rethrow_at(e, name);
    }
  }
}

namespace {

std::shared_ptr<const Model::Impl> load_model(std::shared_ptr<const ::onnx::ModelProto> model,
                                              const std::string& name,
                                              onnx_io::InitializerVariables variables) {
  try {
    ::onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    throw InvalidArgumentError(name + ": not a valid ONNX model: " + e.what());
  }
  const ::onnx::GraphProto& graph = model->graph();
  std::vector<std::string> initialized;
  for (const auto& init : graph.initializer()) initialized.push_back(init.name());

  auto impl = std::make_shared<Model::Impl>();
  impl->name = graph.name().empty() ? name : graph.name();
  impl->opset = default_opset(*model, name);
  impl->model = std::move(model);
  impl->variables = std::move(variables);
  for (const auto& in : graph.input()) {
    if (std::find(initialized.begin(), initialized.end(), in.name()) != initialized.end()) continue;
    impl->input_names.push_back(in.name());
    impl->input_specs.push_back(onnx_io::spec_from_value_info(in));
  }
  for (const auto& out : graph.output()) {
    if (out.type().has_sequence_type()) {
      throw UnimplementedError(name + ": graph output '" + out.name() +
                               "' is a sequence; ag::onnx::load returns tensors only (sequences "
                               "inside the graph are supported, as stacked tensors)");
    }
    impl->output_names.push_back(out.name());
  }
  impl->by_value.assign(impl->input_specs.size(), false);
  // Trace now, so that errors show at load; a model specialised on input
  // values is traced at its first call.
  if (auto traced = impl->trace(nullptr)) {
    impl->last = &impl->traces.emplace(Model::Impl::Key{}, std::move(*traced)).first->second;
    impl->unspecialised = impl->last;
  }
  return impl;
}

}  // namespace

Model load_from_bytes(const std::string& bytes, const std::string& name) {
  auto model = std::make_shared<::onnx::ModelProto>();
  if (!model->ParseFromString(bytes))
    throw InvalidArgumentError(name + ": not an ONNX model (the protobuf does not parse)");
  return Model(load_model(std::move(model), name, {}));
}

Model load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InvalidArgumentError(path + ": cannot open the file");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return load_from_bytes(bytes.str(), path);
}

std::vector<Tensor> Model::operator()(const std::vector<Tensor>& inputs) const {
  const Impl& m = *impl_;
  if (inputs.size() != m.input_specs.size()) {
    throw TypeError(m.name + " takes " + std::to_string(m.input_specs.size()) + " inputs, but " +
                    std::to_string(inputs.size()) + " were given; " + signature());
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorSpec& spec = m.input_specs[k];
    if (!inputs[k].defined() || inputs[k].dtype() != spec.dtype ||
        !inputs[k].shape().is_subtype_of(spec.shape)) {
      throw TypeError(m.name + ": input '" + m.input_names[k] + "' must be " + spec.to_string() +
                      ", got " +
                      (inputs[k].defined() ? inputs[k].spec().to_string() : "an undefined tensor"));
    }
  }
  const Impl::Trace* traced = m.unspecialised;
  // The inputs the trace takes; a few without allocating.
  graph::SmallVector<const Tensor*, 4> dynamic;
  if (traced) {
    for (const Tensor& input : inputs) dynamic.push_back(&input);
  } else {
    std::lock_guard lock(m.mu);
    auto it = m.traces.find(m.key_of(inputs));
    if (it == m.traces.end()) {
      Impl::Trace made = *m.trace(&inputs);  // may add to by_value, so before key_of
      it = m.traces.emplace(m.key_of(inputs), std::move(made)).first;
    }
    traced = &it->second;
    m.last = traced;
    for (size_t k = 0; k < inputs.size(); ++k)
      if (!m.by_value[k]) dynamic.push_back(&inputs[k]);
  }
  std::vector<Tensor> outputs;
  detail::run_concrete(*traced->core, dynamic, outputs);
  return outputs;
}

const std::vector<std::string>& Model::input_names() const {
  return impl_->input_names;
}
const std::vector<TensorSpec>& Model::input_specs() const {
  return impl_->input_specs;
}
const std::vector<std::string>& Model::output_names() const {
  return impl_->output_names;
}
int64_t Model::opset() const {
  return impl_->opset;
}

const Model::Impl::Trace& Model::Impl::last_trace() const {
  std::lock_guard lock(mu);
  if (!last) {
    throw FailedPreconditionError(name +
                                  ": the model is traced for the values of some of its inputs; "
                                  "call it once before asking for its graph");
  }
  return *last;
}

Graph Model::graph() const {
  return impl_->last_trace().graph;
}

Graph Model::optimized_graph() const {
  return impl_->last_trace().optimized_graph;
}

PlanStats Model::plan_stats() const {
  return detail::concrete_plan_stats(*impl_->last_trace().core);
}

std::string Model::signature() const {
  std::string s = impl_->name + "(";
  for (size_t k = 0; k < impl_->input_specs.size(); ++k) {
    if (k) s += ", ";
    s += impl_->input_names[k] + ": " + impl_->input_specs[k].to_string();
  }
  s += ") -> (";
  for (size_t k = 0; k < impl_->output_names.size(); ++k)
    s += (k ? ", " : "") + impl_->output_names[k];
  return s + ")";
}

}  // namespace ag::onnx

namespace ag::onnx_io {

onnx::Model load_with_variables(std::shared_ptr<const ::onnx::ModelProto> model,
                                const std::string& name, InitializerVariables variables) {
  return onnx::Model(onnx::load_model(std::move(model), name, std::move(variables)));
}

}  // namespace ag::onnx_io
