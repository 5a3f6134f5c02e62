// The state of one trace in progress: the body being built, its captured
// constants and outer values. A symbolic tensor points at the TraceState that
// made it; once the trace finishes, using the tensor is a leak error.
// Internal to the runtime.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ag/tensor.h"
#include "graph/graph.h"

namespace ag::trace {

struct TraceState {
  std::string function_name;
  // The marked function whose code records ops now: function_name, or a
  // function it calls, which runs inline (detail::InlineScope). Its nodes
  // name it in their errors, and share it (graph::Node::function).
  std::shared_ptr<const std::string> code_function;
  // While the ONNX importer records the ops of one model node
  // (ImportedNodeScope): that node's name, which prefixes its ops' names
  // ("add_node/add"); they get no call site (the importer's own lines mean
  // nothing to the model's user).
  std::string imported_node;
  // The body as traced (the executor optimises a copy); kept alive so that
  // error messages can name the nodes of leaked tensors.
  std::shared_ptr<graph::Body> body;
  // The trace of the enclosing body, for branch and loop bodies.
  TraceState* parent = nullptr;
  bool finished = false;
  // Variables may be created only on a function's first trace.
  bool allow_variable_creation = false;

  // Eager tensors already baked in as Const nodes, by identity.
  std::unordered_map<const void*, graph::ValueRef> constants;
  // Outer values this (nested) body captured: the outer tensor and the
  // placeholder standing for it here.
  struct Capture {
    Tensor outer;
    graph::ValueRef placeholder;
  };
  std::vector<Capture> captures;
  std::map<std::tuple<const TraceState*, int32_t, int32_t>, graph::ValueRef> capture_index;
};

// The trace this thread is building, or null.
TraceState* current();

// A trace of a body nested in `outer` (a branch, a loop body, a loop's
// gradient): a body of its own, `outer` as parent, and from `outer` what
// names its ops (function, imported node) and whether it may create
// variables.
std::shared_ptr<TraceState> nested_in(TraceState& outer);

// For its lifetime, the ops this thread traces come from the imported model
// node `name` (TraceState::imported_node); nothing while not tracing.
class ImportedNodeScope {
 public:
  explicit ImportedNodeScope(std::string name);
  ~ImportedNodeScope();
  ImportedNodeScope(const ImportedNodeScope&) = delete;
  ImportedNodeScope& operator=(const ImportedNodeScope&) = delete;

 private:
  TraceState* trace_;
  std::string outer_;
};

// Makes `state` the thread's current trace for its lifetime and, unless
// told otherwise, marks it finished at the end (branch bodies are entered
// more than once while staging).
class ActiveTrace {
 public:
  explicit ActiveTrace(std::shared_ptr<TraceState> state, bool finish_on_exit = true);
  ~ActiveTrace();
  ActiveTrace(const ActiveTrace&) = delete;
  ActiveTrace& operator=(const ActiveTrace&) = delete;
  const std::shared_ptr<TraceState>& state() const { return state_; }

 private:
  std::shared_ptr<TraceState> state_;
  std::shared_ptr<TraceState> previous_;
  bool finish_on_exit_;
};

// The value `t` has in the current body: its node output, a new Const node
// for an eager tensor, or a new placeholder capturing an outer value.
graph::ValueRef resolve(const Tensor& t);
// Adds `node` to the current body; returns its outputs as symbolic tensors.
std::vector<Tensor> add_node(graph::Node node);
// A placeholder input of the current body.
Tensor add_placeholder(const std::string& name, const ops::ValueType& type);

}  // namespace ag::trace
