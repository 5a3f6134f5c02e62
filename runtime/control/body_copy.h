// BodyCopy: a new graph body built from part of another. Internal to the
// runtime (the gradient of a staged While splits its body with it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace ag::detail {

// Builds a body from part of another: given values of `from` become new
// placeholders, marked nodes are copied in order with their inputs remapped.
class BodyCopy {
  using Body = graph::Body;
  using Node = graph::Node;
  using NodeKind = graph::NodeKind;
  using ValueRef = graph::ValueRef;
  using Key = std::pair<int32_t, int32_t>;
  static Key key_of(ValueRef v) { return {v.node, v.output}; }

 public:
  explicit BodyCopy(const Body& from) : from_(from), to_(std::make_shared<Body>()) {}

  // A new placeholder standing for `v` of `from`.
  void give(ValueRef v, const std::string& name) {
    map_[key_of(v)] = add_placeholder(name, from_.type_of(v));
  }
  ValueRef add_placeholder(const std::string& name, const ops::ValueType& type) {
    Node node;
    node.kind = NodeKind::Placeholder;
    node.name = to_->unique_name(name);
    node.outputs = {type};
    int32_t index = to_->add(std::move(node));
    to_->placeholders.push_back(index);
    return {index, 0};
  }
  // Copies the marked nodes not given, in order.
  void copy(const std::vector<char>& marked) {
    for (size_t n = 0; n < from_.nodes.size(); ++n)
      if (marked[n] && !map_.count({int32_t(n), 0})) copy_node(n);
  }
  // Copies node `n` of `from`, its inputs remapped.
  void copy_node(size_t n) {
    Node node = from_.nodes[n];
    node.name = to_->unique_name(node.name);
    for (ValueRef& in : node.inputs) in = map(in);
    int32_t index = to_->add(std::move(node));
    for (size_t o = 0; o < from_.nodes[n].outputs.size(); ++o)
      map_[{int32_t(n), int32_t(o)}] = {index, int32_t(o)};
  }
  // `v` of `from` is `to` of the new body.
  void alias(ValueRef v, ValueRef to) { map_[key_of(v)] = to; }
  ValueRef map(ValueRef v) const { return map_.at(key_of(v)); }
  ValueRef add(Node node) {
    node.name = to_->unique_name(node.name);
    return {to_->add(std::move(node)), 0};
  }
  std::shared_ptr<Body> body() const { return to_; }

 private:
  const Body& from_;
  std::shared_ptr<Body> to_;
  std::map<Key, ValueRef> map_;
};

}  // namespace ag::detail
