// The trace cache behind ag::function: exact hits by hash, the most specific
// compatible trace by subtyping, and tracing (one trace at a time per
// function, so a signature is never traced twice).
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include "core/tensor_impl.h"
#include "function/concrete.h"
#include "function/logging.h"
#include "function/module_registry.h"
#include "function/signature.h"
#include "graph/variable_state.h"
#include "passes/passes.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

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

void collect_variables(const graph::Body& body, std::vector<std::shared_ptr<VariableState>>& out) {
  for (const graph::Node& n : body.nodes) {
    for (const auto& sub : n.subgraphs) collect_variables(*sub, out);
    if (n.variable && std::find(out.begin(), out.end(), n.variable) == out.end())
      out.push_back(n.variable);
  }
}

}  // namespace

struct FunctionCore::State {
  FunctionOptions options;
  std::string name;
  std::vector<Atom> signature_atoms;  // from input_signature, if any

  mutable std::shared_mutex mu;  // guards entries, retired and concretes
  struct Entry {
    std::vector<Atom> atoms;
    ConcreteCore* concrete;
  };
  std::unordered_multimap<uint64_t, std::unique_ptr<const Entry>> entries;
  // The entry of the latest exact hit, which find_recent reads without the
  // lock. So that a reader never sees freed atoms, an entry dropped with its
  // module is kept here (atoms only; its trace is freed) for the function's
  // lifetime: a reader may still be comparing against it.
  mutable std::atomic<const Entry*> recent{nullptr};
  std::vector<std::unique_ptr<const Entry>> retired;
  std::vector<std::shared_ptr<ConcreteCore>> concretes;

  std::mutex trace_mu;  // one trace at a time
  std::atomic<int> tracing_count{0};
  bool traced_once = false;
  std::set<uint64_t> traced_modules;
  std::set<uint64_t> registered_modules;
};

FunctionCore::FunctionCore(FunctionOptions options) : state_(std::make_unique<State>()) {
  state_->name = options.name.empty() ? "function" : options.name;
  if (options.input_signature) {
    for (const TensorSpec& spec : *options.input_signature) {
      state_->signature_atoms.push_back({AtomKind::Tensor, spec.dtype, spec.shape});
    }
  }
  state_->options = std::move(options);
}

FunctionCore::~FunctionCore() {
  for (uint64_t id : state_->registered_modules) remove_module_user(id, this);
}

const FunctionOptions& FunctionCore::options() const {
  return state_->options;
}

const std::vector<TensorSpec>& FunctionCore::input_signature_of_arity(size_t arity) const {
  const State& s = *state_;
  if (!s.options.input_signature) {
    throw ValueError("ag::function '" + s.name +
                     "' has no input_signature, so get_concrete_function() needs its "
                     "arguments: pass tensors or TensorSpecs, one per parameter");
  }
  const size_t specs = s.options.input_signature->size();
  if (specs != arity) {
    throw ValueError("ag::function '" + s.name + "' takes " + std::to_string(arity) +
                     (arity == 1 ? " argument" : " arguments") + " but its input_signature has " +
                     std::to_string(specs) + (specs == 1 ? " TensorSpec" : " TensorSpecs") +
                     ": give one TensorSpec per parameter");
  }
  return *s.options.input_signature;
}

int FunctionCore::tracing_count() const {
  return state_->tracing_count.load();
}

ConcreteCore* FunctionCore::find_recent(MatchCallback match) const {
  const State::Entry* e = state_->recent.load(std::memory_order_acquire);
  return e && match.matches(match.context, e->atoms) ? e->concrete : nullptr;
}

ConcreteCore* FunctionCore::find_exact(uint64_t hash, MatchCallback match) const {
  std::shared_lock lock(state_->mu);
  auto [first, last] = state_->entries.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    const State::Entry* e = it->second.get();
    if (match.matches(match.context, e->atoms)) {
      state_->recent.store(e, std::memory_order_release);
      return e->concrete;
    }
  }
  return nullptr;
}

