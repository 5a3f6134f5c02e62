// ag::GradientTape: recording ops on this thread while a tape is alive, and
// reverse accumulation over the recording with the gradient functions of
// ops.def.
//
// A tape records an op when one of its inputs is tracked: watched, or the
// output of an op or variable read it recorded. Tensors are known by
// identity (Tensor::id), and the tape keeps every recorded tensor alive, so
// an identity is never reused while it records. The backward runs the public
// ops, so it is eager or traced as the forward was, and an enclosing tape
// records it (higher-order gradients).
#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ag/gradients.h"
#include "autodiff/tape.h"
#include "core/tensor_impl.h"
#include "ops/dispatch.h"
#include "ops/gradient_helpers.h"

namespace ag {
namespace detail {

namespace {

struct Entry {
  bool staged = false;  // a staged If/While rather than an op
  ops::OpId op = ops::OpId::kCount;
  ops::Attrs attrs;
  CallSite site;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::string what;                   // staged: the construct and where it is
  autodiff::StagedGradient gradient;  // staged: null when not implemented
};

}  // namespace

class TapeImpl {
 public:
  TapeImpl(bool persistent, bool watch_accessed_variables)
      : persistent_(persistent), watch_accessed_variables_(watch_accessed_variables) {}

  void watch(const Tensor& t) {
    if (!t.defined()) throw InvalidArgumentError("GradientTape.watch: the tensor is undefined");
    track(t);
  }
  void watch_variable(uint64_t id) { watched_variables_.insert(id); }

  bool wants_read(uint64_t id, bool trainable) const {
    return recording_ && (watched_variables_.count(id) || (trainable && watch_accessed_variables_));
  }
  void record_read(uint64_t id, const Tensor& value) {
    track(value);
    variable_reads_[id].push_back(value);
  }

  void on_op(ops::OpId op, std::span<const Tensor> inputs, const ops::Attrs& attrs, CallSite site,
             const Tensor& output) {
    if (!recording_ || !ops::op_def(op).differentiable() || !any_tracked(inputs)) return;
    track(output);
    entries_.push_back({false, op, attrs, site, {inputs.begin(), inputs.end()}, {output}, {}, {}});
  }

  void on_staged(const std::string& what, std::span<const Tensor> inputs,
                 std::span<const Tensor> outputs, const autodiff::StagedGradient& gradient) {
    if (!recording_ || !any_tracked(inputs)) return;
    // An integer or bool result (a loop counter, a flag) carries no gradient,
    // as a comparison's: it is not tracked.
    for (const Tensor& t : outputs)
      if (t.defined() && is_floating(t.dtype())) track(t);
    Entry e;
    e.staged = true;
    e.inputs.assign(inputs.begin(), inputs.end());
    e.outputs.assign(outputs.begin(), outputs.end());
    e.what = what;
    e.gradient = gradient;
    entries_.push_back(std::move(e));
  }

  bool tracks_any(std::span<const Tensor> inputs) const {
    return recording_ && any_tracked(inputs);
  }

  std::vector<Tensor> gradient(const Tensor& target, const std::vector<GradientSource>& sources,
                               UnconnectedGradients unconnected, const Tensor& output_gradients);
  // The gradient of several targets, target k seeded by seeds[k].
  std::vector<Tensor> gradient_of_targets(std::span<const Tensor> targets,
                                          std::span<const Tensor> seeds,
                                          const std::vector<GradientSource>& sources,
                                          UnconnectedGradients unconnected);

  void on_gradient_ready(GradientTape::GradientReady ready) { ready_ = std::move(ready); }

  bool recording() const { return recording_; }
  bool any_tracked(std::span<const Tensor> inputs) const {
    for (const Tensor& t : inputs)
      if (is_tracked(t)) return true;
    return false;
  }

