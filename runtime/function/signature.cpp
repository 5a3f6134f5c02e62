// Signature text and subtyping: how calls and traces are printed, which trace
// a call may reuse, and the TypeErrors for calls that fit no signature.
#include "function/signature.h"

#include <sstream>

namespace ag::detail {

std::string argument_name(const std::vector<std::string>& names, size_t i) {
  return i < names.size() ? names[i] : "args_" + std::to_string(i);
}

std::string atoms_to_string(const std::vector<Atom>& atoms, size_t& pos) {
  const Atom& a = atoms[pos++];
  std::ostringstream os;
  switch (a.kind) {
    case AtomKind::Tensor:
      return TensorSpec(a.shape, a.dtype).to_string();
    case AtomKind::Int:
      return "Literal[" + std::to_string(a.i) + "]";
    case AtomKind::Float:
      os << "Literal[" << a.f << "]";
      return os.str();
    case AtomKind::Bool:
      return a.i ? "Literal[True]" : "Literal[False]";
    case AtomKind::String:
      return "Literal['" + a.s + "']";
    case AtomKind::Variable:
      return "Variable(id=" + std::to_string(a.i) + ", shape=" + a.shape.to_string() +
             ", dtype=" + std::string(dtype_name(a.dtype)) + ")";
    case AtomKind::Module:
      return "Module[id=" + std::to_string(a.i) + "]";
    case AtomKind::Begin: {
      static const char* kNames[] = {"List", "Tuple", "Dict", "Struct"};
      std::string out = std::string(kNames[int(a.container)]) + "[";
      bool first = true;
      while (pos < atoms.size() && atoms[pos].kind != AtomKind::End) {
        if (!first) out += ", ";
        first = false;
        if (a.container == Container::Map) {
          out += atoms_to_string(atoms, pos) + ": ";
        }
        out += atoms_to_string(atoms, pos);
      }
      ++pos;  // End
      return out + "]";
    }
    case AtomKind::End:
      break;
  }
  return "?";
}

std::vector<std::string> argument_strings(const std::vector<Atom>& atoms) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < atoms.size()) out.push_back(atoms_to_string(atoms, pos));
  return out;
}

std::string output_type_string(const ConcreteCore& c) {
  const auto& outs = c.traced->outputs;
  if (outs.empty()) return "None";
  auto spec = [&](graph::ValueRef v) {
    const ops::ValueType& t = c.traced->type_of(v);
    return TensorSpec(t.shape, t.dtype).to_string();
  };
  if (outs.size() == 1 && *c.result_type == typeid(Tensor)) return spec(outs[0]);
  std::string s = "Tuple[";
  for (size_t i = 0; i < outs.size(); ++i) s += (i ? ", " : "") + spec(outs[i]);
  return s + "]";
}

// True when every value of `a` is a value of `b`.
bool is_subtype(const std::vector<Atom>& a, const std::vector<Atom>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind) return false;
    if (a[i].kind == AtomKind::Tensor) {
      if (a[i].dtype != b[i].dtype || !a[i].shape.is_subtype_of(b[i].shape)) return false;
    } else if (a[i].i != b[i].i || a[i].f != b[i].f || a[i].s != b[i].s ||
               a[i].container != b[i].container) {
      return false;
    }
  }
  return true;
}

bool same_atoms(const std::vector<Atom>& a, const std::vector<Atom>& b) {
  return is_subtype(a, b) && is_subtype(b, a);
}

// The index range [first, last) of each top-level argument's atoms.
std::vector<std::pair<size_t, size_t>> argument_ranges(const std::vector<Atom>& atoms) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t pos = 0;
  while (pos < atoms.size()) {
    size_t first = pos;
    atoms_to_string(atoms, pos);
    out.push_back({first, pos});
  }
  return out;
}

std::string signature_text(const std::vector<Atom>& atoms, const std::vector<std::string>& names) {
  std::vector<std::string> args = argument_strings(atoms);
  std::string s = "(";
  for (size_t i = 0; i < args.size(); ++i)
    s += (i ? ", " : "") + argument_name(names, i) + ": " + args[i];
  return s + ")";
}

