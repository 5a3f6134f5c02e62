// The text form of a graph body: complete (unlike Body::to_string(), the
// TensorFlow guide's listing), and parsed back by parse_text, so that a test
// can state a body before and after a pass as text, and AG_PRINT_AFTER
// (passes/print_after.h) prints what a parser reads. One node per line, in
// order; then the body's inputs (its placeholders, in order) and outputs:
//
//   x = Placeholder : float32[1000]
//   Const = Const [2, 3] : int32[2]
//   sub = sub(x, y) : float32[1000]
//   t = transpose(a) {ints=[1, 0, 2]} : float32[4, 2, 3]
//   r = ReadVariableOp variable{id=3, name="v", type=float32[3], trainable=true} : float32[3]
//   print = Effect(x) : ()
//   While = While(Const, x) : int64[], float32[?, 3] {
//     cond {
//       ...
//       inputs (i, x)
//       outputs (less)
//     }
//     body { ... }
//   }
//   inputs (x, y)
//   outputs (Identity, While:1)
//
// - A node: name = kind-or-op [(inputs)] [{attrs}] [payload] : types [{subgraphs}].
//   The kind words are Placeholder, Const, Effect, If, While, Fused,
//   ReadVariableOp, AssignVariableOp, AssignAddVariableOp and
//   AssignSubVariableOp; any other word is a registry op's name.
// - Values: a node's name, with ":k" for its output k > 0. Names are bare
//   when made of letters, digits, '_' and '.', else quoted ("a b").
// - Types: dtype[dims], a dim '?' when unknown, [*] for an unknown rank,
//   [] for a scalar; several separated by ',', none as ().
// - Attrs: only the fields that differ from ops::Attrs{}, in the order ints,
//   axis, keepdims, dtype, lo, hi, seed.
// - A constant's payload: its elements, row-major, flat (true/false for
//   bool, the shortest decimal that reads back to the same float), after
//   the value's own type when it differs from the node's; `undefined` for
//   a constant without value.
// - Subgraphs: by role, `then`/`else` of an If, `cond`/`body` of a While,
//   `members` of a Fused node, each a body in braces.
// - `//` starts a comment to the end of the line; whitespace and line
//   breaks only separate tokens.
//
// Not in the text: call sites, the recording function, variables' values,
// and an effect's function (a parsed Effect node throws if run). A parsed
// body's names are its own: unique_name continues from them (it may number
// a new node differently than the body the text came from).
// Internal to the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "graph/graph.h"

namespace ag::graph {

struct TextOptions {
  // A constant with more elements prints this many, then "...(N elements)";
  // parse_text rejects such text. -1: every element.
  int64_t max_constant_elements = -1;
};

std::string to_text(const Body& body, const TextOptions& options = {});

// The body `text` describes. Throws ag::InvalidArgumentError for text that is
// not one: "graph text:3:14: expected ...", then the line and a caret.
Body parse_text(std::string_view text);

// The name of subgraph k of a node of `kind`: "then"/"else" (If),
// "cond"/"body" (While), "members" (Fused), "subgraph" otherwise.
std::string_view subgraph_role(NodeKind kind, size_t k);

}  // namespace ag::graph
