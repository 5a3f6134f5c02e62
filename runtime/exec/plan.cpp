#include "exec/plan.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "core/tensor_impl.h"
#include "graph/variable_state.h"
#include "ops/random.h"

namespace ag::exec {

constexpr size_t kMaxScalarInputs = 3;  // where(c, x, y)

struct Plan::Step {
  graph::NodeKind kind = graph::NodeKind::Op;
  const ops::OpDef* op = nullptr;
  const ops::Attrs* attrs = nullptr;
  std::vector<int32_t> inputs;  // slots
  int32_t out_slot = -1;        // first output slot; outputs are consecutive
  std::vector<DType> out_dtypes;
  Shape static_shape;  // Op steps: the output shape when fully known
  bool shape_is_static = false;
  size_t static_bytes = 0;  // the output's size when shape_is_static
  // Scalar steps (an elementwise op on static rank-0 values, written into a
  // buffer): the op's scalar kernel, called without a KernelContext, and its
  // input slots, padded with the first so that all are always read.
  ops::ScalarKernelFn scalar_kernel = nullptr;
  std::array<int32_t, kMaxScalarInputs> scalar_inputs{};
  // An in-place op whose input 0 is a loop variable this plan may overwrite
  // (a TensorArray write in a loop body): the number of that input, whose
  // memory the op writes into when its capacity allows; -1 otherwise.
  int32_t write_into_input = -1;
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
  // While: the first of one scratch buffer per loop variable, for values held
  // aside while the variables are updated (x, y = y, x).
  int32_t first_scratch = -1;
  int64_t maximum_iterations = -1;
  // While: per loop variable, its shape when static (it then never changes,
  // and stores skip copying it), or null.
  std::vector<const Shape*> var_static_shapes;
};

// Per-call state: where each slot's value is now, the reusable buffers and
// the arenas of nested plans.
struct Plan::Arena {
  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
  };
  std::span<const Tensor* const> top_inputs;  // top-level run only
  std::vector<size_t> input_capacity;         // per input: View::capacity
  std::vector<const void*> data;              // per slot
  std::vector<const Shape*> shape;            // per slot
  std::vector<Shape> dynamic_shapes;          // per slot, shapes known only at run time
  std::vector<Tensor> holders;                // per slot, values held as tensors
  std::vector<Buffer> buffers;
  std::vector<std::unique_ptr<Arena>> children;
  std::vector<View> updates;  // scratch for a While's new loop variables

