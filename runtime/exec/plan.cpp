#include "exec/plan.h"

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/tensor_impl.h"
#include "function/variable_state.h"
#include "ops/random.h"

namespace ag::exec {

struct Plan::Step {
  graph::NodeKind kind = graph::NodeKind::Op;
  const ops::OpDef* op = nullptr;
  const ops::Attrs* attrs = nullptr;
  std::vector<int32_t> inputs;  // slots
  int32_t out_slot = -1;        // first output slot; outputs are consecutive
  std::vector<DType> out_dtypes;
  Shape static_shape;  // Op steps: the output shape when fully known
  bool shape_is_static = false;
  // An in-place op whose input 0 is a loop variable this plan may overwrite
  // (a TensorArray write in a loop body): write into it when sizes allow.
  bool write_into_input = false;
  // Per output: its memory-plan buffer, or -1 for a fresh tensor (function
  // outputs of top-level plans, variable values, effect results).
  std::vector<int32_t> buffers;
  std::shared_ptr<detail::VariableState> variable;
  std::shared_ptr<const graph::EffectFn> effect;
  uint64_t rng_key = 0;
  std::unique_ptr<std::atomic<uint64_t>> rng_counter;
  // If: then, else. While: cond, body.
  std::vector<std::unique_ptr<Plan>> subplans;
  size_t first_child = 0;  // index of the subplans' arenas in Arena::children
  int64_t maximum_iterations = -1;
};

// Per-call state: where each slot's value is now, the reusable buffers and
// the arenas of nested plans.
struct Plan::Arena {
  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
  };
  std::span<const Tensor* const> top_inputs;  // top-level run only
  std::vector<const void*> data;              // per slot
  std::vector<const Shape*> shape;            // per slot
  std::vector<Shape> dynamic_shapes;          // per slot, shapes known only at run time
  std::vector<Tensor> holders;                // per slot, values held as tensors
  std::vector<Buffer> buffers;
  std::vector<std::unique_ptr<Arena>> children;
  std::vector<View> views;  // scratch for nested calls

  ~Arena() {
    for (Buffer& b : buffers) std::free(b.data);
  }
  void* reserve(int32_t buffer, size_t bytes) {
    Buffer& b = buffers[size_t(buffer)];
    if (b.capacity < bytes) {
      std::free(b.data);
      size_t rounded = (bytes + detail::kAlignment - 1) / detail::kAlignment * detail::kAlignment;
      b.data = std::aligned_alloc(detail::kAlignment, rounded == 0 ? detail::kAlignment : rounded);
      if (!b.data) throw std::bad_alloc();
      b.capacity = rounded;
    }
    return b.data;
  }
};

namespace {

// Identity nodes alias their input: tensors are immutable, so no copy.
graph::ValueRef through_identity(const graph::Body& body, graph::ValueRef v) {
  while (true) {
    const graph::Node& n = body.nodes[size_t(v.node)];
    if (n.kind != graph::NodeKind::Op || n.op != ops::OpId::Identity) return v;
    v = n.inputs[0];
  }
}

size_t byte_size(const Shape& shape, DType dtype) {
  return size_t(shape.num_elements()) * dtype_size(dtype);
}

}  // namespace

