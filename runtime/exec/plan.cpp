#include "exec/plan.h"

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
  int32_t out_slot = -1;
  DType out_dtype = DType::float32;
  Shape static_shape;
  bool shape_is_static = false;
  // Memory-plan buffer of the output, or -1: the output is a fresh tensor
  // (a function output, a variable value, an effect result).
  int32_t buffer = -1;
  std::shared_ptr<detail::VariableState> variable;
  std::shared_ptr<const graph::EffectFn> effect;
  uint64_t rng_key = 0;
  std::unique_ptr<std::atomic<uint64_t>> rng_counter;
};

// Per-call state: where each slot's value is now, and the reusable buffers.
struct Plan::Arena {
  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
  };
  std::vector<const void*> data;      // per slot
  std::vector<const Shape*> shape;    // per slot
  std::vector<Shape> dynamic_shapes;  // per slot, for shapes known only at run time
  std::vector<Tensor> holders;        // per slot, for fresh-tensor outputs
  std::vector<Buffer> buffers;

  ~Arena() {
    for (Buffer& b : buffers) std::free(b.data);
  }
  void* reserve(int32_t buffer, size_t bytes) {
    Buffer& b = buffers[size_t(buffer)];
    if (b.capacity < bytes) {
      std::free(b.data);
      size_t rounded = (bytes + detail::kAlignment - 1) / detail::kAlignment * detail::kAlignment;
      b.data = std::aligned_alloc(detail::kAlignment, rounded);
      if (!b.data) throw std::bad_alloc();
      b.capacity = rounded;
    }
    return b.data;
  }
};

namespace {

// Resolves chains of Identity nodes: they alias their input (tensors are
// immutable, so no copy is needed).
graph::ValueRef through_identity(const graph::Body& body, graph::ValueRef v) {
  while (true) {
    const graph::Node& n = body.nodes[size_t(v.node)];
    if (n.kind != graph::NodeKind::Op || n.op != ops::OpId::Identity) return v;
    v = n.inputs[0];
  }
}

}  // namespace

Plan::Plan(const graph::Body& body) {
  // Slot numbering: one slot per node output, Identity outputs aliased.
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

  // Steps, in body order.
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const graph::Node& n = body.nodes[i];
    int32_t out = first_slot[i];
    switch (n.kind) {
      case graph::NodeKind::Placeholder:
        continue;
      case graph::NodeKind::Const:
        sources_[size_t(out)] = {Source::Constant, int32_t(constants_.size())};
        constants_.push_back(n.value);
        continue;
      case graph::NodeKind::Op:
        if (n.op == ops::OpId::Identity) continue;
        break;
      case graph::NodeKind::If:
      case graph::NodeKind::While:
        throw UnimplementedError("the executor cannot run '" + n.op_name() + "' nodes yet");
      default:
        break;
    }
    Step step;
    step.kind = n.kind;
    step.op = n.kind == graph::NodeKind::Op ? &ops::op_def(n.op) : nullptr;
    step.attrs = &n.attrs;
    for (graph::ValueRef in : n.inputs) step.inputs.push_back(slot_of(in));
    step.out_slot = out;
    step.out_dtype = n.outputs.empty() ? DType::float32 : n.outputs[0].dtype;
    if (!n.outputs.empty()) {
      step.static_shape = n.outputs[0].shape;
      step.shape_is_static = step.static_shape.is_fully_defined();
    }
    step.variable = n.variable;
    step.effect = n.effect;
    if (step.op && (step.op->flags & ops::kStateful)) {
      step.rng_key = ops::eager_random_state(n.attrs.seed).key;
      step.rng_counter = std::make_unique<std::atomic<uint64_t>>(0);
    }
    sources_[size_t(out)] = {Source::Step, int32_t(steps_.size())};
    steps_.push_back(std::move(step));
  }
  for (graph::ValueRef v : body.outputs) outputs_.push_back(slot_of(v));

  // Memory plan: op outputs that are not function outputs get a buffer;
  // a buffer is free again after the last step that reads its value.
  std::vector<int32_t> last_use(size_t(num_slots), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int32_t in : steps_[s].inputs) last_use[size_t(in)] = int32_t(s);
  }
  std::vector<bool> is_output(size_t(num_slots), false);
  for (int32_t o : outputs_) is_output[size_t(o)] = true;
  std::vector<int32_t> free_buffers;
  std::vector<int32_t> buffer_of(size_t(num_slots), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    bool fresh = is_output[size_t(step.out_slot)] || step.kind != graph::NodeKind::Op;
    if (!fresh) {
      if (free_buffers.empty()) {
        free_buffers.push_back(int32_t(num_buffers_++));
      }
      step.buffer = free_buffers.back();
      free_buffers.pop_back();
      buffer_of[size_t(step.out_slot)] = step.buffer;
      if (last_use[size_t(step.out_slot)] < 0) last_use[size_t(step.out_slot)] = int32_t(s);
    }
    for (int32_t in : step.inputs) {
      if (last_use[size_t(in)] == int32_t(s) && buffer_of[size_t(in)] >= 0) {
        free_buffers.push_back(buffer_of[size_t(in)]);
        buffer_of[size_t(in)] = -1;
      }
    }
    if (buffer_of[size_t(step.out_slot)] >= 0 && last_use[size_t(step.out_slot)] == int32_t(s)) {
      free_buffers.push_back(buffer_of[size_t(step.out_slot)]);
      buffer_of[size_t(step.out_slot)] = -1;
    }
  }
}