ConcreteCore* FunctionCore::resolve(uint64_t hash, std::vector<Atom> call_atoms,
                                    TraceCallback trace) {
  State& s = *state_;
  std::lock_guard trace_lock(s.trace_mu);
  ConcreteCore* found = nullptr;
  {
    std::shared_lock lock(s.mu);
    auto [first, last] = s.entries.equal_range(hash);
    for (auto it = first; it != last && !found; ++it) {
      if (same_atoms(it->second->atoms, call_atoms)) found = it->second->concrete;
    }
    if (found) return found;
    // The most specific compatible trace.
    for (const auto& c : s.concretes) {
      if (is_subtype(call_atoms, c->atoms) && (!found || is_subtype(c->atoms, found->atoms)))
        found = c.get();
    }
  }
  std::vector<Atom> trace_atoms = atoms_to_trace(call_atoms);
  if (s.signature_atoms.empty() && !found && s.options.reduce_retracing) {
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
    log_message(LogLevel::Debug, "ag::function '" + s.name + "': no trace for " +
                                     signature_text(call_atoms, s.options.arg_names) +
                                     "; tracing " +
                                     signature_text(trace_atoms, s.options.arg_names));
    found = trace_locked(trace_atoms, trace).get();
  } else {
    log_message(LogLevel::Debug, "ag::function '" + s.name +
                                     "': " + signature_text(call_atoms, s.options.arg_names) +
                                     " reuses the trace for " +
                                     signature_text(found->atoms, s.options.arg_names));
  }
  std::unique_lock lock(s.mu);
  auto entry = std::make_unique<const State::Entry>(State::Entry{std::move(call_atoms), found});
  s.recent.store(entry.get(), std::memory_order_release);
  s.entries.emplace(hash, std::move(entry));
  return found;
}

std::shared_ptr<ConcreteCore> FunctionCore::concrete_for(std::vector<Atom> atoms,
                                                         TraceCallback trace) {
  // Like tf.function: with an input_signature, the signature's trace.
  std::vector<Atom> trace_atoms = atoms_to_trace(atoms);
  std::lock_guard trace_lock(state_->trace_mu);
  return trace_locked(std::move(trace_atoms), trace);
}

std::vector<Atom> FunctionCore::atoms_to_trace(const std::vector<Atom>& call_atoms) const {
  const State& s = *state_;
  if (s.signature_atoms.empty()) return call_atoms;
  if (!is_subtype(call_atoms, s.signature_atoms)) {
    throw_signature_mismatch(s.name, s.options.arg_names, call_atoms, s.signature_atoms);
  }
  return s.signature_atoms;
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
  InlineScope active(*this);  // a function that calls itself would trace forever

  std::set<uint64_t> modules;
  for (const Atom& a : atoms) {
    if (a.kind == AtomKind::Module) modules.insert(uint64_t(a.i));
  }
  auto state = std::make_shared<trace::TraceState>();
  state->function_name = s.name;
  state->code_function = std::make_shared<const std::string>(s.name);
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
  collect_variables(*state->body, concrete->variables_used);
  auto optimized = std::make_shared<graph::Body>(*state->body);
  passes::optimize(*optimized);
  concrete->plan = std::make_unique<exec::Plan>(optimized);

  {
    std::unique_lock lock(s.mu);
    s.concretes.push_back(concrete);
    s.traced_once = true;
    s.traced_modules.insert(modules.begin(), modules.end());
    s.registered_modules.insert(modules.begin(), modules.end());  // drop_module erases under mu
  }
  for (uint64_t id : modules) add_module_user(id, this);
  int count = ++s.tracing_count;
  warn_if_retracing(count, concrete->atoms);
  return concrete;
}

void FunctionCore::warn_if_retracing(int count, const std::vector<Atom>& latest) {
  State& s = *state_;
  constexpr int kWarnAfter = 5;
  if (count <= kWarnAfter) return;
  std::shared_lock lock(s.mu);
  // The latest other trace still cached: another thread may have traced since,
  // and a destroyed module's traces are gone.
  auto other = std::find_if(s.concretes.rbegin(), s.concretes.rend(),
                            [&](const auto& c) { return &c->atoms != &latest; });
  if (other == s.concretes.rend()) return;
  const auto& previous = (*other)->atoms;
  auto a = argument_ranges(latest), b = argument_ranges(previous);
  if (a.size() != b.size()) return;
  for (size_t k = 0; k < a.size(); ++k) {
    std::vector<Atom> x(latest.begin() + long(a[k].first), latest.begin() + long(a[k].second));
    std::vector<Atom> y(previous.begin() + long(b[k].first), previous.begin() + long(b[k].second));
    if (same_atoms(x, y)) continue;
    size_t px = 0, py = 0;
    bool literal = x.size() == 1 && x[0].kind != AtomKind::Tensor;
    log_message(
        LogLevel::Warning,
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
    if (!uses(it->second->atoms)) {
      ++it;
      continue;
    }
    if (state_->recent.load(std::memory_order_relaxed) == it->second.get())
      state_->recent.store(nullptr, std::memory_order_release);
    state_->retired.push_back(std::move(it->second));
    it = state_->entries.erase(it);
  }
  std::erase_if(state_->concretes, [&](const auto& c) { return uses(c->atoms); });
  state_->registered_modules.erase(module_id);
}

}  // namespace ag::detail
