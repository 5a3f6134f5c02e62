// AG_PRINT_AFTER=<pass>|all, as LLVM's -print-after: the pipeline prints a
// body after each run of the named pass (or of every pass) to stderr, as a
// header line naming the pass, the round, the function and the nested body,
// then the body's text form (graph/graph_text.h; constants of more than
// kPrintedConstantElements elements elided). The variable is read once, at
// the first optimize(). Internal to the passes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "graph/graph.h"

namespace ag::passes {

inline constexpr int64_t kPrintedConstantElements = 16;

// Which registered passes (their index in registered_passes()) print.
struct PrintAfter {
  bool all = false;
  int pass = -1;  // -1: none, unless `all`

  bool any() const { return all || pass >= 0; }
  bool wants(size_t index) const { return all || pass == int(index); }
};

// The value of AG_PRINT_AFTER (read on the first call) as a selection.
// Throws ag::InvalidArgumentError, on every call, when it names no pass.
PrintAfter print_after();

// Where a printed body is: its function (from its nodes, "" when none
// recorded them) and its path below the function's body ("" for the body
// itself, "While/body", "If/then/While_1/cond").
struct BodyLocation {
  std::string function;
  std::string path;
};

// The header line, "*** IR Dump After constant-folding (round 2) on function
// 'f', body 'While/body' ***"; round 0: a pass outside the rounds.
std::string print_after_header(std::string_view pass, int round, const BodyLocation& where);

// Writes the header and `body`'s text to the output (stderr), whole: dumps
// of concurrent optimisations do not interleave.
void print_body_after(std::string_view pass, int round, const BodyLocation& where,
                      const graph::Body& body);

// For tests: replaces AG_PRINT_AFTER's value (nullopt: read the variable
// again on the next call) and the output (null: stderr).
void set_print_after_for_testing(std::optional<std::string> value, std::ostream* out);

}  // namespace ag::passes
