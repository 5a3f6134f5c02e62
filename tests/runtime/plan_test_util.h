// Helpers shared by the plan tests: compiling a hand-built body into a Plan,
// running it, and the reference it must agree with: the same nodes run one
// by one by the eager kernels (If and While as plain C++ control flow).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "ag/tensor.h"
#include "exec/plan.h"
#include "graph/graph.h"
#include "ops/dispatch.h"

namespace ag_test {

inline std::unique_ptr<ag::exec::Plan> plan_of(std::shared_ptr<const ag::graph::Body> body) {
  return std::make_unique<ag::exec::Plan>(std::move(body));
}

inline std::vector<ag::Tensor> run(const ag::exec::Plan& plan,
                                   const std::vector<ag::Tensor>& inputs) {
  std::vector<const ag::Tensor*> pointers;
  for (const ag::Tensor& t : inputs) pointers.push_back(&t);
  std::vector<ag::Tensor> outputs;
  plan.run(pointers, outputs);
  return outputs;
}

// Eager execution of `body` (no variables, effects, random ops or While
// iteration limits).
inline std::vector<ag::Tensor> run_eagerly(const ag::graph::Body& body,
                                           const std::vector<ag::Tensor>& inputs) {
  using ag::graph::NodeKind;
  std::vector<std::vector<ag::Tensor>> values(body.nodes.size());
  for (size_t k = 0; k < body.placeholders.size(); ++k) {
    values[size_t(body.placeholders[k])] = {inputs[k]};
  }
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const ag::graph::Node& n = body.nodes[i];
    std::vector<ag::Tensor> args;
    for (ag::graph::ValueRef in : n.inputs)
      args.push_back(values[size_t(in.node)][size_t(in.output)]);
    switch (n.kind) {
      case NodeKind::Placeholder:
        break;
      case NodeKind::Const:
        values[i] = {n.value};
        break;
      case NodeKind::Op:
        values[i] = {ag::ops::run_eager(n.op, args, n.attrs, nullptr)};
        break;
      case NodeKind::If: {
        const auto& branch = n.subgraphs[args[0].item<bool>() ? 0 : 1];
        values[i] = run_eagerly(*branch, std::vector<ag::Tensor>(args.begin() + 1, args.end()));
        break;
      }
      case NodeKind::While: {
        size_t num_vars = n.outputs.size();
        while (run_eagerly(*n.subgraphs[0], args)[0].item<bool>()) {
          std::vector<ag::Tensor> next = run_eagerly(*n.subgraphs[1], args);
          std::copy(next.begin(), next.begin() + ptrdiff_t(num_vars), args.begin());
        }
        values[i].assign(args.begin(), args.begin() + ptrdiff_t(num_vars));
        break;
      }
      default:
        ADD_FAILURE() << "run_eagerly: unsupported node " << n.name;
    }
  }
  std::vector<ag::Tensor> outputs;
  for (ag::graph::ValueRef out : body.outputs) {
    outputs.push_back(values[size_t(out.node)][size_t(out.output)]);
  }
  return outputs;
}

// Runs `plan` compiled from `body` on `inputs` and expects the values eager
// execution gives; returns the plan's outputs.
inline std::vector<ag::Tensor> expect_eager_values(const ag::exec::Plan& plan,
                                                   const ag::graph::Body& body,
                                                   const std::vector<ag::Tensor>& inputs) {
  std::vector<ag::Tensor> staged = run(plan, inputs);
  std::vector<ag::Tensor> eager = run_eagerly(body, inputs);
  EXPECT_EQ(staged.size(), eager.size());
  for (size_t k = 0; k < staged.size() && k < eager.size(); ++k) {
    EXPECT_EQ(staged[k].dtype(), eager[k].dtype()) << "output " << k;
    EXPECT_EQ(staged[k].shape(), eager[k].shape()) << "output " << k;
    EXPECT_EQ(staged[k].values_string(), eager[k].values_string()) << "output " << k;
  }
  return staged;
}

}  // namespace ag_test