  ~Arena() {
    for (Buffer& b : buffers) std::free(b.data);
  }
  // The buffer's memory, enlarged to `bytes` if needed (the old contents are
  // not kept). Never null, even for 0 bytes: shape rules read a null value
  // as "unknown while tracing", and an empty tensor is a known value. With
  // `grow`, an enlarged buffer gets half again as much room as it had, so a
  // value growing by a row per loop iteration is reallocated O(log n) times.
  void* reserve(int32_t buffer, size_t bytes, bool grow = false) {
    Buffer& b = buffers[size_t(buffer)];
    if (b.capacity < bytes || b.data == nullptr) {
      size_t wanted = grow ? std::max(bytes, b.capacity + b.capacity / 2) : bytes;
      size_t rounded = (wanted + detail::kAlignment - 1) / detail::kAlignment * detail::kAlignment;
      if (rounded == 0) rounded = detail::kAlignment;
      std::free(b.data);
      b.data = nullptr;
      b.capacity = 0;
      b.data = std::aligned_alloc(detail::kAlignment, rounded);
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

// byte_size for a concrete shape, inline: the executor's hot path.
inline size_t concrete_bytes(const Shape& shape, size_t element_size) {
  size_t n = element_size;
  for (int64_t d : shape) n *= size_t(d);
  return n;
}

// Copies a value; scalars (the usual loop counters and flags) without a
// call into the C library.
inline void copy_value(void* out, const void* in, size_t bytes) {
  switch (bytes) {
    case 1:
      std::memcpy(out, in, 1);
      break;
    case 4:
      std::memcpy(out, in, 4);
      break;
    case 8:
      std::memcpy(out, in, 8);
      break;
    default:
      std::memmove(out, in, bytes);
  }
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
  std::vector<bool> slot_is_scalar(size_t(num_slots), false);  // static rank 0
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    for (size_t k = 0; k < body.nodes[i].outputs.size(); ++k) {
      slot_dtypes_[size_t(first_slot[i]) + k] = body.nodes[i].outputs[k].dtype;
      slot_is_scalar[size_t(first_slot[i]) + k] = body.nodes[i].outputs[k].shape.rank() == 0;
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
      if (step.shape_is_static)
        step.static_bytes = byte_size(step.static_shape, step.out_dtypes[0]);
    }
    step.variable = n.variable;
    step.effect = n.effect;
    if (step.op && (step.op->flags & ops::kStateful)) {
      step.rng_key = ops::eager_random_state(n.attrs.seed).key;
      step.rng_counter = std::make_unique<std::atomic<uint64_t>>(0);
    }
    if (n.kind == graph::NodeKind::If || n.kind == graph::NodeKind::While) {
      // A While owns its loop variables (its output buffers), so its body
      // may overwrite them: they are the body's first inputs.
      for (size_t k = 0; k < n.subgraphs.size(); ++k) {
        bool loop_body = n.kind == graph::NodeKind::While && k == 1;
        step.subplans.push_back(
            std::make_unique<Plan>(n.subgraphs[k], false, loop_body ? n.outputs.size() : 0));
      }
      step.first_child = num_children_;
      num_children_ += step.subplans.size();
      if (!n.attrs.ints.empty()) step.maximum_iterations = n.attrs.ints[0];
      if (n.kind == graph::NodeKind::While) {
        for (const ops::ValueType& t : n.outputs) {
          step.var_static_shapes.push_back(t.shape.is_fully_defined() ? &t.shape : nullptr);
        }
      }
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      sources_[size_t(first_slot[i]) + k] = {Source::Step, int32_t(steps_.size())};
    }
    steps_.push_back(std::move(step));
  }
  for (graph::ValueRef v : body.outputs) outputs_.push_back(slot_of(v));
  input_slots_.assign(num_inputs_, -1);
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].kind == Source::Input) input_slots_[size_t(sources_[s].index)] = int32_t(s);
  }

  // Memory plan. Values computed into buffers: op results that are not
  // top-level outputs, and every While result. A buffer is free again
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
  // An If's outputs are not copied: each is the value its branch left, in
  // the branch's arena or, when the branch passes an input through, the
  // parent's value itself. So the If's inputs stay alive as long as its
  // outputs (in reverse order, so that chains of Ifs extend transitively).
  for (size_t s = steps_.size(); s-- > 0;) {
    const Step& step = steps_[s];
    if (step.kind != graph::NodeKind::If) continue;
    int32_t outputs_end = -1;
    for (size_t k = 0; k < step.buffers.size(); ++k) {
      outputs_end = std::max(outputs_end, last_use[size_t(step.out_slot) + k]);
    }
    for (size_t i = 1; i < step.inputs.size(); ++i) {
      int32_t& end = last_use[size_t(step.inputs[i])];
      end = std::max(end, outputs_end);
    }
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
      if (src.kind == Source::Input && size_t(src.index) < donated_inputs &&
          last_use[size_t(in0)] == int32_t(s)) {
        step.write_into_input = src.index;
      }
    }
    bool buffered = step.kind == graph::NodeKind::Op || step.kind == graph::NodeKind::While;
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
  for (Step& step : steps_) {
    if (step.kind != graph::NodeKind::While) continue;
    step.first_scratch = int32_t(num_buffers_ + num_scratch_);
    num_scratch_ += step.buffers.size();
  }
  // Outputs whose memory may be an input's other than the same-numbered one
  // (a While body's loop variables trading values): an input passed to
  // another output, an If's output (branches pass inputs through), an op
  // that wrote into an input.
  output_may_alias_input_.assign(outputs_.size(), 0);
  for (size_t k = 0; k < outputs_.size(); ++k) {
    const Source& src = sources_[size_t(outputs_[k])];
    if (src.kind == Source::Input) {
      output_may_alias_input_[k] = size_t(src.index) != k;
    } else if (src.kind == Source::Step) {
      const Step& step = steps_[size_t(src.index)];
      output_may_alias_input_[k] =
          step.kind == graph::NodeKind::If ||
          (step.write_into_input >= 0 && size_t(step.write_into_input) != k);
    }
  }
  // Scalar steps: loop counters, flags and conditions are mostly rank-0
  // values, and for those the generic step costs more than the arithmetic.
  for (Step& step : steps_) {
    if (step.kind != graph::NodeKind::Op || !(step.op->flags & ops::kElementwise) ||
        (step.op->flags & ops::kStateful) || !step.shape_is_static ||
        step.static_shape.rank() != 0 || step.buffers[0] < 0 || step.write_into_input >= 0) {
      continue;
    }
    bool all_scalar = step.inputs.size() <= kMaxScalarInputs;
    for (int32_t in : step.inputs) all_scalar = all_scalar && slot_is_scalar[size_t(in)];
    if (!all_scalar) continue;
    step.scalar_kernel =
        ops::scalar_kernel(step.op->id, slot_dtypes_[size_t(step.inputs[0])], step.out_dtypes[0]);
    for (size_t i = 0; i < kMaxScalarInputs; ++i) {
      step.scalar_inputs[i] = step.inputs[i < step.inputs.size() ? i : 0];
    }
  }
  num_donated_ = donated_inputs;
}

