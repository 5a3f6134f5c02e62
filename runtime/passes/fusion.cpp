// Elementwise fusion: a group of elementwise ops over one shape, with at most
// one trailing reduction over all axes, becomes one Fused node, which the
// executor runs block by block (exec/plan_fused.cpp): every intermediate
// stays in a small block that fits in L1, instead of a pass over memory per
// op.
//
// Needs: a valid body, after the other passes (the pipeline runs this last).
// Guarantees: each group of non-stateful elementwise Op nodes (Identity
// excepted) whose output is the same fully defined shape S of rank >= 1 and
// at least one element, and whose inputs are either members, values of
// shape S, or static one-element values (broadcast), becomes one Fused node:
// - the group has one result, its last node (the root), which the Fused node
//   replaces at the root's index, with its name changed to "fused", "fused_1";
//   every other member is used only by members and is not a body output;
// - the root may instead be a reduction over all axes (reduce_sum, _mean,
//   _max, _min, _prod, _any, _all) of a member;
// - or, when the root is elementwise and also read by such a reduction
//   (past Identity; the first in node order, itself no body output), with more than
//   ops::kMaxFlatElements elements, and the reduction is not a float sum,
//   mean or product: the Fused node has two outputs, the root's value and
//   that reduction of it (a loop body's new value and the reduction its
//   condition reads, passes/loop_condition_reductions.cpp); the reduction
//   is removed and its uses read output 1;
// - groups are maximal: grown from the last node backwards, taking every
//   input that qualifies; a group of one node (and no second output) is
//   left as it was;
// - the Fused node's inputs are the group's outside values, each once, in
//   the order members first read them; subgraphs[0] holds the members in
//   their order with their names, sites and attributes (and the second
//   output's reduction last).
// Members are removed; other nodes keep their order and names. Static
// scalars (rank 0) are never fused: the executor's scalar steps run them.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

#include "ops/kernels.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using ops::OpId;

// Fused loops compute on the compute dtypes only (ag/dtype.h): a cast to or
// from a storage dtype runs on its own.
bool is_fusable_elementwise(const Body& body, const Node& node) {
  if (node.kind != NodeKind::Op || node.op == OpId::Identity || node.outputs.size() != 1 ||
      !is_compute_dtype(node.outputs[0].dtype) ||
      !std::all_of(node.inputs.begin(), node.inputs.end(),
                   [&](ValueRef in) { return is_compute_dtype(body.type_of(in).dtype); })) {
    return false;
  }
  const uint32_t flags = ops::op_def(node.op).flags;
  const Shape& shape = node.outputs[0].shape;
  return (flags & ops::kElementwise) && !(flags & ops::kStateful) && shape.is_fully_defined() &&
         shape.rank() > 0 && shape.num_elements() > 0;
}

// A value a member may read from outside the group: of the group's shape,
// or a static single element that broadcasts.
bool fits_group(const ops::ValueType& type, const Shape& shape) {
  return type.shape == shape || (type.shape.is_fully_defined() && type.shape.num_elements() == 1);
}

bool inputs_fit(const Body& body, const Node& node, const Shape& shape) {
  return std::all_of(node.inputs.begin(), node.inputs.end(),
                     [&](ValueRef in) { return fits_group(body.type_of(in), shape); });
}

class Fuser {
 public:
  explicit Fuser(Body& body)
      : body_(body),
        uses_(body.nodes.size(), 0),
        uses_in_group_(body.nodes.size(), 0),
        queued_(body.nodes.size(), false),
        fused_(body.nodes.size(), false),
        is_output_(body.nodes.size(), false),
        reduced_by_(body.nodes.size(), -1) {
    for (size_t i = 0; i < body.nodes.size(); ++i) {
      const Node& node = body.nodes[i];
      for (ValueRef in : node.inputs) ++uses_[size_t(in.node)];
      if (!reduces_all_axes(body, node)) continue;
      const ValueRef reduced = graph::through_identity(body, node.inputs[0]);
      if (reduced_by_[size_t(reduced.node)] < 0 && reduced.output == 0) {
        reduced_by_[size_t(reduced.node)] = int32_t(i);
      }
    }
    for (ValueRef out : body.outputs) is_output_[size_t(out.node)] = true;
  }