 private:
  bool is_tracked(const Tensor& t) const { return t.defined() && tracked_.count(t.id()); }
  void check_sources(const std::vector<GradientSource>& sources) const;
  void track(const Tensor& t) {
    if (tracked_.insert(t.id()).second) alive_.push_back(t);
  }
  Tensor seed(const Tensor& target, const Tensor& output_gradients) const;
  void backprop_entry(const Entry& e, std::unordered_map<const void*, Tensor>& grads) const;
  void deliver(const Entry& e, const std::vector<Tensor>& input_grads, std::string_view name,
               std::unordered_map<const void*, Tensor>& grads) const;
  Tensor source_gradient(const GradientSource& s,
                         const std::unordered_map<const void*, Tensor>& grads,
                         UnconnectedGradients unconnected) const;
  std::vector<size_t> first_readers(const std::vector<GradientSource>& sources) const;

  bool persistent_;
  bool watch_accessed_variables_;
  bool recording_ = true;
  bool used_ = false;
  std::unordered_set<const void*> tracked_;
  std::vector<Tensor> alive_;
  std::vector<Entry> entries_;
  std::unordered_set<uint64_t> watched_variables_;
  std::unordered_map<uint64_t, std::vector<Tensor>> variable_reads_;
  GradientTape::GradientReady ready_;
};

namespace {

// The tapes alive on this thread, innermost last, and the one observer that
// hands them the ops (installed only while there is a tape).
thread_local std::vector<TapeImpl*> t_tapes;
// The tapes below this index are paused (autodiff::PauseTapes); tapes made
// since record.
thread_local size_t t_first_active = 0;

std::span<TapeImpl* const> active_tapes() {
  if (t_first_active >= t_tapes.size()) return {};
  return std::span<TapeImpl* const>(t_tapes).subspan(t_first_active);
}

struct TapeObserver final : ops::OpObserver {
  void on_op(ops::OpId op, std::span<const Tensor> inputs, const ops::Attrs& attrs, CallSite site,
             const Tensor& output) override {
    for (TapeImpl* tape : active_tapes()) tape->on_op(op, inputs, attrs, site, output);
  }
};
TapeObserver g_observer;

std::string dtype_string(DType d) {
  return std::string(dtype_name(d));
}

void accumulate(std::unordered_map<const void*, Tensor>& grads, const Tensor& t, const Tensor& g) {
  auto [it, inserted] = grads.try_emplace(t.id(), g);
  if (!inserted) it->second = api::add(it->second, g, {});
}

}  // namespace

struct TapeAccess {
  static TapeImpl& impl(GradientTape& tape) { return *tape.impl_; }
};

Tensor alias(const Tensor& t) {
  if (!t.defined()) return t;
  return Tensor(std::make_shared<TensorImpl>(*t.impl()));
}

Tensor TapeImpl::seed(const Tensor& target, const Tensor& output_gradients) const {
  if (!output_gradients.defined()) {
    if (target.shape().is_fully_defined()) return api::ones(target.shape(), target.dtype());
    return api::ones_like(target, {});
  }
  if (!output_gradients.shape().is_compatible_with(target.shape())) {
    throw InvalidArgumentError("GradientTape.gradient: output_gradients has shape " +
                               output_gradients.shape().to_string() +
                               ", but the target has shape " + target.shape().to_string());
  }
  return api::cast(output_gradients, target.dtype(), {});
}

void TapeImpl::backprop_entry(const Entry& e,
                              std::unordered_map<const void*, Tensor>& grads) const {
  if (e.staged) {
    std::vector<Tensor> output_grads(e.outputs.size());
    bool needed = false;
    for (size_t k = 0; k < e.outputs.size(); ++k) {
      auto it = grads.find(e.outputs[k].id());
      if (it == grads.end()) continue;
      output_grads[k] = it->second;
      needed = true;
    }
    if (!needed) return;
    if (!e.gradient) {
      throw UnimplementedError("GradientTape.gradient: " + e.what +
                               " has no gradient (not implemented yet); compute the gradient "
                               "outside it");
    }
    deliver(e, e.gradient(output_grads), e.what, grads);
    return;
  }
  auto it = grads.find(e.outputs[0].id());
  if (it == grads.end()) return;
  const ops::OpDef& def = ops::op_def(e.op);
  Tensor grad = it->second;
  ops::GradContext ctx{def.name, e.inputs, e.outputs[0], grad, e.attrs, e.site};
  ctx.needed = 0;
  for (size_t i = 0; i < e.inputs.size() && i < 64; ++i)
    if (is_tracked(e.inputs[i])) ctx.needed |= uint64_t{1} << i;
  deliver(e, def.gradient(ctx), def.name, grads);
}

// Adds each input's gradient to what it has; `name` is the op's, for errors.
void TapeImpl::deliver(const Entry& e, const std::vector<Tensor>& input_grads,
                       std::string_view name,
                       std::unordered_map<const void*, Tensor>& grads) const {
  if (input_grads.size() != e.inputs.size()) {
    throw InternalError("gradient of " + std::string(name) + ": gives " +
                        std::to_string(input_grads.size()) + " gradients for " +
                        std::to_string(e.inputs.size()) + " inputs");
  }
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const Tensor& x = e.inputs[i];
    const Tensor& g = input_grads[i];
    if (!g.defined() || !is_tracked(x)) continue;
    if (!is_floating(x.dtype())) {
      std::string where = ops::site_string(e.site);
      throw InvalidArgumentError(
          "GradientTape.gradient: the gradient flows through " + std::string(name) +
          (where.empty() ? "" : " (defined at " + where + ")") + " into its input " +
          std::to_string(i) + ", a " + dtype_string(x.dtype()) +
          " tensor computed from a watched tensor; integer and bool tensors have no gradient. "
          "Keep the computation in floating point, or compute that input from values the "
          "tape does not watch.");
    }
    if (g.dtype() != x.dtype() ||
        (g.shape().is_fully_defined() && x.shape().is_fully_defined() && g.shape() != x.shape())) {
      throw InternalError("gradient of " + std::string(name) + ": gives " +
                          dtype_string(g.dtype()) + g.shape().to_string() + " for input " +
                          std::to_string(i) + " of " + dtype_string(x.dtype()) +
                          x.shape().to_string());
    }
    accumulate(grads, x, g);
  }
}

namespace {
// Why a tape refuses a float16 or bfloat16 source or target, and what works.
constexpr const char* low_precision_advice =
    "; gradients of float16 and bfloat16 tensors are not computed (they are computed in float32 "
    "and rounded on store, ag/dtype.h): watch and differentiate float32 values, casting to the "
    "narrow dtype inside the computation (ag::cast(x, ag::float16)) where it must be stored "
    "narrow";
}  // namespace

void TapeImpl::check_sources(const std::vector<GradientSource>& sources) const {
  for (size_t i = 0; i < sources.size(); ++i) {
    const GradientSource& s = sources[i];
    if (!s.variable && !s.tensor.defined()) {
      throw InvalidArgumentError("GradientTape.gradient: source " + std::to_string(i) +
                                 " is an undefined tensor");
    }
    if (!is_compute_dtype(s.dtype) && is_floating(s.dtype)) {
      throw UnimplementedError("GradientTape.gradient: source " + std::to_string(i) + " is " +
                               dtype_string(s.dtype) + low_precision_advice);
    }
    if (!is_floating(s.dtype)) {
      throw InvalidArgumentError("GradientTape.gradient: source " + std::to_string(i) +
                                 " must be floating (float32 or float64), got " +
                                 dtype_string(s.dtype) + "; integer tensors have no gradient");
    }
  }
}

std::vector<Tensor> TapeImpl::gradient(const Tensor& target,
                                       const std::vector<GradientSource>& sources,
                                       UnconnectedGradients unconnected,
                                       const Tensor& output_gradients) {
  if (!target.defined())
    throw InvalidArgumentError("GradientTape.gradient: the target is undefined");
  if (!is_compute_dtype(target.dtype()) && is_floating(target.dtype())) {
    throw UnimplementedError("GradientTape.gradient: the target is " +
                             dtype_string(target.dtype()) + low_precision_advice);
  }
  if (!is_floating(target.dtype())) {
    throw InvalidArgumentError(
        "GradientTape.gradient: the target must be floating (float32 or "
        "float64), got " +
        dtype_string(target.dtype()));
  }
  check_sources(sources);
  // The seed is not part of the backward this tape computes.
  Tensor seeded;
  {
    bool was_recording = std::exchange(recording_, false);
    seeded = seed(target, output_gradients);
    recording_ = was_recording;
  }
  return gradient_of_targets({&target, 1}, {&seeded, 1}, sources, unconnected);
}

Tensor TapeImpl::source_gradient(const GradientSource& s,
                                 const std::unordered_map<const void*, Tensor>& grads,
                                 UnconnectedGradients unconnected) const {
  Tensor g;
  if (s.variable) {
    auto reads = variable_reads_.find(s.variable);
    if (reads != variable_reads_.end()) {
      for (const Tensor& r : reads->second) {
        auto it = grads.find(r.id());
        if (it == grads.end()) continue;
        g = g.defined() ? api::add(g, it->second, {}) : it->second;
      }
    }
    if (!g.defined() && unconnected == UnconnectedGradients::Zero) g = api::zeros(s.shape, s.dtype);
  } else {
    auto it = grads.find(s.tensor.id());
    if (it != grads.end()) g = it->second;
    if (!g.defined() && unconnected == UnconnectedGradients::Zero)
      g = api::zeros_like(s.tensor, {});
  }
  return g;
}

// For each source, the index of the first entry that reads it (one of its
// variable's reads, or the tensor): the backward, walking the entries from
// the last, has completed the source's gradient once it has passed that
// entry. entries_.size() for a source that no entry reads.
std::vector<size_t> TapeImpl::first_readers(const std::vector<GradientSource>& sources) const {
  std::unordered_map<const void*, size_t> first;
  for (size_t i = entries_.size(); i-- > 0;)
    for (const Tensor& t : entries_[i].inputs)
      if (t.defined()) first[t.id()] = i;
  std::vector<size_t> out;
  for (const GradientSource& s : sources) {
    size_t at = entries_.size();
    auto read_at = [&](const Tensor& t) {
      auto it = first.find(t.id());
      if (it != first.end()) at = std::min(at, it->second);
    };
    if (s.variable) {
      auto reads = variable_reads_.find(s.variable);
      if (reads != variable_reads_.end())
        for (const Tensor& r : reads->second) read_at(r);
    } else {
      read_at(s.tensor);
    }
    out.push_back(at);
  }
  return out;
}

std::vector<Tensor> TapeImpl::gradient_of_targets(std::span<const Tensor> targets,
                                                  std::span<const Tensor> seeds,
                                                  const std::vector<GradientSource>& sources,
                                                  UnconnectedGradients unconnected) {
  if (used_ && !persistent_) {
    throw FailedPreconditionError(
        "GradientTape.gradient: a non-persistent GradientTape can only compute one set of "
        "gradients; construct it with persistent = true to call gradient() again");
  }
  used_ = true;

  // This tape does not record its own backward; enclosing tapes do.
  bool was_recording = recording_;
  recording_ = false;
  struct Restore {
    bool& flag;
    bool value;
    ~Restore() { flag = value; }
  } restore{recording_, was_recording};

  std::unordered_map<const void*, Tensor> grads;
  bool any = false;
  for (size_t k = 0; k < targets.size(); ++k) {
    if (!is_tracked(targets[k]) || !seeds[k].defined()) continue;
    accumulate(grads, targets[k], seeds[k]);
    any = true;
  }
  // With a ready callback, each source's gradient is handed over as soon as
  // the walk has passed the first entry that reads the source.
  const GradientTape::GradientReady ready = std::exchange(ready_, nullptr);
  std::vector<Tensor> result(sources.size());
  std::vector<size_t> first, order;
  if (ready) {
    first = first_readers(sources);
    order.resize(sources.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return first[a] > first[b]; });
  }
  size_t emitted = 0;
  auto emit_complete = [&](size_t index) {
    for (; emitted < order.size() && first[order[emitted]] >= index; ++emitted) {
      const size_t k = order[emitted];
      result[k] = source_gradient(sources[k], grads, unconnected);
      ready(k, result[k]);
    }
  };
  if (any) {
    emit_complete(entries_.size());
    for (size_t i = entries_.size(); i-- > 0;) {
      backprop_entry(entries_[i], grads);
      emit_complete(i);
    }
  }
  emit_complete(0);
  if (!ready)
    for (size_t k = 0; k < sources.size(); ++k)
      result[k] = source_gradient(sources[k], grads, unconnected);
  // A non-persistent tape is done: it frees what it holds and records no more.
  if (!persistent_) {
    entries_.clear();
    variable_reads_.clear();
    tracked_.clear();
    alive_.clear();
    watched_variables_.clear();
    watch_accessed_variables_ = false;
  }
  return result;
}

}  // namespace detail

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : impl_(std::make_unique<detail::TapeImpl>(persistent, watch_accessed_variables)) {
  detail::t_tapes.push_back(impl_.get());
  ops::set_op_observer(&detail::g_observer);
}