Plan::Plan(std::shared_ptr<const graph::Body> owned_body, bool top_level, size_t donated_inputs)
    : body_(std::move(owned_body)), top_level_(top_level) {
  const graph::Body& body = *body_;
  // One slot per node output; Identity outputs alias their input's slot.
  std::vector<int32_t> first_slot(body.nodes.size(), -1);
  int32_t num_slots = 0;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    first_slot[i] = num_slots;
    num_slots += int32_t(body.nodes[i].outputs.size());
  }
  auto slot_of = [&](graph::ValueRef v) {
    v = through_identity(body, v);
    return first_slot[size_t(v.node)] + v.output;
  };
  sources_.assign(size_t(num_slots), Source{Source::Step, -1});
  slot_dtypes_.resize(size_t(num_slots));
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    for (size_t k = 0; k < body.nodes[i].outputs.size(); ++k) {
      slot_dtypes_[size_t(first_slot[i]) + k] = body.nodes[i].outputs[k].dtype;
    }
  }
  num_inputs_ = body.placeholders.size();
  for (size_t k = 0; k < body.placeholders.size(); ++k) {
    sources_[size_t(first_slot[size_t(body.placeholders[k])])] = {Source::Input, int32_t(k)};
  }

  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const graph::Node& n = body.nodes[i];
    if (n.kind == graph::NodeKind::Placeholder) continue;
    if (n.kind == graph::NodeKind::Const) {
      sources_[size_t(first_slot[i])] = {Source::Constant, int32_t(constants_.size())};
      constants_.push_back(n.value);
      continue;
    }
    if (n.kind == graph::NodeKind::Op && n.op == ops::OpId::Identity) continue;
    Step step;
    step.kind = n.kind;
    step.op = n.kind == graph::NodeKind::Op ? &ops::op_def(n.op) : nullptr;
    step.attrs = &n.attrs;
    for (graph::ValueRef in : n.inputs) step.inputs.push_back(slot_of(in));
    step.out_slot = first_slot[i];
    for (const auto& t : n.outputs) step.out_dtypes.push_back(t.dtype);
    step.buffers.assign(n.outputs.size(), -1);
    if (n.kind == graph::NodeKind::Op) {
      step.static_shape = n.outputs[0].shape;
      step.shape_is_static = step.static_shape.is_fully_defined();
    }
    step.variable = n.variable;
    step.effect = n.effect;
    if (step.op && (step.op->flags & ops::kStateful)) {
      step.rng_key = ops::eager_random_state(n.attrs.seed).key;
      step.rng_counter = std::make_unique<std::atomic<uint64_t>>(0);
    }
    if (n.kind == graph::NodeKind::If || n.kind == graph::NodeKind::While) {
      for (const auto& sub : n.subgraphs)
        step.subplans.push_back(std::make_unique<Plan>(sub, false));
      step.first_child = num_children_;
      num_children_ += step.subplans.size();
      if (!n.attrs.ints.empty()) step.maximum_iterations = n.attrs.ints[0];
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      sources_[size_t(first_slot[i]) + k] = {Source::Step, int32_t(steps_.size())};
    }
    steps_.push_back(std::move(step));
  }
  for (graph::ValueRef v : body.outputs) outputs_.push_back(slot_of(v));

  // Memory plan. Values computed into buffers: op results that are not
  // top-level outputs, and every If/While result. A buffer is free again
  // after the last step that reads its value; a nested plan's outputs stay
  // alive to the end, for the parent to read.
  std::vector<int32_t> last_use(size_t(num_slots), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int32_t in : steps_[s].inputs) last_use[size_t(in)] = int32_t(s);
  }
  std::vector<bool> is_output(size_t(num_slots), false);
  for (int32_t o : outputs_) {
    is_output[size_t(o)] = true;
    last_use[size_t(o)] = INT_MAX;
  }
  std::vector<int32_t> free_buffers;
  std::vector<int32_t> buffer_of(size_t(num_slots), -1);
  auto release = [&](int32_t slot) {
    if (buffer_of[size_t(slot)] >= 0) free_buffers.push_back(buffer_of[size_t(slot)]);
    buffer_of[size_t(slot)] = -1;
  };
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    if (step.op && (step.op->flags & ops::kInPlace)) {
      int32_t in0 = step.inputs[0];
      const Source& src = sources_[size_t(in0)];
      step.write_into_input = src.kind == Source::Input && size_t(src.index) < donated_inputs &&
                              last_use[size_t(in0)] == int32_t(s);
    }
    bool buffered = step.kind == graph::NodeKind::Op || step.kind == graph::NodeKind::If ||
                    step.kind == graph::NodeKind::While;
    for (size_t k = 0; k < step.buffers.size(); ++k) {
      int32_t slot = step.out_slot + int32_t(k);
      bool fresh = top_level_ && is_output[size_t(slot)] && step.kind == graph::NodeKind::Op;
      if (!buffered || fresh) continue;
      if (free_buffers.empty()) free_buffers.push_back(int32_t(num_buffers_++));
      step.buffers[k] = free_buffers.back();
      free_buffers.pop_back();
      buffer_of[size_t(slot)] = step.buffers[k];
      if (last_use[size_t(slot)] < 0) last_use[size_t(slot)] = int32_t(s);
    }
    for (int32_t in : step.inputs) {
      if (last_use[size_t(in)] == int32_t(s)) release(in);
    }
    for (size_t k = 0; k < step.buffers.size(); ++k) {
      int32_t slot = step.out_slot + int32_t(k);
      if (last_use[size_t(slot)] == int32_t(s)) release(slot);
    }
  }
}

