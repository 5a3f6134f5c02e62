// A traced function for one signature: the graph as traced (what graph()
// shows), the plan compiled from its optimised copy, what is needed to
// print its signature (function/signature.h), and its gradient under a tape
// once built (function/function_gradient.h). Internal to the runtime.
#pragma once

#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <vector>

#include "ag/function.h"
#include "exec/plan.h"
#include "graph/graph.h"

namespace ag::detail {

struct FunctionGradient;

class ConcreteCore {
 public:
  std::string name;
  std::vector<std::string> arg_names;
  std::vector<Atom> atoms;
  std::shared_ptr<graph::Body> traced;
  std::unique_ptr<exec::Plan> plan;
  std::shared_ptr<const void> result_template;
  const std::type_info* result_type = &typeid(void);
  std::vector<std::shared_ptr<VariableState>> captured_variables;
  // Every variable the graph reads or assigns, in staged constructs too.
  std::vector<std::shared_ptr<VariableState>> variables_used;

  // Its gradient under a tape (function/function_gradient.h), built on the
  // first call under one; or why it has none.
  mutable std::mutex gradient_mu;
  mutable std::shared_ptr<const FunctionGradient> gradient;
  mutable std::exception_ptr gradient_error;
};

}  // namespace ag::detail
