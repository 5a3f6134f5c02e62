// The optimisation pipeline run on every traced body before it is compiled
// into an execution plan, built from the registry (passes.def).
//
// Needs: a valid body; nested If/While bodies valid on their own (their
// placeholders bound positionally to the parent node's inputs, their outputs
// to its outputs).
// Guarantees: the LOOP_PREPARE passes run first, on the loop bodies as
// traced (staged for loops over ranges index them directly, loop conditions
// read their reductions of loop variables as loop variables); nested bodies
// are optimised next, innermost first, each on its own (its roots are its
// outputs and stateful nodes; its placeholders are never removed or
// reordered); a nested body shared with another owner is copied first, never
// changed under it. Then the body itself goes through the ROUND passes until
// nothing changes, in at most kMaxRounds rounds to bound the time spent on
// long chains of rewrites; kExecutorOnly passes are skipped for
// Target::kExport. The FINAL passes (fusion) run last, once: fusion only
// groups nodes, so the other passes have nothing to gain after it.
// With AG_PRINT_AFTER set, the body is printed after each run of the named
// pass (print_after.h).

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "graph/graph_text.h"
#include "passes/passes.h"
#include "passes/print_after.h"

namespace ag::passes {
namespace {

constexpr int kMaxRounds = 8;

constexpr PassInfo kPasses[] = {
#define AG_PASS_LOOP_PREPARE(name, function, targets, summary) \
  {name, &function, PassPhase::kLoopPrepare, PassTargets::targets, summary},
#define AG_PASS_ROUND(name, function, targets, summary) \
  {name, &function, PassPhase::kRound, PassTargets::targets, summary},
#define AG_PASS_FINAL(name, function, targets, summary) \
  {name, &function, PassPhase::kFinal, PassTargets::targets, summary},
#include "passes/passes.def"
};

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

// What the passes of one optimize() share: the target, and what
// AG_PRINT_AFTER asks for with the location of the body being optimised.
struct Pipeline {
  Target target;
  PrintAfter print;
  BodyLocation where;
};

bool runs_for(const PassInfo& pass, Target target) {
  return pass.targets == PassTargets::kAnyTarget || target == Target::kExecutor;
}

// Runs the passes of `phase` in registry order; `round` is 1, 2, ... in the
// rounds and 0 otherwise (for the printed header only).
void run_phase(graph::Body& body, PassPhase phase, int round, const Pipeline& pipeline) {
  for (size_t i = 0; i < std::size(kPasses); ++i) {
    const PassInfo& pass = kPasses[i];
    if (pass.phase != phase || !runs_for(pass, pipeline.target)) continue;
    pass.run(body);
    if (pipeline.print.wants(i)) print_body_after(pass.name, round, pipeline.where, body);
  }
}

// "If/then" below `parent`: where a nested body is, for printed headers.
std::string nested_path(const std::string& parent, const graph::Node& node, size_t k) {
  std::string path = parent.empty() ? "" : parent + "/";
  return path + node.name + "/" + std::string(graph::subgraph_role(node.kind, k));
}

void optimize_body(graph::Body& body, const Pipeline& pipeline);

void optimize_nested_bodies(graph::Body& body, const Pipeline& pipeline) {
  for (graph::Node& node : body.nodes) {
    for (size_t k = 0; k < node.subgraphs.size(); ++k) {
      std::shared_ptr<graph::Body>& subgraph = node.subgraphs[k];
      // Copying a Body shares its nested bodies; optimise a private copy so
      // the other owner (e.g. the unoptimised graph a ConcreteFunction
      // shows) is left as it was.
      if (subgraph.use_count() > 1) subgraph = std::make_shared<graph::Body>(*subgraph);
      if (!pipeline.print.any()) {
        optimize_body(*subgraph, pipeline);
        continue;
      }
      Pipeline nested = pipeline;
      nested.where.path = nested_path(pipeline.where.path, node, k);
      optimize_body(*subgraph, nested);
    }
  }
}

void optimize_body(graph::Body& body, const Pipeline& pipeline) {
  run_phase(body, PassPhase::kLoopPrepare, 0, pipeline);
  optimize_nested_bodies(body, pipeline);
  for (int round = 0; round < kMaxRounds; ++round) {
    const auto before = progress_measure(body);
    run_phase(body, PassPhase::kRound, round + 1, pipeline);
    if (progress_measure(body) == before) break;
  }
  run_phase(body, PassPhase::kFinal, 0, pipeline);
}

// The marked function whose trace recorded the body, "" when none did.
std::string recording_function(const graph::Body& body) {
  for (const graph::Node& node : body.nodes) {
    if (!node.function_name().empty()) return node.function_name();
  }
  return "";
}

}  // namespace

std::span<const PassInfo> registered_passes() {
  return kPasses;
}

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& pass : kPasses) {
    if (pass.name == name) return &pass;
  }
  return nullptr;
}

std::string registered_pass_names() {
  std::string names;
  for (const PassInfo& pass : kPasses) {
    if (!names.empty()) names += ", ";
    names += pass.name;
  }
  return names;
}

std::string run_passes_on_text(std::string_view names, std::string_view text) {
  std::vector<const PassInfo*> passes;
  for (std::string_view rest = names; !rest.empty();) {
    const std::string_view name = rest.substr(0, rest.find(','));
    rest.remove_prefix(std::min(rest.size(), name.size() + 1));
    const PassInfo* pass = find_pass(name);
    if (!pass) {
      throw InvalidArgumentError("run_passes_on_text: no pass is named '" + std::string(name) +
                                 "'; the passes of runtime/passes/passes.def are " +
                                 registered_pass_names());
    }
    passes.push_back(pass);
  }
  graph::Body body = graph::parse_text(text);
  for (const PassInfo* pass : passes) pass->run(body);
  return graph::to_text(body);
}

void optimize(graph::Body& body, Target target) {
  Pipeline pipeline{target, print_after(), {}};
  if (pipeline.print.any()) pipeline.where.function = recording_function(body);
  optimize_body(body, pipeline);
}

}  // namespace ag::passes
