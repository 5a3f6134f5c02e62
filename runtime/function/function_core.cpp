// The calls that the templates of ag/function.h make into the runtime: the
// concrete function's graph, plan and result, argument checks, and the
// recursion guard of functions being traced or inlined.
#include <algorithm>
#include <utility>
#include <vector>

#include "autodiff/tape.h"
#include "function/concrete.h"
#include "function/tape_call.h"
#include "ops/check_numerics.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

// One function's traces being inlined or traced on this thread, to detect
// recursion (which would trace forever).
thread_local std::vector<const FunctionCore*> t_active_functions;

[[noreturn]] void throw_recursion(const std::string& name) {
  throw FailedPreconditionError(
      "ag::function '" + name +
      "' calls itself while being traced; recursive ag::functions are not "
      "supported. Write the recursion as a loop (ag::while_loop).");
}

}  // namespace

InlineScope::InlineScope(const FunctionCore& core) {
  const std::string& name = core.options().name;
  if (std::find(t_active_functions.begin(), t_active_functions.end(), &core) !=
      t_active_functions.end()) {
    throw_recursion(name.empty() ? "function" : name);
  }
  t_active_functions.push_back(&core);
  trace_ = trace::current();
  if (trace_)
    outer_function_ =
        std::exchange(trace_->code_function, std::make_shared<const std::string>(name));
}

InlineScope::~InlineScope() {
  if (trace_) trace_->code_function = std::move(outer_function_);
  t_active_functions.pop_back();
}

bool is_tracing() {
  return trace::current() != nullptr;
}

void throw_undefined_argument() {
  throw InvalidArgumentError("ag::function: an argument is an undefined ag::Tensor");
}

const std::vector<Atom>& concrete_atoms(const ConcreteCore& core) {
  return core.atoms;
}

void run_concrete(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                  std::vector<Tensor>& outputs) {
  // The plan's kernels would be invisible to a gradient tape, and to the
  // numerics check of each op's output: both see the traced body node by node.
  if (autodiff::tape_active()) return run_under_tape(core, inputs, outputs);
  if (ops::check_numerics_on()) [[unlikely]]
    return run_node_by_node(core, inputs, outputs);
  core.plan->run(inputs, outputs);
}

const void* concrete_result_template(const ConcreteCore& core) {
  return core.result_template.get();
}
const std::type_info& concrete_result_type(const ConcreteCore& core) {
  return *core.result_type;
}

Graph concrete_graph(const ConcreteCore& core) {
  return Graph(core.traced, core.name);
}

}  // namespace ag::detail
