// ag::Graph and ag::PlanStats: the public views of a trace and of the plan
// compiled from it (ConcreteFunction::graph(), optimized_graph(), plan_stats()).
#include "ag/function.h"
#include "function/concrete.h"
#include "graph/graph.h"

namespace ag {

Graph::Graph(std::shared_ptr<const graph::Body> body, std::string name)
    : body_(std::move(body)), name_(std::move(name)) {}

std::string Graph::to_string() const {
  return body_->to_string();
}

std::string Graph::to_dot() const {
  return body_->to_dot(name_);
}

size_t Graph::num_nodes() const {
  return body_->nodes.size();
}

std::vector<std::string> Graph::ops() const {
  std::vector<std::string> out;
  for (const auto& n : body_->nodes) out.push_back(n.op_name());
  return out;
}

namespace {

std::string count(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

std::string PlanStats::to_string() const {
  return count(steps, "step") + " (" + std::to_string(fused_steps) + " fused, " +
         std::to_string(scalar_steps) + " scalar, " + std::to_string(flat_steps) + " flat), " +
         count(buffers, "buffer") + ", " + std::to_string(in_place_steps) + " in place, " +
         count(views, "view") + ", " + count(loops, "loop") + " (" + std::to_string(inline_loops) +
         " inline, " + std::to_string(interchanged_loops) + " batch-major)";
}

namespace detail {

Graph concrete_optimized_graph(const ConcreteCore& core) {
  return Graph(core.plan->body(), core.name);
}

PlanStats concrete_plan_stats(const ConcreteCore& core) {
  const exec::Plan& plan = *core.plan;
  return {.steps = plan.num_steps_in_all_plans(),
          .fused_steps = plan.num_fused_steps_in_all_plans(),
          .scalar_steps = plan.num_scalar_steps_in_all_plans(),
          .flat_steps = plan.num_flat_steps_in_all_plans(),
          .buffers = plan.num_buffers_in_all_plans(),
          .in_place_steps = plan.num_in_place_steps(),
          .views = plan.num_row_views(),
          .loops = plan.num_inline_loops() + plan.num_child_arena_loops(),
          .inline_loops = plan.num_inline_loops(),
          .interchanged_loops = plan.num_interchanged_loops()};
}

}  // namespace detail
}  // namespace ag