Plan::~Plan() = default;
size_t Plan::num_steps() const {
  return steps_.size();
}
size_t Plan::num_scalar_steps() const {
  return size_t(std::count_if(steps_.begin(), steps_.end(),
                              [](const Step& s) { return s.scalar_kernel != nullptr; }));
}

std::unique_ptr<Plan::Arena> Plan::new_arena() const {
  auto arena = std::make_unique<Arena>();
  arena->input_capacity.resize(num_inputs_);
  arena->data.resize(sources_.size());
  arena->shape.resize(sources_.size());
  arena->dynamic_shapes.resize(sources_.size());
  arena->holders.resize(sources_.size());
  arena->buffers.resize(num_buffers_ + num_scratch_);
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

void Plan::store(Arena& a, int32_t slot, int32_t buffer, View v, bool grow,
                 const Shape* static_shape) const {
  DType dtype = slot_dtypes_[size_t(slot)];
  if (static_shape) {
    a.shape[size_t(slot)] = static_shape;
  } else {
    a.dynamic_shapes[size_t(slot)] = *v.shape;
    a.shape[size_t(slot)] = &a.dynamic_shapes[size_t(slot)];
  }
  size_t bytes = concrete_bytes(*v.shape, dtype_size(dtype));
  if (buffer < 0) {
    Tensor fresh = detail::make_eager(dtype, *v.shape);
    std::memcpy(fresh.raw_mutable_data(), v.data, bytes);
    a.data[size_t(slot)] = fresh.raw_data();
    a.holders[size_t(slot)] = std::move(fresh);
    return;
  }
  // `v` never lies in this buffer when it must be enlarged: a loop body
  // writes into its loop variable only within the capacity it was given.
  void* out = a.reserve(buffer, bytes, grow);
  if (out != v.data) copy_value(out, v.data, bytes);
  a.data[size_t(slot)] = out;
}

void Plan::run_op(Arena& a, const Step& step) const {
  constexpr size_t kMaxInline = 8;
  size_t n = step.inputs.size();
  ops::KernelInput kin_inline[kMaxInline];
  std::unique_ptr<ops::KernelInput[]> kin_heap;  // ops with more inputs only
  ops::KernelInput* kin = kin_inline;
  if (n > kMaxInline) {
    kin_heap = std::make_unique<ops::KernelInput[]>(n);
    kin = kin_heap.get();
  }
  for (size_t i = 0; i < n; ++i) {
    int32_t in = step.inputs[i];
    kin[i] = {a.data[size_t(in)], a.shape[size_t(in)], slot_dtypes_[size_t(in)]};
  }
  const Shape* out_shape = &step.static_shape;
  if (!step.shape_is_static) {
    // Unknown dims: run the op's shape rule on the actual shapes and values,
    // with its inputs in inline arrays (no allocation per step; only the n
    // entries used are constructed).
    alignas(ops::ValueType) unsigned char types_inline[kMaxInline * sizeof(ops::ValueType)];
    const void* values_inline[kMaxInline];
    std::unique_ptr<ops::ValueType[]> types_heap;
    std::unique_ptr<const void*[]> values_heap;
    ops::ValueType* types = reinterpret_cast<ops::ValueType*>(types_inline);
    const void** values = values_inline;
    if (n > kMaxInline) {
      types_heap = std::make_unique<ops::ValueType[]>(n);
      values_heap = std::make_unique<const void*[]>(n);
      types = types_heap.get();
      values = values_heap.get();
    }
    static_assert(std::is_trivially_destructible_v<ops::ValueType>);
    for (size_t i = 0; i < n; ++i) {
      new (&types[i]) ops::ValueType{kin[i].dtype, *kin[i].shape};
      values[i] = kin[i].data;
    }
    ops::InferContext ictx{step.op->name, {types, n}, *step.attrs, {values, n}};
    a.dynamic_shapes[size_t(step.out_slot)] = step.op->infer(ictx).shape;
    out_shape = &a.dynamic_shapes[size_t(step.out_slot)];
  }
  DType dtype = step.out_dtypes[0];
  size_t bytes =
      step.shape_is_static ? step.static_bytes : concrete_bytes(*out_shape, dtype_size(dtype));
  void* out;
  if (step.write_into_input >= 0 && bytes <= a.input_capacity[size_t(step.write_into_input)]) {
    out = const_cast<void*>(kin[0].data);
  } else if (step.buffers[0] >= 0) {
    out = a.reserve(step.buffers[0], bytes);
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
  sub.execute_from(child, a, std::span<const int32_t>(step.inputs).subspan(1));
  // No copy: the outputs stay where the branch left them (see the memory
  // plan), until this step runs again.
  for (size_t k = 0; k < step.buffers.size(); ++k) {
    View v = sub.output_view(child, k);
    a.data[size_t(step.out_slot) + k] = v.data;
    a.shape[size_t(step.out_slot) + k] = v.shape;
  }
}

void Plan::run_while(Arena& a, const Step& step) const {
  const Plan& cond = *step.subplans[0];
  const Plan& body = *step.subplans[1];
  Arena& cond_arena = *a.children[step.first_child];
  Arena& body_arena = *a.children[step.first_child + 1];
  size_t num_vars = step.buffers.size();
  // Binds loop variable k, as it is now, as input k of the condition and the
  // body: each iteration rebinds only the variables that changed. The body
  // may write into a variable's buffer, up to its capacity.
  auto bind_var = [&](size_t k) {
    int32_t slot = step.out_slot + int32_t(k);
    View v{a.data[size_t(slot)], a.shape[size_t(slot)],
           a.buffers[size_t(step.buffers[k])].capacity};
    cond.bind(cond_arena, {&v, 1}, k);
    body.bind(body_arena, {&v, 1}, k);
  };
  // The loop variables live in the While's own output buffers.
  for (size_t k = 0; k < num_vars; ++k) {
    int32_t in = step.inputs[k];
    store(a, step.out_slot + int32_t(k), step.buffers[k], {a.data[size_t(in)], a.shape[size_t(in)]},
          /*grow=*/false, step.var_static_shapes[k]);
    bind_var(k);
  }
  // The captured values come after the loop variables and do not change.
  for (size_t i = num_vars; i < step.inputs.size(); ++i) {
    View v{a.data[size_t(step.inputs[i])], a.shape[size_t(step.inputs[i])]};
    cond.bind(cond_arena, {&v, 1}, i);
    body.bind(body_arena, {&v, 1}, i);
  }
  std::vector<View>& updates = a.updates;
  updates.resize(num_vars);
  for (int64_t iteration = 0;; ++iteration) {
    cond.run_steps(cond_arena);
    if (!*static_cast<const bool*>(cond.output_view(cond_arena, 0).data)) break;
    if (step.maximum_iterations >= 0 && iteration >= step.maximum_iterations) break;
    body.run_steps(body_arena);
    // A body output may be another loop variable's current value (x, y = y,
    // x): hold such values aside first (in the While's scratch buffers) so
    // no update reads an overwritten one.
    // Which outputs can be such a value is known from the body's plan.
    for (size_t k = 0; k < num_vars; ++k) {
      View v = body.output_view(body_arena, k);
      // (A variable's own buffer is never another's: the usual pass-through
      // needs no search.)
      bool search = body.output_may_alias_input_[k] && v.data != a.data[size_t(step.out_slot) + k];
      for (size_t j = 0; search && j < num_vars; ++j) {
        if (j != k && v.data == a.data[size_t(step.out_slot) + j]) {
          size_t bytes = byte_size(*v.shape, slot_dtypes_[size_t(step.out_slot) + k]);
          void* copy = a.reserve(step.first_scratch + int32_t(k), bytes, /*grow=*/true);
          std::memcpy(copy, v.data, bytes);
          v.data = copy;
          break;
        }
      }
      updates[k] = v;
    }
    for (size_t k = 0; k < num_vars; ++k) {
      int32_t slot = step.out_slot + int32_t(k);
      const View& v = updates[k];
      // Unchanged (passed through, or written in place at the same size).
      if (v.data == a.data[size_t(slot)] &&
          (v.shape == a.shape[size_t(slot)] || step.var_static_shapes[k])) {
        continue;
      }
      store(a, slot, step.buffers[k], v, /*grow=*/true, step.var_static_shapes[k]);
      bind_var(k);
    }
  }
}

void Plan::bind(Arena& a, std::span<const View> inputs, size_t first) const {
  for (size_t k = 0; k < inputs.size(); ++k) {
    size_t slot = size_t(input_slots_[first + k]);
    a.data[slot] = inputs[k].data;
    a.shape[slot] = inputs[k].shape;
    if (first + k < num_donated_) a.input_capacity[first + k] = inputs[k].capacity;
  }
}

void Plan::execute_from(Arena& a, const Arena& parent, std::span<const int32_t> slots) const {
  for (size_t k = 0; k < input_slots_.size(); ++k) {
    size_t slot = size_t(input_slots_[k]);
    a.data[slot] = parent.data[size_t(slots[k])];
    a.shape[slot] = parent.shape[size_t(slots[k])];
  }
  run_steps(a);
}

void Plan::run_steps(Arena& a) const {
  for (const Step& step : steps_) {
    if (step.scalar_kernel) {  // most steps of a loop body: no call, no context
      const void* in[kMaxScalarInputs];
      for (size_t i = 0; i < kMaxScalarInputs; ++i) in[i] = a.data[size_t(step.scalar_inputs[i])];
      void* out = a.reserve(step.buffers[0], step.static_bytes);
      step.scalar_kernel(in, out);
      a.data[size_t(step.out_slot)] = out;
      a.shape[size_t(step.out_slot)] = &step.static_shape;
      continue;
    }
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
  for (size_t k = 0; k < input_slots_.size(); ++k) {
    size_t slot = size_t(input_slots_[k]);
    a.data[slot] = inputs[k]->raw_data();
    a.shape[slot] = &inputs[k]->shape();
  }
  run_steps(a);
  outputs.clear();
  outputs.reserve(outputs_.size());
  for (int32_t slot : outputs_) outputs.push_back(materialize(a, slot));
}

}  // namespace ag::exec
