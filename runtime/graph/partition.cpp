// backward_part (graph/partition.h).
#include "graph/partition.h"

#include <string>

#include "ag/error.h"

namespace ag::graph {

std::vector<char> backward_part(const Body& body, std::span<const int32_t> seeds) {
  std::vector<char> backward(body.nodes.size(), 0);
  for (int32_t s : seeds) backward[size_t(s)] = 1;
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    for (const ValueRef& in : body.nodes[n].inputs) {
      if (size_t(in.node) >= n)
        throw InternalError("backward_part: node '" + body.nodes[n].name + "' reads a later node");
      backward[n] = backward[n] || backward[size_t(in.node)];
    }
  }
  return backward;
}

}  // namespace ag::graph