Plan::~Plan() = default;
size_t Plan::num_steps() const {
  return steps_.size();
}

std::unique_ptr<Plan::Arena> Plan::new_arena() const {
  auto arena = std::make_unique<Arena>();
  arena->data.resize(sources_.size());
  arena->shape.resize(sources_.size());
  arena->dynamic_shapes.resize(sources_.size());
  arena->holders.resize(sources_.size());
  arena->buffers.resize(num_buffers_);
  arena->children.resize(num_children_);
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].kind == Source::Constant) {
      const Tensor& c = constants_[size_t(sources_[s].index)];
      arena->data[s] = c.raw_data();
      arena->shape[s] = &c.shape();
    }
  }
  for (const Step& step : steps_) {
    for (size_t k = 0; k < step.subplans.size(); ++k) {
      arena->children[step.first_child + k] = step.subplans[k]->new_arena();
    }
  }
  return arena;
}

std::unique_ptr<Plan::Arena> Plan::acquire_arena() const {
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      auto arena = std::move(pool_.back());
      pool_.pop_back();
      return arena;
    }
  }
  return new_arena();
}

void Plan::release_arena(std::unique_ptr<Arena> arena) const {
  std::lock_guard lock(pool_mu_);
  pool_.push_back(std::move(arena));
}

Tensor Plan::materialize(Arena& a, int32_t slot) const {
  const Source& src = sources_[size_t(slot)];
  if (src.kind == Source::Input && !a.top_inputs.empty()) return *a.top_inputs[size_t(src.index)];
  if (src.kind == Source::Constant) return constants_[size_t(src.index)];
  if (a.holders[size_t(slot)].defined()) return a.holders[size_t(slot)];
  DType dtype = slot_dtypes_[size_t(slot)];
  Tensor copy = detail::make_eager(dtype, *a.shape[size_t(slot)]);
  std::memcpy(copy.raw_mutable_data(), a.data[size_t(slot)], byte_size(copy.shape(), dtype));
  return copy;
}

void Plan::store(Arena& a, const Step& step, int32_t slot, int32_t buffer, View v) const {
  DType dtype = slot_dtypes_[size_t(slot)];
  a.dynamic_shapes[size_t(slot)] = *v.shape;
  a.shape[size_t(slot)] = &a.dynamic_shapes[size_t(slot)];
  size_t bytes = byte_size(*v.shape, dtype);
  if (buffer < 0) {
    Tensor fresh = detail::make_eager(dtype, *v.shape);
    std::memcpy(fresh.raw_mutable_data(), v.data, bytes);
    a.data[size_t(slot)] = fresh.raw_data();
    a.holders[size_t(slot)] = std::move(fresh);
    return;
  }
  (void)step;
  void* out = a.reserve(buffer, bytes);
  if (out != v.data) std::memmove(out, v.data, bytes);
  a.data[size_t(slot)] = out;
}