  void run() {
    std::vector<bool> keep(body_.nodes.size(), true);
    bool changed = false;
    std::vector<ValueRef> second_output(body_.nodes.size(), ValueRef{-1, 0});  // per reduction
    for (size_t r = body_.nodes.size(); r-- > 0;) {
      if (fused_[r]) continue;
      std::vector<int32_t> members = grow_group(int32_t(r));
      const int32_t reduction = reduced_alongside(members);
      if (members.size() + (reduction >= 0 ? 1 : 0) < 2) continue;
      for (int32_t m : members) {
        fused_[size_t(m)] = true;
        keep[size_t(m)] = m == int32_t(r);
      }
      if (reduction >= 0) {
        fused_[size_t(reduction)] = true;
        keep[size_t(reduction)] = false;
        second_output[size_t(reduction)] = {int32_t(r), 1};
      }
      replace_with_fused(members, reduction);
      changed = true;
    }
    if (!changed) return;
    graph::remap_inputs(body_, [&](ValueRef v) {
      return second_output[size_t(v.node)].node >= 0 ? second_output[size_t(v.node)] : v;
    });
    graph::compact(body_, keep);
  }

 private:
  // A reduction over all axes of the value of group `members` (grown from
  // an elementwise root) that the group can compute as its second output,
  // in the same pass over the elements; or -1. Only reductions exact in any
  // order (not a float sum, mean or product, which the group would add up
  // block by block), and not over a vector short enough to run as flat
  // steps, which such a group would not.
  int32_t reduced_alongside(const std::vector<int32_t>& members) const {
    const Node& root = body_.nodes[size_t(members.back())];
    const int32_t reduction = reduced_by_[size_t(members.back())];
    if (reduction < 0 || fused_[size_t(reduction)] || is_output_[size_t(reduction)] ||
        !is_fusable_elementwise(body_, root) || !inputs_fit(body_, root, root.outputs[0].shape) ||
        root.outputs[0].shape.num_elements() <= ops::kMaxFlatElements) {
      return -1;
    }
    const Node& node = body_.nodes[size_t(reduction)];
    const bool adds_up =
        node.op == OpId::ReduceSum || node.op == OpId::ReduceMean || node.op == OpId::ReduceProd;
    return adds_up && is_floating(root.outputs[0].dtype) ? -1 : reduction;
  }

  // The members of the group rooted at `root`, in node order (the root last);
  // just the root when nothing fuses with it.
  std::vector<int32_t> grow_group(int32_t root) {
    const Node& node = body_.nodes[size_t(root)];
    std::vector<int32_t> members;
    Shape shape;
    if (is_fusable_elementwise(body_, node)) {
      shape = node.outputs[0].shape;
      if (!inputs_fit(body_, node, shape)) return {root};
    } else if (reduces_all_axes(body_, node) &&
               is_fusable_elementwise(body_, body_.nodes[size_t(node.inputs[0].node)])) {
      shape = body_.type_of(node.inputs[0]).shape;
    } else {
      return {root};
    }
    // Candidates latest first: when one is taken out, every node that could
    // use it (all come after it) has been decided, so its count of uses
    // inside the group is final.
    std::priority_queue<int32_t> candidates;
    std::vector<int32_t> touched;
    auto take = [&](int32_t index) {
      members.push_back(index);
      for (ValueRef in : body_.nodes[size_t(index)].inputs) {
        size_t p = size_t(in.node);
        if (uses_in_group_[p]++ == 0) touched.push_back(in.node);
        if (!queued_[p]) {
          queued_[p] = true;
          candidates.push(in.node);
        }
      }
    };
    take(root);
    while (!candidates.empty()) {
      int32_t p = candidates.top();
      candidates.pop();
      const Node& candidate = body_.nodes[size_t(p)];
      if (fused_[size_t(p)] || is_output_[size_t(p)] || !is_fusable_elementwise(body_, candidate) ||
          !(candidate.outputs[0].shape == shape) || uses_in_group_[size_t(p)] != uses_[size_t(p)] ||
          !inputs_fit(body_, candidate, shape)) {
        continue;
      }
      take(p);
    }
    for (int32_t t : touched) {
      uses_in_group_[size_t(t)] = 0;
      queued_[size_t(t)] = false;
    }
    std::sort(members.begin(), members.end());
    return members;
  }

