// graph::backward_part (runtime/graph/partition.h): the nodes of a joint
// graph that depend on the seeds, and only those.
#include "graph/partition.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ag/error.h"

namespace {

using ag::graph::Body;
using ag::graph::Node;
using ag::graph::NodeKind;
using ag::graph::ValueRef;

int32_t add_node(Body& body, NodeKind kind, ag::ops::OpId op, std::vector<ValueRef> inputs) {
  Node node;
  node.kind = kind;
  node.op = op;
  node.name = body.unique_name(kind == NodeKind::Placeholder ? "x" : "op");
  node.inputs = std::move(inputs);
  node.outputs = {{ag::DType::float64, ag::Shape{2}}};
  int32_t index = body.add(std::move(node));
  if (kind == NodeKind::Placeholder) body.placeholders.push_back(index);
  return index;
}

TEST(Partition, BackwardIsWhatDependsOnTheSeeds) {
  using ag::ops::OpId;
  Body body;
  int32_t x = add_node(body, NodeKind::Placeholder, OpId::kCount, {});
  int32_t seed = add_node(body, NodeKind::Placeholder, OpId::kCount, {});
  int32_t y = add_node(body, NodeKind::Op, OpId::Tanh, {{x, 0}});             // forward
  int32_t dy = add_node(body, NodeKind::Op, OpId::Mul, {{seed, 0}, {y, 0}});  // reads the seed
  int32_t dx = add_node(body, NodeKind::Op, OpId::Add, {{dy, 0}, {x, 0}});    // through dy
  int32_t z = add_node(body, NodeKind::Op, OpId::Exp, {{y, 0}});              // forward
  std::vector<int32_t> seeds = {seed};
  std::vector<char> backward = ag::graph::backward_part(body, seeds);
  std::vector<char> expected(body.nodes.size(), 0);
  expected[size_t(seed)] = expected[size_t(dy)] = expected[size_t(dx)] = 1;
  EXPECT_EQ(backward, expected);
  EXPECT_EQ(backward[size_t(y)] + backward[size_t(z)] + backward[size_t(x)], 0);
  // Without seeds everything is forward.
  EXPECT_EQ(ag::graph::backward_part(body, {}), std::vector<char>(body.nodes.size(), 0));
}

TEST(Partition, ANodeReadingALaterOneBreaksWhatItNeeds) {
  using ag::ops::OpId;
  Body body;
  int32_t x = add_node(body, NodeKind::Placeholder, OpId::kCount, {});
  add_node(body, NodeKind::Op, OpId::Tanh, {{x + 2, 0}});
  add_node(body, NodeKind::Op, OpId::Exp, {{x, 0}});
  std::vector<int32_t> seeds = {x};
  EXPECT_THROW(ag::graph::backward_part(body, seeds), ag::InternalError);
}

}  // namespace
