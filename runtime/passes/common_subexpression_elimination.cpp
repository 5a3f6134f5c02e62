// Common subexpression elimination: a value computed twice is computed once.
//
// Needs: a valid body.
// Guarantees: in one forward sweep with a hash table (linear in the number of
// nodes and constant bytes), the uses of a node are forwarded to an earlier
// equivalent node:
// - non-stateful Op nodes with the same op, the same inputs (after earlier
//   merges) and equal Attrs;
// - Const nodes with the same dtype, shape and bytes (so 0.0 and -0.0 stay
//   apart).
// Stateful ops (random), variable reads (a write may come between two reads),
// effects and If/While nodes are never merged. Nodes named by body.outputs are
// never replaced. The replaced nodes stay, unused, for dead-code elimination.

#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

#include "passes/passes.h"
#include "passes/value_forwarding.h"

namespace ag::passes {
namespace {

bool is_mergeable(const graph::Node& node) {
  if (node.kind == graph::NodeKind::Const) return node.value.defined();
  return node.kind == graph::NodeKind::Op && !node.is_stateful();
}

std::string_view bytes_of(const Tensor& t) {
  return {static_cast<const char*>(t.raw_data()), size_t(t.num_elements()) * dtype_size(t.dtype())};
}

void hash_combine(size_t& seed, size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

// Hashes and compares nodes by index, reading the body they live in.
struct NodeHash {
  const graph::Body* body;
  size_t operator()(int32_t index) const {
    const graph::Node& node = body->nodes[size_t(index)];
    size_t seed = size_t(node.kind);
    if (node.kind == graph::NodeKind::Const) {
      hash_combine(seed, size_t(node.value.dtype()));
      hash_combine(seed, node.value.shape().hash());
      hash_combine(seed, std::hash<std::string_view>{}(bytes_of(node.value)));
      return seed;
    }
    hash_combine(seed, size_t(node.op));
    for (graph::ValueRef in : node.inputs) {
      hash_combine(seed, size_t(in.node));
      hash_combine(seed, size_t(in.output));
    }
    hash_combine(seed, node.attrs.hash());
    return seed;
  }
};

struct NodeEqual {
  const graph::Body* body;
  bool operator()(int32_t a_index, int32_t b_index) const {
    const graph::Node& a = body->nodes[size_t(a_index)];
    const graph::Node& b = body->nodes[size_t(b_index)];
    if (a.kind != b.kind) return false;
    if (a.kind == graph::NodeKind::Const) {
      return a.value.dtype() == b.value.dtype() && a.value.shape() == b.value.shape() &&
             bytes_of(a.value) == bytes_of(b.value);
    }
    return a.op == b.op && a.inputs == b.inputs && a.attrs == b.attrs;
  }
};

// The earlier nodes by value: open addressing in one array, so that the
// sweep allocates once however large the body.
class NodeTable {
 public:
  explicit NodeTable(const graph::Body& body) : hash_{&body}, equal_{&body} {
    size_t capacity = 16;
    while (capacity < 2 * body.nodes.size()) capacity *= 2, ++bits_;
    slots_.assign(capacity, {-1, 0});
  }
  // The earlier node equal to `index`, or `index` itself after adding it.
  int32_t find_or_add(int32_t index) {
    const size_t hash = hash_(index);
    const size_t mask = slots_.size() - 1;
    // Fibonacci hashing spreads the combined hash over the table's bits.
    const size_t start = size_t((uint64_t(hash) * 0x9e3779b97f4a7c15ULL) >> (64 - bits_));
    for (size_t i = start;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.node < 0) {
        slot = {index, hash};
        return index;
      }
      if (slot.hash == hash && equal_(slot.node, index)) return slot.node;
    }
  }

 private:
  struct Slot {
    int32_t node;
    size_t hash;
  };
  NodeHash hash_;
  NodeEqual equal_;
  std::vector<Slot> slots_;
  int bits_ = 4;  // log2 of the table size
};

}  // namespace

void eliminate_common_subexpressions(graph::Body& body) {
  ValueForwarding forwarding(body);
  NodeTable seen(body);
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    graph::Node& node = body.nodes[i];
    forwarding.rewrite_inputs(node);
    if (!is_mergeable(node)) continue;
    int32_t earlier = seen.find_or_add(int32_t(i));
    if (earlier != int32_t(i) && forwarding.can_replace(int32_t(i))) {
      // The kept node answers for both in errors: give it a call site if
      // it has none.
      graph::Node& kept = body.nodes[size_t(earlier)];
      if (kept.site.line() == 0) kept.site = node.site;
      forwarding.replace(int32_t(i), {earlier, 0});
    }
  }
}

}  // namespace ag::passes