  // Moves the members into the subgraph of a Fused node that takes the
  // root's place. Members keep their names, which are distinct in the body,
  // so only the placeholders' names (after their outside values, numbered
  // when one node gives several) go through the subgraph's unique_name: its
  // table stays as small as the set of outside nodes, not one entry per
  // member. A fused body is never added to afterwards.
  void replace_with_fused(const std::vector<int32_t>& members, int32_t reduction) {
    const int32_t root = members.back();
    auto is_member = [&](ValueRef in) {
      return std::binary_search(members.begin(), members.end(), in.node);
    };
    const auto key_of = [](ValueRef in) { return (int64_t(in.node) << 32) | uint32_t(in.output); };
    // The outside values, each once, in the order members first read them:
    // counted first so that the subgraph's node array is allocated once.
    std::vector<ValueRef> outside;
    std::unordered_map<int64_t, int32_t> placeholder_of;  // by outside value
    for (int32_t m : members) {
      for (ValueRef in : body_.nodes[size_t(m)].inputs) {
        if (!is_member(in) && placeholder_of.try_emplace(key_of(in), -1).second) {
          outside.push_back(in);
        }
      }
    }
    auto sub = std::make_shared<Body>();
    sub->nodes.reserve(members.size() + outside.size());
    std::vector<int32_t> sub_index(members.size());
    auto local = [&](ValueRef in) -> ValueRef {
      auto member = std::lower_bound(members.begin(), members.end(), in.node);
      if (member != members.end() && *member == in.node) {
        return {sub_index[size_t(member - members.begin())], in.output};
      }
      int32_t& index = placeholder_of.at(key_of(in));
      if (index >= 0) return {index, 0};
      Node placeholder;
      placeholder.kind = NodeKind::Placeholder;
      placeholder.name = sub->unique_name(body_.nodes[size_t(in.node)].name);
      placeholder.outputs = {body_.type_of(in)};
      index = sub->add(std::move(placeholder));
      sub->placeholders.push_back(index);
      return {index, 0};
    };
    for (size_t k = 0; k < members.size(); ++k) {
      Node& node = body_.nodes[size_t(members[k])];
      Node member = k + 1 == members.size() ? node : std::move(node);
      for (ValueRef& in : member.inputs) in = local(in);
      sub_index[k] = sub->add(std::move(member));
    }
    sub->outputs = {{sub_index.back(), 0}};
    Node& fused = body_.nodes[size_t(root)];
    if (reduction >= 0) {
      Node reduced = std::move(body_.nodes[size_t(reduction)]);
      reduced.inputs = {sub->outputs[0]};
      fused.outputs.push_back(reduced.outputs[0]);
      sub->outputs.push_back({sub->add(std::move(reduced)), 0});
    }

    fused.kind = NodeKind::Fused;
    fused.op = OpId::kCount;
    fused.attrs = {};
    fused.name = body_.unique_name("fused");
    fused.inputs = outside;
    fused.subgraphs = {std::move(sub)};
  }

  Body& body_;
  std::vector<int32_t> uses_;           // per node: how many inputs refer to it
  std::vector<int32_t> uses_in_group_;  // per node: of those, in the group being grown
  std::vector<bool> queued_;            // per node: a candidate of that group already
  std::vector<bool> fused_;             // per node: in a group already
  std::vector<bool> is_output_;
  std::vector<int32_t> reduced_by_;  // per node: the first reduction over all axes of it, or -1
};

}  // namespace

bool reduces_all_axes(const Body& body, const Node& node) {
  if (node.kind != NodeKind::Op) return false;
  switch (node.op) {
    case OpId::ReduceSum:
    case OpId::ReduceMean:
    case OpId::ReduceMax:
    case OpId::ReduceMin:
    case OpId::ReduceProd:
    case OpId::ReduceAny:
    case OpId::ReduceAll:
      break;
    default:
      return false;
  }
  const int rank = body.type_of(node.inputs[0]).shape.rank();
  if (node.attrs.ints.empty()) return true;
  std::vector<bool> axes(size_t(std::max(rank, 0)), false);
  for (int64_t axis : node.attrs.ints) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) return false;
    axes[size_t(a)] = true;
  }
  return std::all_of(axes.begin(), axes.end(), [](bool b) { return b; });
}

void fuse_elementwise(graph::Body& body) {
  Fuser(body).run();
}

}  // namespace ag::passes
