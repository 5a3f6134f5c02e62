// The signature cache behind ag::function: exact hits by hash, the most
// specific compatible trace by subtyping, and tracing (one trace at a time per
// function, so a signature is never traced twice).
#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <unordered_map>

#include "core/tensor_impl.h"
#include "function/concrete.h"
#include "graph/variable_state.h"
#include "passes/passes.h"
#include "trace/trace_state.h"

namespace ag {

// ---- Global switches and logging ----------------------------------------------

namespace {
std::atomic<bool> g_run_eagerly{false};
std::mutex g_log_mu;
LogHook g_log_hook;
std::atomic<int> g_log_level{int(LogLevel::Warning)};

void log(LogLevel level, const std::string& message) {
  if (int(level) > g_log_level.load()) return;
  std::lock_guard lock(g_log_mu);
  if (g_log_hook) {
    g_log_hook(level, message);
  } else {
    std::cerr << (level == LogLevel::Warning ? "ag: warning: " : "ag: debug: ") << message << "\n";
  }
}
}  // namespace

void run_functions_eagerly(bool enabled) {
  g_run_eagerly = enabled;
}
bool functions_run_eagerly() {
  return g_run_eagerly.load(std::memory_order_relaxed);
}
void set_log_hook(LogHook hook) {
  std::lock_guard lock(g_log_mu);
  g_log_hook = std::move(hook);
}
void set_log_level(LogLevel max_level) {
  g_log_level = int(max_level);
}

// ---- Modules ----------------------------------------------------------------------

namespace detail {
namespace {
std::atomic<uint64_t> g_next_module_id{1};

struct ModuleRegistry {
  std::mutex mu;
  std::map<uint64_t, std::set<FunctionCore*>> cores_by_module;
  static ModuleRegistry& get() {
    static ModuleRegistry* r = new ModuleRegistry;  // outlives static destructors
    return *r;
  }
};

struct MarkedRegistry {
  std::mutex mu;
  std::unordered_map<const void*, std::shared_ptr<FunctionCore>> cores;
  static MarkedRegistry& get() {
    static MarkedRegistry* r = new MarkedRegistry;
    return *r;
  }
};
}  // namespace

uint64_t module_id(const Module& m) {
  return m.module_id();
}

void register_marked(const void* address, std::shared_ptr<FunctionCore> core) {
  auto& r = MarkedRegistry::get();
  std::lock_guard lock(r.mu);
  r.cores[address] = std::move(core);
}

std::shared_ptr<FunctionCore> find_marked(const void* address) {
  auto& r = MarkedRegistry::get();
  std::lock_guard lock(r.mu);
  auto it = r.cores.find(address);
  return it == r.cores.end() ? nullptr : it->second;
}
}  // namespace detail

Module::Module() : id_(detail::g_next_module_id++) {}
Module::Module(const Module&) : id_(detail::g_next_module_id++) {}

Module::~Module() {
  auto& r = detail::ModuleRegistry::get();
  std::set<detail::FunctionCore*> cores;
  {
    std::lock_guard lock(r.mu);
    auto it = r.cores_by_module.find(id_);
    if (it == r.cores_by_module.end()) return;
    cores = std::move(it->second);
    r.cores_by_module.erase(it);
  }
  for (detail::FunctionCore* core : cores) core->drop_module(id_);
}

// ---- Graph ------------------------------------------------------------------------

Graph::Graph(std::shared_ptr<const graph::Body> body, std::string name)
    : body_(std::move(body)), name_(std::move(name)) {}
std::string Graph::to_string() const {
  return body_->to_string();
}
std::string Graph::to_dot() const {
  return body_->to_dot(name_);
}
size_t Graph::num_nodes() const {
  return body_->nodes.size();
}
std::vector<std::string> Graph::ops() const {
  std::vector<std::string> out;
  for (const auto& n : body_->nodes) out.push_back(n.op_name());
  return out;
}

namespace detail {

// ---- Signature text ------------------------------------------------------------------

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

namespace {

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

// One function's traces being inlined or traced on this thread, to detect
// recursion (which would trace forever).
thread_local std::vector<const FunctionCore*> t_active_functions;

[[noreturn]] void throw_recursion(const std::string& name) {
  throw FailedPreconditionError(
      "ag::function '" + name +
      "' calls itself while being traced; recursive ag::functions are not "
      "supported. Write the recursion as a loop (ag::while_loop).");
}

struct ActiveFunction {
  explicit ActiveFunction(const FunctionCore* core, const std::string& name) {
    if (std::find(t_active_functions.begin(), t_active_functions.end(), core) !=
        t_active_functions.end()) {
      throw_recursion(name);
    }
    t_active_functions.push_back(core);
  }
  ~ActiveFunction() { t_active_functions.pop_back(); }
};

class TraceRequestImpl final : public TraceRequest {
 public:
  explicit TraceRequestImpl(const std::vector<Atom>& atoms) : atoms_(atoms) {}
  Tensor next_placeholder(const std::string& name) override {
    while (pos_ < atoms_.size() && atoms_[pos_].kind != AtomKind::Tensor) ++pos_;
    if (pos_ == atoms_.size()) throw InternalError("more tensor arguments than the signature has");
    const Atom& a = atoms_[pos_++];
    return trace::add_placeholder(name, {a.dtype, a.shape});
  }
  void set_result(std::vector<Tensor> flat, std::shared_ptr<const void> result_template,
                  const std::type_info& result_type) override {
    flat_ = std::move(flat);
    result_template_ = std::move(result_template);
    result_type_ = &result_type;
  }
  std::vector<Tensor> flat_;
  std::shared_ptr<const void> result_template_;
  const std::type_info* result_type_ = &typeid(void);