Plan::~Plan() = default;
size_t Plan::num_steps() const {
  return steps_.size();
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
  auto arena = std::make_unique<Arena>();
  arena->data.resize(sources_.size());
  arena->shape.resize(sources_.size());
  arena->dynamic_shapes.resize(sources_.size());
  arena->holders.resize(sources_.size());
  arena->buffers.resize(num_buffers_);
  return arena;
}

void Plan::release_arena(std::unique_ptr<Arena> arena) const {
  std::lock_guard lock(pool_mu_);
  pool_.push_back(std::move(arena));
}

Tensor Plan::materialize(Arena& arena, int32_t slot, std::span<const Tensor* const> inputs) const {
  const Source& src = sources_[size_t(slot)];
  if (src.kind == Source::Input) return *inputs[size_t(src.index)];
  if (src.kind == Source::Constant) return constants_[size_t(src.index)];
  if (arena.holders[size_t(slot)].defined()) return arena.holders[size_t(slot)];
  const Step& step = steps_[size_t(src.index)];
  Tensor copy = detail::make_eager(step.out_dtype, *arena.shape[size_t(slot)]);
  std::memcpy(copy.raw_mutable_data(), arena.data[size_t(slot)],
              size_t(copy.num_elements()) * dtype_size(step.out_dtype));
  return copy;
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
      plan->release_arena(std::move(arena));
    }
  } release{this, arena};
  Arena& a = *arena;

  for (size_t s = 0; s < sources_.size(); ++s) {
    const Source& src = sources_[s];
    if (src.kind == Source::Input) {
      a.data[s] = inputs[size_t(src.index)]->raw_data();
      a.shape[s] = &inputs[size_t(src.index)]->shape();
    } else if (src.kind == Source::Constant) {
      const Tensor& c = constants_[size_t(src.index)];
      a.data[s] = c.raw_data();
      a.shape[s] = &c.shape();
    }
  }

  constexpr size_t kMaxInline = 8;
  ops::KernelInput kin_inline[kMaxInline];
  std::vector<ops::KernelInput> kin_heap;
  for (const Step& step : steps_) {
    size_t n = step.inputs.size();
    switch (step.kind) {
      case graph::NodeKind::Op: {
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
          // Unknown dims: run the op's shape rule on the actual shapes.
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
        size_t bytes = size_t(out_shape->num_elements()) * dtype_size(step.out_dtype);
        void* out;
        if (step.buffer >= 0) {
          out = a.reserve(step.buffer, bytes);
        } else {
          Tensor fresh = detail::make_eager(step.out_dtype, *out_shape);
          out = fresh.raw_mutable_data();
          a.holders[size_t(step.out_slot)] = std::move(fresh);
          out_shape = &a.holders[size_t(step.out_slot)].shape();
        }
        ops::RandomState rng;
        if (step.rng_counter) {
          rng.key = step.rng_key;
          rng.counter = step.rng_counter->fetch_add(uint64_t(out_shape->num_elements()));
        }
        ops::KernelContext kctx{step.op->name,  {kin, n},   out, out_shape,
                                step.out_dtype, step.attrs, &rng};
        step.op->kernel(kctx);
        a.data[size_t(step.out_slot)] = out;
        a.shape[size_t(step.out_slot)] = out_shape;
        break;
      }
      case graph::NodeKind::ReadVariable:
      case graph::NodeKind::AssignVariable:
      case graph::NodeKind::AssignAddVariable:
      case graph::NodeKind::AssignSubVariable: {
        Tensor value =
            step.kind == graph::NodeKind::ReadVariable
                ? step.variable->read()
                : step.variable->update(step.kind, materialize(a, step.inputs[0], inputs));
        a.data[size_t(step.out_slot)] = value.raw_data();
        a.holders[size_t(step.out_slot)] = std::move(value);
        a.shape[size_t(step.out_slot)] = &a.holders[size_t(step.out_slot)].shape();
        break;
      }
      case graph::NodeKind::Effect: {
        std::vector<Tensor> args;
        args.reserve(n);
        for (int32_t in : step.inputs) args.push_back(materialize(a, in, inputs));
        std::vector<Tensor> results = (*step.effect)(args);
        if (!results.empty()) {
          a.data[size_t(step.out_slot)] = results[0].raw_data();
          a.holders[size_t(step.out_slot)] = std::move(results[0]);
          a.shape[size_t(step.out_slot)] = &a.holders[size_t(step.out_slot)].shape();
        }
        break;
      }
      default:
        throw InternalError("unexpected node kind in a plan");
    }
  }

  outputs.clear();
  outputs.reserve(outputs_.size());
  for (int32_t slot : outputs_) outputs.push_back(materialize(a, slot, inputs));
}

}  // namespace ag::exec