void Plan::run_op(Arena& a, const Step& step) const {
  constexpr size_t kMaxInline = 8;
  size_t n = step.inputs.size();
  ops::KernelInput kin_inline[kMaxInline];
  std::vector<ops::KernelInput> kin_heap;
  ops::KernelInput* kin = kin_inline;
  if (n > kMaxInline) {
    kin_heap.resize(n);
    kin = kin_heap.data();
  }
  for (size_t i = 0; i < n; ++i) {
    int32_t in = step.inputs[i];
    kin[i] = {a.data[size_t(in)], a.shape[size_t(in)], slot_dtypes_[size_t(in)]};
  }
  const Shape* out_shape = &step.static_shape;
  if (!step.shape_is_static) {
    // Unknown dims: run the op's shape rule on the actual shapes and values.
    std::vector<ops::ValueType> types(n);
    std::vector<const void*> values(n);
    for (size_t i = 0; i < n; ++i) {
      types[i] = {kin[i].dtype, *kin[i].shape};
      values[i] = kin[i].data;
    }
    ops::InferContext ictx{step.op->name, types, *step.attrs, values};
    a.dynamic_shapes[size_t(step.out_slot)] = step.op->infer(ictx).shape;
    out_shape = &a.dynamic_shapes[size_t(step.out_slot)];
  }
  DType dtype = step.out_dtypes[0];
  void* out;
  if (step.write_into_input &&
      byte_size(*out_shape, dtype) == byte_size(*kin[0].shape, kin[0].dtype)) {
    out = const_cast<void*>(kin[0].data);
  } else if (step.buffers[0] >= 0) {
    out = a.reserve(step.buffers[0], byte_size(*out_shape, dtype));
  } else {
    Tensor fresh = detail::make_eager(dtype, *out_shape);
    out = fresh.raw_mutable_data();
    a.holders[size_t(step.out_slot)] = std::move(fresh);
    out_shape = &a.holders[size_t(step.out_slot)].shape();
  }
  ops::RandomState rng;
  if (step.rng_counter) {
    rng.key = step.rng_key;
    rng.counter = step.rng_counter->fetch_add(uint64_t(out_shape->num_elements()));
  }
  ops::KernelContext kctx{step.op->name, {kin, n}, out, out_shape, dtype, step.attrs, &rng};
  step.op->kernel(kctx);
  a.data[size_t(step.out_slot)] = out;
  a.shape[size_t(step.out_slot)] = out_shape;
}

void Plan::run_if(Arena& a, const Step& step) const {
  bool pred = *static_cast<const bool*>(a.data[size_t(step.inputs[0])]);
  size_t branch = pred ? 0 : 1;
  const Plan& sub = *step.subplans[branch];
  Arena& child = *a.children[step.first_child + branch];
  a.views.clear();
  for (size_t i = 1; i < step.inputs.size(); ++i) {
    a.views.push_back({a.data[size_t(step.inputs[i])], a.shape[size_t(step.inputs[i])]});
  }
  sub.execute(child, a.views);
  for (size_t k = 0; k < step.buffers.size(); ++k) {
    store(a, step, step.out_slot + int32_t(k), step.buffers[k], sub.output_view(child, k));
  }
}

void Plan::run_while(Arena& a, const Step& step) const {
  const Plan& cond = *step.subplans[0];
  const Plan& body = *step.subplans[1];
  Arena& cond_arena = *a.children[step.first_child];
  Arena& body_arena = *a.children[step.first_child + 1];
  size_t num_vars = step.buffers.size();
  // The loop variables live in the While's own output buffers.
  for (size_t k = 0; k < num_vars; ++k) {
    int32_t in = step.inputs[k];
    store(a, step, step.out_slot + int32_t(k), step.buffers[k],
          {a.data[size_t(in)], a.shape[size_t(in)]});
  }
  std::vector<View>& views = a.views;
  auto refresh_views = [&] {
    views.clear();
    for (size_t k = 0; k < num_vars; ++k) {
      int32_t slot = step.out_slot + int32_t(k);
      views.push_back({a.data[size_t(slot)], a.shape[size_t(slot)]});
    }
    for (size_t i = num_vars; i < step.inputs.size(); ++i) {
      views.push_back({a.data[size_t(step.inputs[i])], a.shape[size_t(step.inputs[i])]});
    }
  };
  for (int64_t iteration = 0;; ++iteration) {
    refresh_views();
    cond.execute(cond_arena, views);
    if (!*static_cast<const bool*>(cond.output_view(cond_arena, 0).data)) break;
    if (step.maximum_iterations >= 0 && iteration >= step.maximum_iterations) break;
    body.execute(body_arena, views);
    // A body output may be another loop variable's current value (x, y = y,
    // x): hold such values aside first so no update reads an overwritten one.
    std::vector<Tensor> aside;
    for (size_t k = 0; k < num_vars; ++k) {
      View v = body.output_view(body_arena, k);
      for (size_t j = 0; j < num_vars; ++j) {
        if (j != k && v.data == views[j].data) {
          if (aside.empty()) aside.resize(num_vars);
          aside[k] = detail::make_eager(slot_dtypes_[size_t(step.out_slot) + k], *v.shape);
          std::memcpy(aside[k].raw_mutable_data(), v.data, byte_size(*v.shape, aside[k].dtype()));
        }
      }
    }
    for (size_t k = 0; k < num_vars; ++k) {
      View v = body.output_view(body_arena, k);
      if (!aside.empty() && aside[k].defined()) v = {aside[k].raw_data(), &aside[k].shape()};
      store(a, step, step.out_slot + int32_t(k), step.buffers[k], v);
    }
  }
}