 private:
  const std::vector<Atom>& atoms_;
  size_t pos_ = 0;
};

}  // namespace

struct FunctionCore::State {
  FunctionOptions options;
  std::string name;
  std::vector<Atom> signature_atoms;  // from input_signature, if any

  mutable std::shared_mutex mu;  // guards entries and concretes
  struct Entry {
    std::vector<Atom> atoms;
    ConcreteCore* concrete;
  };
  std::unordered_multimap<uint64_t, Entry> entries;
  std::vector<std::shared_ptr<ConcreteCore>> concretes;

  std::mutex trace_mu;  // one trace at a time
  std::atomic<int> tracing_count{0};
  bool traced_once = false;
  std::set<uint64_t> traced_modules;
  std::set<uint64_t> registered_modules;
};

FunctionCore::FunctionCore(FunctionOptions options, size_t) : state_(std::make_unique<State>()) {
  state_->name = options.name.empty() ? "function" : options.name;
  if (options.input_signature) {
    for (const TensorSpec& spec : *options.input_signature) {
      state_->signature_atoms.push_back({AtomKind::Tensor, spec.dtype, spec.shape});
    }
  }
  state_->options = std::move(options);
}

FunctionCore::~FunctionCore() {
  auto& r = ModuleRegistry::get();
  std::lock_guard lock(r.mu);
  for (uint64_t id : state_->registered_modules) {
    auto it = r.cores_by_module.find(id);
    if (it != r.cores_by_module.end()) it->second.erase(this);
  }
}

const FunctionOptions& FunctionCore::options() const {
  return state_->options;
}
int FunctionCore::tracing_count() const {
  return state_->tracing_count.load();
}

ConcreteCore* FunctionCore::find_exact(uint64_t hash, MatchCallback match) const {
  std::shared_lock lock(state_->mu);
  auto [first, last] = state_->entries.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    if (match.matches(match.context, it->second.atoms)) return it->second.concrete;
  }
  return nullptr;
}

namespace {

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

}  // namespace

ConcreteCore* FunctionCore::resolve(uint64_t hash, std::vector<Atom> call_atoms,
                                    TraceCallback trace) {
  State& s = *state_;
  std::lock_guard trace_lock(s.trace_mu);
  ConcreteCore* found = nullptr;
  {
    std::shared_lock lock(s.mu);
    auto [first, last] = s.entries.equal_range(hash);
    for (auto it = first; it != last && !found; ++it) {
      if (same_atoms(it->second.atoms, call_atoms)) found = it->second.concrete;
    }
    if (found) return found;
    // The most specific compatible trace.
    for (const auto& c : s.concretes) {
      if (is_subtype(call_atoms, c->atoms) && (!found || is_subtype(c->atoms, found->atoms)))
        found = c.get();
    }
  }
  std::vector<Atom> trace_atoms = call_atoms;
  if (!s.signature_atoms.empty()) {
    if (!is_subtype(call_atoms, s.signature_atoms)) {
      throw_signature_mismatch(s.name, s.options.arg_names, call_atoms, s.signature_atoms);
    }
    trace_atoms = s.signature_atoms;
  } else if (!found && s.options.reduce_retracing) {
    // Relax the dims that differ from the latest trace of the same structure.
    for (auto it = s.concretes.rbegin(); it != s.concretes.rend(); ++it) {
      const auto& prev = (*it)->atoms;
      bool same_structure = prev.size() == call_atoms.size();
      for (size_t i = 0; same_structure && i < prev.size(); ++i) {
        const Atom &a = prev[i], &b = call_atoms[i];
        same_structure =
            a.kind == b.kind &&
            (a.kind == AtomKind::Tensor ? a.dtype == b.dtype && a.shape.rank() == b.shape.rank()
                                        : a.i == b.i && a.f == b.f && a.s == b.s);
      }
      if (!same_structure) continue;
      for (size_t i = 0; i < prev.size(); ++i) {
        if (prev[i].kind == AtomKind::Tensor) {
          trace_atoms[i].shape = prev[i].shape.most_specific_common_supertype(call_atoms[i].shape);
        }
      }
      break;
    }
  }
  if (!found) {
    log(LogLevel::Debug, "ag::function '" + s.name + "': no trace for " +
                             signature_text(call_atoms, s.options.arg_names) + "; tracing " +
                             signature_text(trace_atoms, s.options.arg_names));
    found = trace_locked(trace_atoms, trace).get();
  } else {
    log(LogLevel::Debug,
        "ag::function '" + s.name + "': " + signature_text(call_atoms, s.options.arg_names) +
            " reuses the trace for " + signature_text(found->atoms, s.options.arg_names));
  }
  std::unique_lock lock(s.mu);
  s.entries.emplace(hash, State::Entry{std::move(call_atoms), found});
  return found;
}

std::shared_ptr<ConcreteCore> FunctionCore::concrete_for(std::vector<Atom> atoms,
                                                         TraceCallback trace) {
  std::lock_guard trace_lock(state_->trace_mu);
  return trace_locked(std::move(atoms), trace);
}

InlineScope::InlineScope(const FunctionCore& core) {
  const std::string& name = core.options().name;
  if (std::find(t_active_functions.begin(), t_active_functions.end(), &core) !=
      t_active_functions.end()) {
    throw_recursion(name.empty() ? "function" : name);
  }
  t_active_functions.push_back(&core);
}

InlineScope::~InlineScope() {
  t_active_functions.pop_back();
}

std::shared_ptr<ConcreteCore> FunctionCore::trace_locked(std::vector<Atom> atoms,
                                                         TraceCallback trace) {
  State& s = *state_;
  {
    std::shared_lock lock(s.mu);
    for (const auto& c : s.concretes) {
      if (same_atoms(c->atoms, atoms)) return c;
    }
  }
  ActiveFunction active(this, s.name);

  std::set<uint64_t> modules;
  for (const Atom& a : atoms) {
    if (a.kind == AtomKind::Module) modules.insert(uint64_t(a.i));
  }
  auto state = std::make_shared<trace::TraceState>();
  state->function_name = s.name;
  state->body = std::make_shared<graph::Body>();
  // Variables may be created on the first trace (per module, for methods).
  state->allow_variable_creation =
      modules.empty() ? !s.traced_once
                      : std::none_of(modules.begin(), modules.end(),
                                     [&](uint64_t id) { return s.traced_modules.count(id) != 0; });
  TraceRequestImpl request(atoms);
  {
    trace::ActiveTrace active_trace(state);
    trace.run(trace.context, request);
    for (const Tensor& t : request.flat_) {
      if (!t.defined()) {
        throw ValueError("ag::function '" + s.name + "' returned an undefined ag::Tensor");
      }
      graph::Node identity;
      identity.kind = graph::NodeKind::Op;
      identity.op = ops::OpId::Identity;
      identity.inputs = {trace::resolve(t)};
      identity.outputs = {{t.dtype(), t.shape()}};
      state->body->outputs.push_back(
          {int32_t(trace::add_node(std::move(identity))[0].impl()->node), 0});
    }
  }

  auto concrete = std::make_shared<ConcreteCore>();
  concrete->name = s.name;
  concrete->arg_names = s.options.arg_names;
  concrete->atoms = std::move(atoms);
  concrete->traced = state->body;
  concrete->result_template = std::move(request.result_template_);
  concrete->result_type = request.result_type_;
  for (const graph::Node& n : state->body->nodes) {
    if (n.variable &&
        std::find(concrete->captured_variables.begin(), concrete->captured_variables.end(),
                  n.variable) == concrete->captured_variables.end()) {
      concrete->captured_variables.push_back(n.variable);
    }
  }
  auto optimized = std::make_shared<graph::Body>(*state->body);
  passes::optimize(*optimized);
  concrete->plan = std::make_unique<exec::Plan>(optimized);

  {
    std::unique_lock lock(s.mu);
    s.concretes.push_back(concrete);
    s.traced_once = true;
    s.traced_modules.insert(modules.begin(), modules.end());
  }
  if (!modules.empty()) {
    auto& r = ModuleRegistry::get();
    std::lock_guard lock(r.mu);
    for (uint64_t id : modules) {
      r.cores_by_module[id].insert(this);
      s.registered_modules.insert(id);
    }
  }
  int count = ++s.tracing_count;
  warn_if_retracing(count);
  return concrete;
}

void FunctionCore::warn_if_retracing(int count) {
  State& s = *state_;
  constexpr int kWarnAfter = 5;
  if (count <= kWarnAfter) return;
  std::shared_lock lock(s.mu);
  const auto& latest = s.concretes.back()->atoms;
  const auto& previous = s.concretes[s.concretes.size() - 2]->atoms;
  auto a = argument_ranges(latest), b = argument_ranges(previous);
  if (a.size() != b.size()) return;
  for (size_t k = 0; k < a.size(); ++k) {
    std::vector<Atom> x(latest.begin() + long(a[k].first), latest.begin() + long(a[k].second));
    std::vector<Atom> y(previous.begin() + long(b[k].first), previous.begin() + long(b[k].second));
    if (same_atoms(x, y)) continue;
    size_t px = 0, py = 0;
    bool literal = x.size() == 1 && x[0].kind != AtomKind::Tensor;
    log(LogLevel::Warning,
        "ag::function '" + s.name + "' has been traced " + std::to_string(count) +
            " times; argument '" + argument_name(s.options.arg_names, k) +
            "' changes on every call (" + atoms_to_string(y, py) + " then " +
            atoms_to_string(x, px) + "). " +
            (literal
                 ? "C++ values are part of the signature: pass it as an ag::Tensor to reuse one "
                   "trace."
                 : "Use input_signature with None dims, or reduce_retracing, to reuse one trace."));
    return;
  }
}

std::string FunctionCore::pretty_printed_concrete_signatures() const {
  std::shared_lock lock(state_->mu);
  std::string out;
  for (const auto& c : state_->concretes) {
    if (!out.empty()) out += "\n";
    out += "Input Parameters:\n";
    std::vector<std::string> args = argument_strings(c->atoms);
    for (size_t i = 0; i < args.size(); ++i) {
      out += "  " + argument_name(c->arg_names, i) + " (POSITIONAL_OR_KEYWORD): " + args[i] + "\n";
    }
    out += "Output Type:\n  " + output_type_string(*c) + "\nCaptures:\n";
    if (c->captured_variables.empty()) out += "  None\n";
    for (const auto& v : c->captured_variables) {
      out += "  Variable('" + v->name + "', shape=" + v->shape.to_string() +
             ", dtype=" + std::string(dtype_name(v->dtype)) + ")\n";
    }
  }
  return out;
}

void FunctionCore::drop_module(uint64_t module_id) {
  std::unique_lock lock(state_->mu);
  auto uses = [&](const std::vector<Atom>& atoms) {
    return std::any_of(atoms.begin(), atoms.end(), [&](const Atom& a) {
      return a.kind == AtomKind::Module && uint64_t(a.i) == module_id;
    });
  };
  for (auto it = state_->entries.begin(); it != state_->entries.end();) {
    it = uses(it->second.atoms) ? state_->entries.erase(it) : std::next(it);
  }
  std::erase_if(state_->concretes, [&](const auto& c) { return uses(c->atoms); });
  state_->registered_modules.erase(module_id);
}

// ---- Concrete functions --------------------------------------------------------------

bool is_tracing() {
  return trace::current() != nullptr;
}

void check_defined_argument(const Tensor& t) {
  if (!t.defined())
    throw InvalidArgumentError("ag::function: an argument is an undefined ag::Tensor");
}

const std::vector<Atom>& concrete_atoms(const ConcreteCore& core) {
  return core.atoms;
}

void run_concrete(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                  std::vector<Tensor>& outputs) {
  core.plan->run(inputs, outputs);
}

const void* concrete_result_template(const ConcreteCore& core) {
  return core.result_template.get();
}
const std::type_info& concrete_result_type(const ConcreteCore& core) {
  return *core.result_type;
}

Graph concrete_graph(const ConcreteCore& core) {
  return Graph(core.traced, core.name);
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

}  // namespace detail
}  // namespace ag
