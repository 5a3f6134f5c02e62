// Running a compiled Plan (see plan.h; compiling it is plan_compile.cpp):
// the steps in order, each reading its inputs' slots and writing its outputs
// into the buffers the memory plan gave them. This is the executor's hot
// path (a loop iteration of scalar steps costs tens of nanoseconds): what can
// be decided once is decided while compiling, not per step here. An error of
// a step is rethrown with where the user's code defined its node.

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/plan_internal.h"

namespace ag::exec {

namespace {

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

void rethrow_defined_at(const Error& e, const graph::Node& node) {
  if (node.kind == graph::NodeKind::If || node.kind == graph::NodeKind::While ||
      node.kind == graph::NodeKind::Fused) {
    throw;
  }
  std::string where = "\n  in op " + node.op_name() + " (node '" + node.name + "') of function '" +
                      node.function_name() + "'";
  if (node.site.line() != 0)
    where += ", defined at " + std::string(node.site.file_name()) + ":" +
             std::to_string(node.site.line());
  detail::throw_error(e.kind(), e.message() + where);
}

std::unique_ptr<Plan::Arena> Plan::new_arena() const {
  auto arena = std::make_unique<Arena>();
  const size_t slots = size_t(arena_layout_.num_slots);
  arena->input_capacity.resize(num_inputs_);
  arena->data.resize(slots);
  arena->shape.resize(slots);
  arena->dynamic_shapes.resize(slots);
  arena->holders.resize(slots);
  arena->buffers.resize(total_buffers_);
  arena->children.resize(arena_layout_.num_children);
  arena->loop_iterations.resize(arena_layout_.num_loop_counters);
  arena->pinned.resize(pinned_size());
  size_t pinned_used = 0;
  init_arena(*arena, pinned_used);
  return arena;
}

namespace {

// Elements of Arena::pinned a value of `bytes` takes.
size_t pinned_elements(size_t bytes) {
  return std::max<size_t>(1, (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
}

}  // namespace

size_t Plan::pinned_size() const {
  size_t size = 0;
  for (const Step& step : steps_) {
    if (step.pinned_output()) size += pinned_elements(step.static_bytes);
    if (step.kind == graph::NodeKind::If || step.inline_loop) {
      for (const auto& branch : step.subplans) size += branch->pinned_size();
    }
  }
  return size;
}

void Plan::init_arena(Arena& arena, size_t& pinned_used) const {
  // A pinned output's slot points at its memory for the arena's life: its
  // step writes there without storing a pointer or a shape. Another scalar
  // or flat step's buffer gets room for its value now: it then writes to it
  // without a size check (a buffer never shrinks).
  for (const Step& step : steps_) {
    if (step.pinned_output()) {
      arena.data[size_t(step.out_slot)] = &arena.pinned[pinned_used];
      arena.shape[size_t(step.out_slot)] = &step.static_shape;
      pinned_used += pinned_elements(step.static_bytes);
    } else if (step.scalar_kernel && step.write_into_input < 0 && step.buffers[0] >= 0) {
      arena.reserve(step.buffers[0], step.static_bytes);
    }
  }
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].kind == Source::Constant) {
      const Tensor& c = constants_[size_t(sources_[s].index)];
      arena.data[s] = c.raw_data();
      arena.shape[s] = &c.shape();
    }
  }
  for (const Step& step : steps_) {
    if (step.kind == graph::NodeKind::If || step.inline_loop) {
      for (const auto& branch : step.subplans) branch->init_arena(arena, pinned_used);
      continue;
    }
    for (size_t k = 0; k < step.subplans.size(); ++k) {
      arena.children[step.first_child + k] = step.subplans[k]->new_arena();
    }
  }
}

std::unique_ptr<Plan::Arena> Plan::acquire_arena() const {
  if (Arena* cached = cached_arena_.exchange(nullptr, std::memory_order_acquire)) {
    return std::unique_ptr<Arena>(cached);
  }
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
  Arena* empty = nullptr;
  if (cached_arena_.compare_exchange_strong(empty, arena.get(), std::memory_order_release,
                                            std::memory_order_relaxed)) {
    arena.release();  // the slot owns it now
    return;
  }
  std::lock_guard lock(pool_mu_);
  pool_.push_back(std::move(arena));
}

Tensor Plan::materialize(Arena& a, int32_t slot) const {
  const Source& src = sources_[size_t(slot)];
  // (A branch's inputs are its own: the arena's top-level inputs are not.)
  if (src.kind == Source::Input && top_level_) return *a.top_inputs[size_t(src.index)];
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

void* Plan::fresh_output(Arena& a, const Step& step) const {
  Tensor fresh = detail::make_eager(step.out_dtypes[0], step.static_shape);
  void* out = fresh.impl()->storage->data;  // not shared: no copy on write to check
  a.holders[size_t(step.out_slot)] = std::move(fresh);
  return out;
}

size_t Plan::donated_capacity(const Arena& a, int32_t input) const {
  return donated_bytes_.empty() ? a.input_capacity[size_t(input)] : donated_bytes_[size_t(input)];
}

void Plan::run_op(Arena& a, const Step& step) const {
  if (step.static_copy && run_static_copy(a, step)) return;
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
  if (step.strided_run > 0) {
    for (size_t i = 0; i < std::min(n, kMaxScalarInputs); ++i) {
      if (step.input_strides[i] == 0) continue;
      kin[i].run = step.strided_run;
      kin[i].stride = step.input_strides[i];
    }
  }
  const Shape* out_shape = &step.static_shape;
  if (step.runs_shape_rule) {
    // Unknown dims: run the op's shape rule on the actual shapes and values,
    // with its inputs in inline arrays (no allocation per step; only the n
    // entries used are constructed). It throws eager mode's error for
    // inputs the op does not accept.
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
    Shape inferred = step.op->infer(ictx).shape;
    if (!step.shape_is_static) {
      a.dynamic_shapes[size_t(step.out_slot)] = std::move(inferred);
      out_shape = &a.dynamic_shapes[size_t(step.out_slot)];
    } else if (inferred != step.static_shape) {
      throw InternalError(std::string(step.op->name) + ": traced with output shape " +
                          step.static_shape.to_list_string() + ", but its inputs give " +
                          inferred.to_list_string());
    }
  }
  if (step.shape_only) {
    // A value without elements: never null, which shape rules would read as
    // "unknown while tracing".
    static const unsigned char kNoElements = 0;
    a.data[size_t(step.out_slot)] = &kNoElements;
    a.shape[size_t(step.out_slot)] = out_shape;
    return;
  }
  DType dtype = step.out_dtypes[0];
  size_t bytes =
      step.shape_is_static ? step.static_bytes : concrete_bytes(*out_shape, dtype_size(dtype));
  void* out;
  if (step.row_output) {
    out = array_row(a, step, kin);
  } else if (step.write_into_input >= 0 && bytes <= donated_capacity(a, step.write_into_input)) {
    out = const_cast<void*>(kin[step.in_place_operand].data);
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
  if (step.row_output) kctx.out_stride = step.row_output->stride;
  kctx.prepared = step.prepared.get();
  step.op->kernel(kctx);
  a.data[size_t(step.out_slot)] = out;
  a.shape[size_t(step.out_slot)] = out_shape;
  if (step.row_output) a.data[size_t(step.row_output->variable)] = out;  // the variable moves there
}

void* Plan::array_row(const Arena& a, const Step& step, const ops::KernelInput* kin) const {
  const Step::RowOutput& r = *step.row_output;
  const void* at = a.data[size_t(r.index)];
  const int64_t i = slot_dtypes_[size_t(r.index)] == DType::int32
                        ? *static_cast<const int32_t*>(at)
                        : *static_cast<const int64_t*>(at);
  // Out of range, the result goes over the variable (of the row's layout),
  // and the array's write that follows fails with its own error.
  if (i < 0 || i >= r.size) return const_cast<void*>(kin[r.operand].data);
  return static_cast<char*>(const_cast<void*>(a.data[size_t(r.array)])) + i * r.row_bytes;
}

void Plan::enter_loop(Arena& a, const Step& step) const {
  for (size_t k = 0; k < step.buffers.size(); ++k) {
    const int32_t slot = step.out_slot + int32_t(k);
    if (step.keeps_in_row(k)) continue;  // below, once its array has its memory
    if (step.initial_value_dead[k]) {    // overwritten whole before it is read
      if (step.buffers[k] >= 0) {
        a.data[size_t(slot)] = a.reserve(step.buffers[k], step.var_static_bytes[k]);
        a.shape[size_t(slot)] = step.var_static_shapes[k];
      } else {  // a top-level output: its fresh tensor
        a.holders[size_t(slot)] =
            detail::make_eager(step.out_dtypes[k], *step.var_static_shapes[k]);
        a.data[size_t(slot)] = a.holders[size_t(slot)].raw_data();
        a.shape[size_t(slot)] = &a.holders[size_t(slot)].shape();
      }
      continue;
    }
    const int32_t in = step.inputs[k];
    if (const size_t bytes = step.var_static_bytes[k]; bytes > 0 && step.buffers[k] >= 0) {
      // Its usual case, inline: the initial value into the variable's buffer.
      void* var = a.reserve(step.buffers[k], bytes);
      copy_value(var, a.data[size_t(in)], bytes);
      a.data[size_t(slot)] = var;
      a.shape[size_t(slot)] = step.var_static_shapes[k];
      continue;
    }
    store(a, slot, step.buffers[k], {a.data[size_t(in)], a.shape[size_t(in)]}, /*grow=*/false,
          step.var_static_shapes[k]);
  }
  for (const Step::VariableInRow& v : step.variables_in_rows) {
    // In row 0 of its array (whose other rows the loop writes first).
    const int32_t slot = step.out_slot + v.variable;
    char* row = static_cast<char*>(const_cast<void*>(a.data[size_t(step.out_slot + v.array)]));
    const char* initial = static_cast<const char*>(a.data[size_t(step.inputs[size_t(v.variable)])]);
    for (int64_t o = 0; o < v.outer; ++o)
      std::memcpy(row + size_t(o) * v.stride_bytes, initial + size_t(o) * v.run_bytes, v.run_bytes);
    a.data[size_t(slot)] = row;
    a.shape[size_t(slot)] = step.var_static_shapes[size_t(v.variable)];
  }
  for (const Step::LoopCopy& copy : step.loop_copies) {
    if (copy.scratch >= 0) a.reserve(copy.scratch, copy.bytes);
  }
  if (step.loop_counter >= 0) a.loop_iterations[size_t(step.loop_counter)] = 0;
}

void Plan::update_loop_variables(Arena& a, const Step& step) const {
  // Values that may be another variable's are read before any changes.
  for (const Step::LoopCopy& copy : step.loop_copies) {
    if (copy.scratch >= 0)
      copy_value(a.buffers[size_t(copy.scratch)].data, a.data[size_t(copy.from)], copy.bytes);
  }
  for (const Step::LoopCopy& copy : step.loop_copies) {
    const void* from =
        copy.scratch >= 0 ? a.buffers[size_t(copy.scratch)].data : a.data[size_t(copy.from)];
    void* var = const_cast<void*>(a.data[size_t(copy.var)]);
    if (from != var) copy_value(var, from, copy.bytes);
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
    if (step.initial_value_dead[k]) {  // overwritten whole before it is read
      int32_t slot = step.out_slot + int32_t(k);
      a.data[size_t(slot)] = a.reserve(step.buffers[k], step.var_static_bytes[k]);
      a.shape[size_t(slot)] = step.var_static_shapes[k];
      bind_var(k);
      continue;
    }
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
  // The loop variables' new values. A static variable keeps the buffer it
  // got above (its size never changes), which the condition and body are
  // bound to: a new value is copied into it and nothing is rebound.
  auto update_var = [&](size_t k, const View& v) {
    int32_t slot = step.out_slot + int32_t(k);
    // Unchanged (passed through, or written in place at the same size).
    if (v.data == a.data[size_t(slot)] &&
        (v.shape == a.shape[size_t(slot)] || step.var_static_shapes[k])) {
      return;
    }
    if (size_t bytes = step.var_static_bytes[k]) {
      copy_value(const_cast<void*>(a.data[size_t(slot)]), v.data, bytes);
      return;
    }
    store(a, slot, step.buffers[k], v, /*grow=*/true, step.var_static_shapes[k]);
    bind_var(k);
  };
  // A body output may be another loop variable's current value (x, y = y,
  // x); which outputs can be is known from the body's plan. Then all new
  // values are read (such ones held aside in the While's scratch buffers)
  // before any variable is updated.
  const bool hold_aside = body.any_output_may_alias_input_;
  std::vector<View>& updates = a.updates;
  updates.resize(num_vars);
  // The arrays the loop reads, held in locals: its copies through void*
  // would make the compiler reload them from their vectors. (An arena's
  // slot arrays never move while it runs.)
  const void* const* const body_data = body_arena.data.data();
  const void* const* const vars = a.data.data() + step.out_slot;
  const int32_t* const body_outputs = body.outputs_.data();
  const size_t* const var_static_bytes = step.var_static_bytes.data();
  for (int64_t iteration = 0;; ++iteration) {
    cond.run_steps(cond_arena);
    if (!*static_cast<const bool*>(cond_arena.data[size_t(cond.outputs_[0])])) break;
    if (step.maximum_iterations >= 0 && iteration >= step.maximum_iterations) break;
    body.run_steps(body_arena);
    if (!hold_aside) {
      for (size_t k = 0; k < num_vars; ++k) {
        const size_t out = size_t(body_outputs[k]);
        if (const size_t bytes = var_static_bytes[k]) {  // update_var's usual case, inline
          void* var = const_cast<void*>(vars[k]);
          if (body_data[out] != var) copy_value(var, body_data[out], bytes);
          continue;
        }
        update_var(k, {body_data[out], body_arena.shape[out]});
      }
      continue;
    }
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
    for (size_t k = 0; k < num_vars; ++k) update_var(k, updates[k]);
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

namespace {

// A Reduce instruction: its one-element output set to the reduction's initial
// value, then the input's elements folded into it in memory order.
inline void reduce_in_order(const Plan::Instr& i, const void* input, void* out) {
  copy_value(out, i.step->reduce_init.data(), i.bytes);  // one element, of the input's type
  const char* x = static_cast<const char*>(input);
  const void* in[kMaxScalarInputs] = {out, x, x};
  for (int32_t e = 0; e < i.step->flat_elements; ++e, x += i.bytes) {
    in[1] = x;
    i.kernel(in, out);
  }
}

// The end of a loop body: each loop variable takes its next value, in place.
inline void copy_loop_variables(const Plan::Step& step, const void** data) {
  for (const Plan::Step::LoopCopy& copy : step.loop_copies) {
    const void* from = data[size_t(copy.from)];
    void* var = const_cast<void*>(data[size_t(copy.var)]);
    if (from != var) copy_value(var, from, copy.bytes);
  }
}

}  // namespace

// A step with no instruction of its own: an op through its kernel context, a
// while loop, a fused group or a host step.
void Plan::run_general_step(Arena& a, const Step& step) const {
  switch (step.kind) {
    case graph::NodeKind::Op:
      if (step.row_view) {
        run_row_view(a, step);
      } else {
        run_op(a, step);
      }
      return;
    case graph::NodeKind::While:
      run_while(a, step);
      return;
    case graph::NodeKind::Fused:
      run_fused(a, step);
      return;
    default:
      run_host_step(a, step);
  }
}

void Plan::run_steps(Arena& a) const {
  const Instr* const begin = program_.data();
  const Instr* pc = begin;
  // The arena's arrays, held in locals: the compiler would reload them from
  // their vectors after every kernel call. (They never move while it runs.)
  const void** const data = a.data.data();
  const Shape** const shape = a.shape.data();
  Arena::Buffer* const buffers = a.buffers.data();
  // A scalar, flat or reduction step's output memory: its pinned memory or
  // its buffer (both given room for its value when the arena was made: see
  // init_arena), a loop variable it overwrites, or a fresh tensor (a
  // top-level output).
  auto output_of = [&](const Instr& i) -> void* {
    if (i.buffer == Instr::kPinnedOutput) return const_cast<void*>(data[size_t(i.out)]);
    if (i.buffer >= 0) return buffers[size_t(i.buffer)].data;
    if (i.buffer != Instr::kFreshOutput) return const_cast<void*>(data[size_t(i.in_place_slot())]);
    return fresh_output(a, *i.step);
  };
  // The instruction's result is `out`, of its static shape.
  auto set_output = [&](void* out) {
    data[size_t(pc->out)] = out;
    shape[size_t(pc->out)] = pc->shape;
  };
  // Threaded dispatch: each instruction ends in its own indirect jump to
  // the next one's code (GCC's and Clang's labels as values), which the
  // branch predictor learns per instruction, where one switch's shared jump
  // mispredicts as the program alternates between instruction kinds.
  static const void* const kCode[] = {
      &&do_Scalar1,         &&do_Scalar2,        &&do_Scalar3,  &&do_Scalar2Test,
      &&do_Scalar2Constant, &&do_ScalarToBuffer, &&do_Flat,     &&do_Reduce,
      &&do_General,         &&do_Branch,         &&do_Jump,     &&do_Move,
      &&do_LoopEnter,       &&do_LoopTest,       &&do_LoopBack, &&do_End};
  static_assert(std::size(kCode) == size_t(Instr::Code::End) + 1, "one label per Instr::Code");
#define AG_NEXT goto* kCode[size_t(pc->code)]
  try {
    AG_NEXT;
  // Most steps of a loop body: no context, no dispatch; only the
  // op's own inputs are loaded, and the output is where its slot
  // points already (pinned).
  do_Scalar1: {
    const void* const in[] = {data[size_t(pc->in[0])]};  // (no padding to fill)
    pc->kernel(in, const_cast<void*>(data[size_t(pc->out)]));
    ++pc;
    AG_NEXT;
  }
  do_Scalar2:
    pc->binary_kernel(data[size_t(pc->in[0])], data[size_t(pc->in[1])],
                      const_cast<void*>(data[size_t(pc->out)]));
    ++pc;
    AG_NEXT;
  do_Scalar2Constant:
    pc->binary_kernel(data[size_t(pc->in[0])], pc->constant,
                      const_cast<void*>(data[size_t(pc->out)]));
    ++pc;
    AG_NEXT;
  do_Scalar2Test: {
    void* out = const_cast<void*>(data[size_t(pc->out)]);
    pc->binary_kernel(data[size_t(pc->in[0])], data[size_t(pc->in[1])], out);
    pc = *static_cast<const bool*>(out) ? pc + 2 : begin + pc->target;
    AG_NEXT;
  }
  do_Scalar3: {
    const void* in[kMaxScalarInputs] = {data[size_t(pc->in[0])], data[size_t(pc->in[1])],
                                        data[size_t(pc->in[2])]};
    pc->kernel(in, const_cast<void*>(data[size_t(pc->out)]));
    ++pc;
    AG_NEXT;
  }
  do_ScalarToBuffer: {
    const void* in[kMaxScalarInputs];
    for (size_t i = 0; i < kMaxScalarInputs; ++i) in[i] = data[size_t(pc->in[i])];
    void* out = output_of(*pc);
    pc->kernel(in, out);
    set_output(out);
    ++pc;
    AG_NEXT;
  }
  do_Flat: {
    const void* in[kMaxScalarInputs];
    for (size_t i = 0; i < kMaxScalarInputs; ++i) in[i] = data[size_t(pc->in[i])];
    void* out = output_of(*pc);
    const Step& step = *pc->step;
    pc->flat_kernel(in, step.flat_strides.data(), step.flat_elements, out);
    set_output(out);
    ++pc;
    AG_NEXT;
  }
  do_Reduce: {
    void* out = output_of(*pc);
    reduce_in_order(*pc, data[size_t(pc->in[0])], out);
    set_output(out);
    ++pc;
    AG_NEXT;
  }
  do_Branch:
    pc = *static_cast<const bool*>(data[size_t(pc->in[0])]) ? pc + 1 : begin + pc->target;
    AG_NEXT;
  do_Jump:
    pc = begin + pc->target;
    AG_NEXT;
  do_LoopEnter:
    pc->plan->enter_loop(a, *pc->step);
    if (pc->step->interchanged) {  // the whole loop at once, then past it
      pc->plan->run_interchanged(a, *pc->step);
      pc = begin + pc->target;
      AG_NEXT;
    }
    for (const Step::SlotInVariable& s : pc->step->slots_in_variables) {
      data[size_t(s.slot)] = data[size_t(s.var)];
      shape[size_t(s.slot)] = shape[size_t(s.var)];
    }
    ++pc;
    AG_NEXT;
  do_LoopTest: {
    bool more = *static_cast<const bool*>(data[size_t(pc->in[0])]);
    if (more && pc->buffer >= 0)  // a maximum_iterations; buffer: the counter
      more = a.loop_iterations[size_t(pc->buffer)]++ < pc->step->maximum_iterations;
    pc = more ? pc + 1 : begin + pc->target;
    AG_NEXT;
  }
  do_LoopBack: {
    const Step& step = *pc->step;
    if (step.loop_holds_aside) {
      pc->plan->update_loop_variables(a, step);
    } else {  // its usual case
      copy_loop_variables(step, data);
    }
    pc = begin + pc->target;
    AG_NEXT;
  }
  do_End:
    return;
  do_Move:
    // An If's output is not copied: it is the value its branch left.
    data[size_t(pc->out)] = data[size_t(pc->in[0])];
    shape[size_t(pc->out)] = shape[size_t(pc->in[0])];
    ++pc;
    AG_NEXT;
  do_General:
    pc->plan->run_general_step(a, *pc->step);
    ++pc;
    AG_NEXT;
  } catch (const Error& e) {
    rethrow_defined_at(e, *pc->step->node);
  }
#undef AG_NEXT
}

void Plan::run_host_step(Arena& a, const Step& step) const {
  switch (step.kind) {
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
    const detail::TensorImpl* impl = inputs[k]->impl().get();
    // (raw_data() throws the error for an undefined or symbolic input.)
    a.data[slot] = impl && !impl->trace ? impl->storage->data : inputs[k]->raw_data();
    a.shape[slot] = &impl->shape;
  }
  run_steps(a);
  outputs.clear();
  outputs.reserve(outputs_.size());
  for (int32_t slot : outputs_) outputs.push_back(materialize(a, slot));
}

}  // namespace ag::exec
