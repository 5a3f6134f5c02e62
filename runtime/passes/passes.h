// The graph optimisation passes, one per file in this folder. Each works on
// one Body (nested If/While bodies are the pipeline's business) and keeps the
// IR invariants of graph/graph.h:
//   - node order: a topological order, and program order for stateful nodes;
//   - body.placeholders: the same nodes, in the same order (they are bound
//     positionally to the caller's arguments or to a parent node's inputs);
//   - body.outputs: the same values, remapped to the nodes' new indices;
//   - the names of kept nodes; nodes named by body.outputs are never
//     replaced by another node, so the tracer's "Identity" outputs stay.
// Each file's header comment states what its pass needs and guarantees;
// passes.def registers each pass (its name, phase and a one-line summary),
// and the pipeline runs them in its order. Internal to the runtime.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "graph/graph.h"

namespace ag::passes {

// Removes the nodes that neither an output nor a stateful node depends on.
void eliminate_dead_code(graph::Body& body);

// Replaces each non-stateful op whose inputs are all constants by a constant.
void fold_constants(graph::Body& body);

// Merges non-stateful ops that have the same op, inputs and attributes, and
// constants that have the same dtype, shape and bytes.
void eliminate_common_subexpressions(graph::Body& body);

// Forwards the uses of x*1, x+0, neg(neg(x)), same-dtype casts and the like
// to x.
void simplify_algebra(graph::Body& body);

// Replaces groups of elementwise ops over one shape, with at most one
// trailing reduction over all axes, by Fused nodes.
void fuse_elementwise(graph::Body& body);

// Has staged `for` loops over ag::range compute each element instead of
// gathering it from the range (passes/range_loops.cpp).
void index_ranges_directly(graph::Body& body);

// Has a While's condition read its integer reductions of loop variables as
// loop variables that the body computes (passes/loop_condition_reductions.cpp).
void carry_loop_condition_reductions(graph::Body& body);

// Whether `node` is a reduction (reduce_sum, _mean, _max, _min, _prod, _any,
// _all) over all axes of its input.
bool reduces_all_axes(const graph::Body& body, const graph::Node& node);

// Has gathers of one index from transpose(x, p) read x on axis p[a] where
// the other axes keep their order, also across a While's captured input
// (passes/transposed_gathers.cpp).
void gather_through_transposes(graph::Body& body);

// Runs channels-first convolutions and pools, and the elementwise ops between
// them, channels last, with a transpose where a value is read channels first
// (passes/channels_last_convolutions.cpp).
void run_convolutions_channels_last(graph::Body& body);

// Has a While body's `where(j < k, a, b)`, k <= 0, read b when the loop
// counter j starts non-negative, steps up and bounds the loop (an imported
// ONNX SequenceInsert's position; passes/counter_signs.cpp).
void fold_counter_sign_tests(graph::Body& body);

// Keeps a While's TensorArray, read after the loop only through a transpose
// that moves its rows' axis, in that transposed layout: the loop writes its
// rows along the moved axis, and the transpose goes
// (passes/transposed_arrays.cpp).
void lay_out_arrays_transposed(graph::Body& body);

// What an optimised body is for. An export (ONNX) keeps each TensorArray's
// rows along axis 0, where they are a sequence to the deployment engine (a
// write then copies one row, not the array): lay_out_arrays_transposed
// chooses a layout for our executor only.
enum class Target { kExecutor, kExport };

// The pipeline: the passes of passes.def, phase by phase (the loop
// preparations, nested bodies, the rounds to a fixed point, then fusion).
// With AG_PRINT_AFTER set (print_after.h), prints bodies after a pass to
// stderr; throws ag::InvalidArgumentError when it names no pass.
void optimize(graph::Body& body, Target target = Target::kExecutor);

// Every registered pass, declared from its registry line: a new pass needs
// no line here.
#define AG_PASS_LOOP_PREPARE(name, function, targets, summary) void function(graph::Body& body);
#define AG_PASS_ROUND(name, function, targets, summary) void function(graph::Body& body);
#define AG_PASS_FINAL(name, function, targets, summary) void function(graph::Body& body);
#include "passes/passes.def"

// When the pipeline runs a pass (passes.def describes the phases).
enum class PassPhase { kLoopPrepare, kRound, kFinal };
// Which targets a pass runs for.
enum class PassTargets { kAnyTarget, kExecutorOnly };

// One line of passes.def.
struct PassInfo {
  std::string_view name;  // "constant-folding": what AG_PRINT_AFTER takes
  void (*run)(graph::Body& body);
  PassPhase phase;
  PassTargets targets;
  std::string_view summary;  // what it needs and guarantees, one line
};

// The registered passes in pipeline order.
std::span<const PassInfo> registered_passes();
// The registered pass named `name`, or null.
const PassInfo* find_pass(std::string_view name);
// "range-loops, loop-condition-reductions, ...": for messages.
std::string registered_pass_names();

// As LLVM's `opt -passes=a,b`: the text (graph/graph_text.h) of the body
// `text` describes after the registered passes `names` (comma-separated) run
// on it, each once, in that order. Throws ag::InvalidArgumentError for an
// unknown name (listing the known ones) or for text that does not parse.
std::string run_passes_on_text(std::string_view names, std::string_view text);

}  // namespace ag::passes
