// Signatures as atoms (ag/trace_type.h): their text ("(x: TensorSpec(...))"),
// subtyping (which trace a call may reuse) and the errors for calls that fit
// no signature. Internal to the runtime.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "function/concrete.h"

namespace ag::detail {

// The text of one top-level argument's atoms starting at `pos` (advanced past
// them): "TensorSpec(shape=(2,), dtype=int32)", "Literal[3]", "List[...]".
std::string atoms_to_string(const std::vector<Atom>& atoms, size_t& pos);
// Splits atoms into the text of each top-level argument.
std::vector<std::string> argument_strings(const std::vector<Atom>& atoms);
// The index range [first, last) of each top-level argument's atoms.
std::vector<std::pair<size_t, size_t>> argument_ranges(const std::vector<Atom>& atoms);
// The name of argument `i` ("args_<i>" when unnamed).
std::string argument_name(const std::vector<std::string>& names, size_t i);
// "(x: TensorSpec(shape=(2,), dtype=int32), n: Literal[3])"
std::string signature_text(const std::vector<Atom>& atoms, const std::vector<std::string>& names);
// "TensorSpec(...)", "Tuple[...]" or "None".
std::string output_type_string(const ConcreteCore& c);

// True when every value of `a` is a value of `b`.
bool is_subtype(const std::vector<Atom>& a, const std::vector<Atom>& b);
bool same_atoms(const std::vector<Atom>& a, const std::vector<Atom>& b);

// The TypeError for a call that does not fit a function's input_signature.
[[noreturn]] void throw_signature_mismatch(const std::string& name,
                                           const std::vector<std::string>& names,
                                           const std::vector<Atom>& call,
                                           const std::vector<Atom>& signature);

}  // namespace ag::detail