GradientTape::~GradientTape() {
  auto& tapes = detail::t_tapes;
  tapes.erase(std::remove(tapes.begin(), tapes.end(), impl_.get()), tapes.end());
  if (tapes.empty()) ops::set_op_observer(nullptr);
}

void GradientTape::on_gradient_ready(GradientReady ready) {
  impl_->on_gradient_ready(std::move(ready));
}

void GradientTape::watch(const Tensor& t) {
  impl_->watch(t);
}

void GradientTape::watch(const Variable& v) {
  impl_->watch_variable(v.id());
}

std::vector<Tensor> GradientTape::gradient_flat(const Tensor& target,
                                                const std::vector<detail::GradientSource>& sources,
                                                UnconnectedGradients unconnected,
                                                const Tensor& output_gradients) {
  return impl_->gradient(target, sources, unconnected, output_gradients);
}

}  // namespace ag

namespace ag::autodiff {

bool tape_active() {
  return !detail::active_tapes().empty();
}

bool tapes_track_any(std::span<const Tensor> inputs) {
  for (const detail::TapeImpl* tape : detail::active_tapes())
    if (tape->tracks_any(inputs)) return true;
  return false;
}

PauseTapes::PauseTapes() : previous_(detail::t_first_active) {
  detail::t_first_active = detail::t_tapes.size();
}

PauseTapes::~PauseTapes() {
  detail::t_first_active = previous_;
}

Tensor on_variable_read(uint64_t id, bool trainable, const Tensor& value) {
  Tensor read = value;
  bool fresh = false;
  for (detail::TapeImpl* tape : detail::active_tapes()) {
    if (!tape->wants_read(id, trainable)) continue;
    if (!fresh && !value.is_symbolic()) read = detail::alias(value);
    fresh = true;
    tape->record_read(id, read);
  }
  return read;
}

void on_staged_construct(const std::string& what, std::span<const Tensor> inputs,
                         std::span<const Tensor> outputs, StagedGradient gradient) {
  for (detail::TapeImpl* tape : detail::active_tapes())
    tape->on_staged(what, inputs, outputs, gradient);
}

int tapes_recording(std::span<const Tensor> inputs, std::span<const VariableUse> variables) {
  int count = 0;
  for (detail::TapeImpl* tape : detail::t_tapes) {
    bool wants = tape->recording() && tape->any_tracked(inputs);
    for (const VariableUse& v : variables) wants = wants || tape->wants_read(v.id, v.trainable);
    count += wants;
  }
  return count;
}

TapesSetAside::TapesSetAside() : tapes_(std::exchange(detail::t_tapes, {})) {
  ops::set_op_observer(nullptr);
}

TapesSetAside::~TapesSetAside() {
  detail::t_tapes = std::move(tapes_);
  ops::set_op_observer(detail::t_tapes.empty() ? nullptr : &detail::g_observer);
}

void watch_variable(GradientTape& tape, uint64_t id) {
  detail::TapeAccess::impl(tape).watch_variable(id);
}

std::vector<Tensor> gradient_of_targets(GradientTape& tape, std::span<const Tensor> targets,
                                        std::span<const Tensor> seeds,
                                        const std::vector<detail::GradientSource>& sources) {
  return detail::TapeAccess::impl(tape).gradient_of_targets(targets, seeds, sources,
                                                            UnconnectedGradients::None);
}

}  // namespace ag::autodiff