[[noreturn]] void throw_signature_mismatch(const std::string& name,
                                           const std::vector<std::string>& names,
                                           const std::vector<Atom>& call,
                                           const std::vector<Atom>& signature) {
  auto call_ranges = argument_ranges(call);
  auto sig_ranges = argument_ranges(signature);
  std::string reason;
  if (call_ranges.size() != sig_ranges.size()) {
    reason = "the function takes " + std::to_string(sig_ranges.size()) + " argument(s), got " +
             std::to_string(call_ranges.size());
  } else {
    for (size_t k = 0; k < call_ranges.size(); ++k) {
      std::vector<Atom> a(call.begin() + long(call_ranges[k].first),
                          call.begin() + long(call_ranges[k].second));
      std::vector<Atom> b(signature.begin() + long(sig_ranges[k].first),
                          signature.begin() + long(sig_ranges[k].second));
      if (!is_subtype(a, b)) {
        size_t pa = 0, pb = 0;
        reason = "Can not cast " + atoms_to_string(a, pa) + " to " + atoms_to_string(b, pb) +
                 " for argument '" + argument_name(names, k) + "'";
        break;
      }
    }
  }
  throw TypeError(name + ": Binding inputs to ag::function failed due to `" + reason +
                  "`. Received args: " + signature_text(call, names) +
                  " for input_signature: " + signature_text(signature, names) + ".");
}

std::string concrete_function_type(const ConcreteCore& core) {
  return signature_text(core.atoms, core.arg_names) + " -> " + output_type_string(core);
}

std::string concrete_to_string(const ConcreteCore& core) {
  std::vector<std::string> args = argument_strings(core.atoms);
  std::string header = "ConcreteFunction " + core.name + "(";
  std::string body;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = argument_name(core.arg_names, i);
    bool literal = core.atoms.size() > 0 && args[i].rfind("Literal[", 0) == 0;
    header +=
        (i ? ", " : "") + (literal ? name + "=" + args[i].substr(8, args[i].size() - 9) : name);
    if (!literal) body += "  " + name + ": " + args[i] + "\n";
  }
  return header + ")\n" + body + "  Returns: " + output_type_string(core) + "\n";
}

void throw_bad_concrete_call(const ConcreteCore& core, const std::vector<Atom>& call) {
  auto call_ranges = argument_ranges(call);
  auto sig_ranges = argument_ranges(core.atoms);
  std::string header = concrete_to_string(core);
  header = header.substr(0, header.find('\n'));
  if (call_ranges.size() != sig_ranges.size()) {
    throw TypeError(header + " takes " + std::to_string(sig_ranges.size()) + " argument(s), got " +
                    std::to_string(call_ranges.size()));
  }
  for (size_t k = 0; k < call_ranges.size(); ++k) {
    std::vector<Atom> a(call.begin() + long(call_ranges[k].first),
                        call.begin() + long(call_ranges[k].second));
    std::vector<Atom> b(core.atoms.begin() + long(sig_ranges[k].first),
                        core.atoms.begin() + long(sig_ranges[k].second));
    if (is_subtype(a, b)) continue;
    size_t pa = 0, pb = 0;
    std::string got = atoms_to_string(a, pa), want = atoms_to_string(b, pb);
    std::string name = argument_name(core.arg_names, k);
    if (a.size() == 1 && b.size() == 1 && a[0].kind != AtomKind::Tensor &&
        b[0].kind != AtomKind::Tensor) {
      throw TypeError(header + " was constructed with value " + want.substr(8, want.size() - 9) +
                      " in " + name + ", but was called with value " +
                      got.substr(8, got.size() - 9));
    }
    throw TypeError(header + " was called with an incompatible argument '" + name +
                    "': Can not cast " + got + " to " + want);
  }
  throw TypeError(header + " was called with incompatible arguments");
}

}  // namespace ag::detail
