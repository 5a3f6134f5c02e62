// Builds small graph::Body IR by hand for the pass and plan tests, the way
// the tracer would: unique names, types from the ops' own shape rules, and
// function outputs behind "Identity" nodes.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ag/tensor.h"
#include "graph/graph.h"
#include "ops/op_registry.h"

namespace ag_test {

using ag::DType;
using ag::Shape;
using ag::Tensor;
using ag::graph::Body;
using ag::graph::Node;
using ag::graph::NodeKind;
using ag::graph::ValueRef;
using ag::ops::Attrs;
using ag::ops::OpId;
using ag::ops::ValueType;

// Builds a Body node by node; names are made unique the way the tracer does.
class BodyBuilder {
 public:
  ValueRef placeholder(const std::string& name, DType dtype, Shape shape) {
    Node node;
    node.kind = NodeKind::Placeholder;
    node.outputs = {{dtype, shape}};
    ValueRef v = add(std::move(node), name);
    body.placeholders.push_back(v.node);
    return v;
  }

  ValueRef constant(const Tensor& value) {
    Node node;
    node.kind = NodeKind::Const;
    node.value = value;
    node.outputs = {{value.dtype(), value.shape()}};
    return add(std::move(node), "Const");
  }

  // The output type comes from the op's own infer function.
  ValueRef op(OpId op, std::vector<ValueRef> inputs, const Attrs& attrs = {}) {
    const ag::ops::OpDef& def = ag::ops::op_def(op);
    std::vector<ValueType> input_types;
    for (ValueRef in : inputs) input_types.push_back(body.type_of(in));
    ag::ops::InferContext ctx{def.name, input_types, attrs, {}};
    Node node;
    node.kind = NodeKind::Op;
    node.op = op;
    node.inputs = std::move(inputs);
    node.attrs = attrs;
    node.outputs = {def.infer(ctx)};
    return add(std::move(node), std::string(def.name));
  }

  // A side effect such as print: stateful, no outputs. Never run here.
  void effect(const std::string& name, std::vector<ValueRef> inputs) {
    Node node;
    node.kind = NodeKind::Effect;
    node.inputs = std::move(inputs);
    add(std::move(node), name);
  }

  // An If or While node owning `subgraphs`; its outputs are those of the last.
  ValueRef control_flow(NodeKind kind, std::vector<ValueRef> inputs,
                        std::vector<std::shared_ptr<Body>> subgraphs) {
    Node node;
    node.kind = kind;
    node.inputs = std::move(inputs);
    for (ValueRef out : subgraphs.back()->outputs)
      node.outputs.push_back(subgraphs.back()->type_of(out));
    node.subgraphs = std::move(subgraphs);
    return add(std::move(node), kind == NodeKind::If ? "If" : "While");
  }

  // A function output, behind an "Identity" node as the tracer makes it.
  void output(ValueRef v) { body.outputs.push_back(op(OpId::Identity, {v})); }

  std::shared_ptr<Body> finish() { return std::make_shared<Body>(std::move(body)); }

  Body body;

 private:
  ValueRef add(Node node, const std::string& base) {
    node.name = body.unique_name(base);
    return {body.add(std::move(node)), 0};
  }
};

inline Attrs cast_to(DType dtype) {
  Attrs attrs;
  attrs.dtype = dtype;
  return attrs;
}

// A random op's or a reshape's shape.
inline Attrs shape_attrs(std::vector<int64_t> dims) {
  Attrs attrs;
  attrs.ints = std::move(dims);
  return attrs;
}

// A transpose's permutation.
inline Attrs perm_attrs(std::vector<int64_t> perm) {
  Attrs attrs;
  attrs.ints = std::move(perm);
  return attrs;
}

inline std::vector<std::string> output_names(const Body& body) {
  std::vector<std::string> names;
  for (ValueRef out : body.outputs) names.push_back(body.nodes[size_t(out.node)].name);
  return names;
}

// How many nodes of op `op` the body holds, its subgraphs' included.
inline size_t count_ops(const ag::graph::Body& body, ag::ops::OpId op) {
  size_t count = 0;
  for (const ag::graph::Node& n : body.nodes) {
    if (n.is_op(op)) ++count;
    for (const auto& sub : n.subgraphs) count += count_ops(*sub, op);
  }
  return count;
}

}  // namespace ag_test
