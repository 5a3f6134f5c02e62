// ag::Graph: the public view of a traced body (ConcreteFunction::graph()).
#include "ag/function.h"
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

}  // namespace ag
