// The runtime side of ag::function, which the templates of ag/function.h
// call: the trace cache (FunctionCore), a traced concrete function
// (ConcreteCore, opaque here) and the tracing protocol between them. Not for
// users: include ag/function.h.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ag/tensor.h"
#include "ag/trace_type.h"

namespace ag {

struct FunctionOptions;
class Graph;
struct PlanStats;

namespace trace {
struct TraceState;
}

namespace detail {

class ConcreteCore;
class FunctionCore;

bool is_tracing();
[[noreturn]] void throw_bad_concrete_call(const ConcreteCore& core,
                                          const std::vector<Atom>& call_atoms);

// Inline storage for the flat tensor inputs of a call.
class FlatTensors {
 public:
  void push(const Tensor& t) {
    if (size_ < kInline) {
      inline_[size_++] = &t;
    } else {
      if (heap_.empty()) heap_.assign(inline_, inline_ + kInline);
      heap_.push_back(&t);
      ++size_;
    }
  }
  std::span<const Tensor* const> view() const {
    return heap_.empty() ? std::span<const Tensor* const>(inline_, size_)
                         : std::span<const Tensor* const>(heap_);
  }

 private:
  static constexpr size_t kInline = 8;
  const Tensor* inline_[kInline];
  size_t size_ = 0;
  std::vector<const Tensor*> heap_;
};

// What the template side needs from a traced concrete function.
const std::vector<Atom>& concrete_atoms(const ConcreteCore& core);
// Runs the graph. `outputs` gets the flat results.
void run_concrete(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                  std::vector<Tensor>& outputs);
// The traced result object (with symbolic tensors) and its C++ type.
const void* concrete_result_template(const ConcreteCore& core);
const std::type_info& concrete_result_type(const ConcreteCore& core);

// While tracing: the template side asks for placeholders and reports results.
class TraceRequest {
 public:
  virtual ~TraceRequest() = default;
  // A symbolic tensor for the next tensor atom; `name` names its placeholder.
  virtual Tensor next_placeholder(const std::string& name) = 0;
  virtual void set_result(std::vector<Tensor> flat, std::shared_ptr<const void> result_template,
                          const std::type_info& result_type) = 0;
};

struct TraceCallback {
  void* context;
  void (*run)(void* context, TraceRequest& request);
};
struct MatchCallback {
  void* context;
  bool (*matches)(void* context, const std::vector<Atom>& atoms);
};

class FunctionCore {
 public:
  explicit FunctionCore(FunctionOptions options);
  ~FunctionCore();
  FunctionCore(const FunctionCore&) = delete;
  FunctionCore& operator=(const FunctionCore&) = delete;

  // The fastest path: the trace of the most recent exact hit, if the call
  // has its signature (checked without hashing or locking), or null.
  ConcreteCore* find_recent(MatchCallback match) const;
  // The fast path: an exact signature hit, or null.
  ConcreteCore* find_exact(uint64_t hash, MatchCallback match) const;
  // The slow path: the most specific compatible trace, or a new one.
  ConcreteCore* resolve(uint64_t hash, std::vector<Atom> call_atoms, TraceCallback trace);
  // get_concrete_function: a trace for exactly these atoms (specs allowed).
  std::shared_ptr<ConcreteCore> concrete_for(std::vector<Atom> call_atoms, TraceCallback trace);

  int tracing_count() const;
  std::string pretty_printed_concrete_signatures() const;
  const FunctionOptions& options() const;
  // The input_signature, for get_concrete_function() without arguments of a
  // callable with `arity` parameters; throws without one or if it has
  // another number of specs.
  const std::vector<TensorSpec>& input_signature_of_arity(size_t arity) const;
  // Drops the traces that belong to a destroyed module.
  void drop_module(uint64_t module_id);

 private:
  // The input_signature's atoms if the function has one (the call must fit
  // them), else the call's.
  std::vector<Atom> atoms_to_trace(const std::vector<Atom>& call_atoms) const;
  std::shared_ptr<ConcreteCore> trace_locked(std::vector<Atom> call_atoms, TraceCallback trace);
  void warn_if_retracing(int count, const std::vector<Atom>& latest);
  struct State;
  std::unique_ptr<State> state_;
};

// Marks a function being traced, or called while tracing (which runs inline),
// on this thread; throws if the function is already marked (recursion). The
// ops an inline call records name that function in their errors.
class InlineScope {
 public:
  explicit InlineScope(const FunctionCore& core);
  ~InlineScope();
  InlineScope(const InlineScope&) = delete;
  InlineScope& operator=(const InlineScope&) = delete;

 private:
  trace::TraceState* trace_ = nullptr;  // the trace the call runs inline in
  std::shared_ptr<const std::string> outer_function_;
};

std::string concrete_to_string(const ConcreteCore& core);
Graph concrete_graph(const ConcreteCore& core);
Graph concrete_optimized_graph(const ConcreteCore& core);
PlanStats concrete_plan_stats(const ConcreteCore& core);
// The forward (exporting intermediates) and backward graphs of a call under a
// gradient tape, optimised; traced on first use.
std::pair<Graph, Graph> concrete_gradient_graphs(const ConcreteCore& core);
std::string concrete_function_type(const ConcreteCore& core);

// The functions agc made for marked free functions, by address.
void register_marked(const void* address, std::shared_ptr<FunctionCore> core);
std::shared_ptr<FunctionCore> find_marked(const void* address);

}  // namespace detail
}  // namespace ag