void Plan::execute(Arena& a, std::span<const View> inputs) const {
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].kind == Source::Input) {
      a.data[s] = inputs[size_t(sources_[s].index)].data;
      a.shape[s] = inputs[size_t(sources_[s].index)].shape;
    }
  }
  run_steps(a);
}

void Plan::run_steps(Arena& a) const {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case graph::NodeKind::Op:
        run_op(a, step);
        break;
      case graph::NodeKind::If:
        run_if(a, step);
        break;
      case graph::NodeKind::While:
        run_while(a, step);
        break;
      case graph::NodeKind::ReadVariable:
      case graph::NodeKind::AssignVariable:
      case graph::NodeKind::AssignAddVariable:
      case graph::NodeKind::AssignSubVariable: {
        Tensor value = step.kind == graph::NodeKind::ReadVariable
                           ? step.variable->read()
                           : step.variable->update(step.kind, materialize(a, step.inputs[0]));
        a.data[size_t(step.out_slot)] = value.raw_data();
        a.holders[size_t(step.out_slot)] = std::move(value);
        a.shape[size_t(step.out_slot)] = &a.holders[size_t(step.out_slot)].shape();
        break;
      }
      case graph::NodeKind::Effect: {
        std::vector<Tensor> args;
        args.reserve(step.inputs.size());
        for (int32_t in : step.inputs) args.push_back(materialize(a, in));
        std::vector<Tensor> results = (*step.effect)(args);
        for (size_t k = 0; k < step.out_dtypes.size() && k < results.size(); ++k) {
          int32_t slot = step.out_slot + int32_t(k);
          a.data[size_t(slot)] = results[k].raw_data();
          a.holders[size_t(slot)] = std::move(results[k]);
          a.shape[size_t(slot)] = &a.holders[size_t(slot)].shape();
        }
        break;
      }
      default:
        throw InternalError("unexpected node kind in a plan");
    }
  }
}

Plan::View Plan::output_view(const Arena& a, size_t k) const {
  int32_t slot = outputs_[k];
  return {a.data[size_t(slot)], a.shape[size_t(slot)]};
}

void Plan::run(std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) const {
  if (inputs.size() != num_inputs_) {
    throw InternalError("plan expects " + std::to_string(num_inputs_) + " inputs, got " +
                        std::to_string(inputs.size()));
  }
  std::unique_ptr<Arena> arena = acquire_arena();
  struct Release {
    const Plan* plan;
    std::unique_ptr<Arena>& arena;
    ~Release() {
      for (Tensor& h : arena->holders) h = Tensor();
      arena->top_inputs = {};
      plan->release_arena(std::move(arena));
    }
  } release{this, arena};
  Arena& a = *arena;
  a.top_inputs = inputs;
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].kind == Source::Input) {
      a.data[s] = inputs[size_t(sources_[s].index)]->raw_data();
      a.shape[s] = &inputs[size_t(sources_[s].index)]->shape();
    }
  }
  run_steps(a);
  outputs.clear();
  outputs.reserve(outputs_.size());
  for (int32_t slot : outputs_) outputs.push_back(materialize(a, slot));
}

}  // namespace ag::exec
