// The optimisation pipeline run on every traced body before it is compiled
// into an execution plan.
//
// Needs: a valid body; nested If/While bodies valid on their own (their
// placeholders bound positionally to the parent node's inputs, their outputs
// to its outputs).
// Guarantees: staged for loops over ranges index them directly, and loop
// conditions read their reductions of loop variables as loop variables
// (first, on the loop bodies as traced); nested bodies are optimised first,
// innermost first, each on its own (its roots are its outputs and stateful
// nodes; its placeholders are never removed or reordered); a nested body
// shared with another owner is copied first, never changed under it. Then
// the body itself goes through the passes until nothing changes, in at most
// kMaxRounds rounds to bound the time spent on long chains of rewrites.
// Fusion runs last, once: it only groups nodes, so the other passes have
// nothing to gain after it.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

#include "passes/passes.h"

namespace ag::passes {
namespace {

constexpr int kMaxRounds = 8;

// Every change a round makes ends in fewer nodes (simplification and CSE
// leave their replaced nodes dead, DCE removes them) or fewer non-constant
// nodes (folding), so an unchanged pair means a fixed point. The one
// exception: a gather rewritten off a transpose that something else still
// reads; that rewrite is done once and for all, and what a next round could
// make of it (merging it with an equal gather) is not worth another round.
std::pair<size_t, size_t> progress_measure(const graph::Body& body) {
  size_t constants =
      size_t(std::count_if(body.nodes.begin(), body.nodes.end(),
                           [](const graph::Node& n) { return n.kind == graph::NodeKind::Const; }));
  return {body.nodes.size(), body.nodes.size() - constants};
}

}  // namespace

void optimize(graph::Body& body, Target target) {
  // On the loop bodies as tracing staged them, before they are optimised.
  index_ranges_directly(body);
  carry_loop_condition_reductions(body);
  for (graph::Node& node : body.nodes) {
    for (std::shared_ptr<graph::Body>& subgraph : node.subgraphs) {
      // Copying a Body shares its nested bodies; optimise a private copy so
      // the other owner (e.g. the unoptimised graph a ConcreteFunction
      // shows) is left as it was.
      if (subgraph.use_count() > 1) subgraph = std::make_shared<graph::Body>(*subgraph);
      optimize(*subgraph, target);
    }
  }
  for (int round = 0; round < kMaxRounds; ++round) {
    const auto before = progress_measure(body);
    // Folding before CSE lets equal folded constants merge; DCE comes last
    // to remove what the other passes left unused.
    simplify_algebra(body);
    // Before folding, which folds the transposed initial value of an array
    // it lays out anew (zeros, usually) in the same round.
    if (target == Target::kExecutor) lay_out_arrays_transposed(body);
    fold_constants(body);
    // Once the loops' initial values are constants.
    fold_counter_sign_tests(body);
    eliminate_common_subexpressions(body);
    // After CSE (one transpose for equal ones), before DCE, which removes a
    // transpose its gathers no longer read. A While's body is optimised by
    // now, so its gathers are those that will run.
    gather_through_transposes(body);
    eliminate_dead_code(body);
    if (progress_measure(body) == before) break;
  }
  fuse_elementwise(body);
}

}  // namespace ag::passes
