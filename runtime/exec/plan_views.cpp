// Copies a plan avoids (see plan.h), decided while compiling:
//  - Row views. x[i] (a gather of one leading index) of a value that no step
//    of the plan writes during its run (an input the plan may not overwrite,
//    or a constant) is a view of row i: the step sets its slot to the row's
//    address and copies nothing. Such a view is never an output of a nested
//    plan (whose parent might keep it past the run), so it lives only while
//    its source does. An index out of range runs gather's kernel, which
//    throws its usual error.
//  - Strided views. A gather of one index on a later axis of such a value
//    (x[:, i, :], which passes/transposed_gathers.cpp makes of dynamic_rnn's
//    rows of its transposed input), with static shapes, that no plan output
//    is and that only binary elementwise ops of its shape read (kernel
//    steps, not flat ones; one operand each), is a view starting at
//    x[0, i, 0]: those steps pass it to their kernel as a strided input
//    (ops::KernelInput::run, stride), which reads it in place.
//  - Loop variables overwritten whole. A While copies each loop variable's
//    initial value into the variable's own buffer before the first
//    iteration. A TensorArray of static size written at every index of a for
//    loop over its size (dynamic_rnn's `states`) and read nowhere in the
//    loop is overwritten entirely before anything reads it: its initial
//    value (zeros) is dead, and the While only reserves the buffer.
//  - Loop variables kept in an array's rows. In such a loop, when the
//    array's write stores the result of a binary elementwise op that is also
//    the next value of a variable read only by that op (dynamic_rnn's
//    state), the op writes straight into the array's row (strided, when the
//    rows lie along a later axis: passes/transposed_arrays.cpp) and the
//    variable moves there: no copy of the state into the array, none into
//    the variable (keep_rows_in_arrays).
//  - Static copies. A step that only moves bytes, at static shapes, copies
//    runs whose offsets are fixed when compiling instead of calling its
//    kernel, which would work them out per call: a transpose of at most
//    kMaxStaticCopyRuns runs (dynamic_rnn's input, when its slices are too
//    small for strided views), and a TensorArray write into its array in
//    place in an inline loop's body (the value's runs into row i).
// Needs: steps built (plan_compile.cpp, phase 2), before the memory plan;
// a While's nested plans compiled. Static copies: after the memory plan
// (phase 3, which decides the writes in place).
// Guarantees: the plan's results are those of the copying plan, bit for bit.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "exec/plan_internal.h"

namespace ag::exec {

using graph::count_reads;
using graph::is_placeholder;
using graph::producer;

// (plan_internal.h)
bool is_counter(const graph::Body& body, graph::ValueRef index, size_t j, int64_t size) {
  if (is_placeholder(body, index, j)) return true;
  const graph::Node& g = producer(body, index);
  if (g.is_op(ops::OpId::Cast) && is_placeholder(body, g.inputs[0], j))
    return g.outputs[0].dtype == DType::int64 ||
           (g.outputs[0].dtype == DType::int32 && size <= INT32_MAX);
  if (!g.is_op(ops::OpId::Gather) || g.attrs.axis != 0 || !is_placeholder(body, g.inputs[1], j))
    return false;
  const graph::Node& range = producer(body, g.inputs[0]);
  if (range.kind != graph::NodeKind::Const || !is_integer(range.value.dtype()) ||
      range.value.rank() != 1)
    return false;
  const std::vector<int64_t> values = range.value.to_vector<int64_t>();
  if (int64_t(values.size()) < size) return false;
  for (size_t q = 0; q < values.size(); ++q) {
    if (values[q] != int64_t(q)) return false;
  }
  return true;
}

// (plan_internal.h)
std::optional<RowsLoop> loop_writing_every_row(const graph::Body& parent, const graph::Node& w,
                                               size_t k) {
  const graph::Body& cond = *w.subgraphs[0];
  const graph::Body& body = *w.subgraphs[1];
  const Shape& shape = w.outputs[k].shape;
  if (!shape.is_fully_defined() || shape.rank() < 1) return std::nullopt;
  if (count_reads(body, body.placeholders[k]) != 1 || count_reads(cond, cond.placeholders[k]) != 0)
    return std::nullopt;
  const graph::ValueRef written = through_identity(body, body.outputs[k]);
  const graph::Node& write = body.nodes[size_t(written.node)];
  if (!write.is_op(ops::OpId::TensorArrayWrite) || write.attrs.keepdims ||
      !is_placeholder(body, write.inputs[0], k) || count_reads(body, written.node) != 1)
    return std::nullopt;
  // The rows lie along the write's axis (passes/transposed_arrays.cpp).
  const int64_t axis = write.attrs.axis < 0 ? write.attrs.axis + shape.rank() : write.attrs.axis;
  const int64_t size = shape[int(axis)];
  if (!w.attrs.ints.empty() && w.attrs.ints[0] < size) return std::nullopt;  // maximum_iterations
  for (size_t j = 0; j < w.outputs.size(); ++j) {
    if (j == k || !is_counter(body, write.inputs[1], j, size)) continue;
    const std::optional<graph::LoopCounter> counter = graph::loop_counter(parent, w, j);
    if (!counter || counter->start != 0 || counter->step != 1 || counter->bound < size)
      return std::nullopt;
    return RowsLoop{j, counter->bound, size};
  }
  return std::nullopt;
}

void Plan::mark_dead_initial_values() {
  for (Step& step : steps_) {
    if (step.kind != graph::NodeKind::While) continue;
    step.initial_value_dead.assign(step.buffers.size(), 0);
    for (size_t k = 0; k < step.buffers.size(); ++k)
      step.initial_value_dead[k] = loop_writing_every_row(*body_, *step.node, k).has_value();
  }
}

void Plan::mark_views() {
  const graph::Body& body = *body_;
  std::vector<bool> is_output(sources_.size(), false);
  for (int32_t o : outputs_) is_output[size_t(o)] = true;
  for (Step& step : steps_) {
    if (step.kind == graph::NodeKind::While) {
      if (step.inline_loop) {
        keep_rows_in_arrays(step);
        interchange_loop(step);
      }
      continue;
    }
    if (!step.node->is_op(ops::OpId::Gather) || (!top_level_ && is_output[size_t(step.out_slot)]))
      continue;
    const ops::ValueType& params = body.type_of(step.node->inputs[0]);
    const ops::ValueType& index = body.type_of(step.node->inputs[1]);
    const int rank = params.shape.rank();
    const Source& source = sources_[size_t(step.inputs[0])];
    const bool unchanging = source.kind == Source::Constant ||
                            (source.kind == Source::Input && !is_donated(source.index));
    step.row_view =
        unchanging && rank >= 1 && (step.attrs->axis == 0 || step.attrs->axis == -rank) &&
        index.shape.rank() == 0 && (index.dtype == DType::int32 || index.dtype == DType::int64);
    if (!step.row_view && unchanging && !is_output[size_t(step.out_slot)]) mark_strided_view(step);
  }
}

// A gather of one index on axis k > 0 of a static [outer, n, inner] value no
// step writes, read only by binary elementwise kernel steps (not flat ones)
// of its own shape as one operand: a view starting at x[0, i, 0], which those
// steps read in `outer` runs of `inner` elements, n * inner apart.
void Plan::mark_strided_view(Step& gather) {
  const graph::Body& body = *body_;
  const Shape& params = body.type_of(gather.node->inputs[0]).shape;
  const ops::ValueType& index = body.type_of(gather.node->inputs[1]);
  const int rank = params.rank();
  if (rank < 2 || !params.is_fully_defined() || !gather.shape_is_static ||
      index.shape.rank() != 0 || (index.dtype != DType::int32 && index.dtype != DType::int64))
    return;
  const int64_t axis = gather.attrs->axis < 0 ? gather.attrs->axis + rank : gather.attrs->axis;
  if (axis < 1 || axis >= rank) return;
  int64_t inner = 1;
  for (int d = int(axis) + 1; d < rank; ++d) inner *= params[d];
  if (inner < 1) return;
  std::vector<std::pair<Step*, int32_t>> readers;
  for (Step& step : steps_) {
    int32_t operand = -1;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      if (step.inputs[i] != gather.out_slot) continue;
      if (operand >= 0) return;  // read twice by one step
      operand = int32_t(i);
    }
    if (operand < 0) continue;
    if (!reads_strided(step) || step.static_shape != gather.static_shape ||
        (step.strided_run != 0 && step.strided_run != inner))
      return;
    readers.push_back({&step, operand});
  }
  if (readers.empty()) return;
  gather.row_view = true;
  gather.view_axis = int32_t(axis);
  gather.view_index_bytes = inner * int64_t(dtype_size(gather.out_dtypes[0]));
  for (auto [step, operand] : readers) {
    step->input_strides[size_t(operand)] = params[int(axis)] * inner;
    step->strided_run = inner;
  }
}

// Whether `step` is a binary elementwise kernel step (not a flat one), of a
// static shape, that can read its inputs strided and write its output so:
// binary_loop's strided branch reads both inputs at the output's shape, so
// neither may broadcast.
bool Plan::reads_strided(const Step& step) const {
  return step.kind == graph::NodeKind::Op && step.op->arity == 2 &&
         (step.op->flags & ops::kElementwise) &&
         ops::scalar_kernel(step.op->id, slot_dtypes_[size_t(step.inputs[0])],
                            step.out_dtypes[0]) != nullptr &&
         step.shape_is_static && step.static_shape.num_elements() > kMaxFlatElements &&
         std::all_of(step.node->inputs.begin(), step.node->inputs.end(), [&](graph::ValueRef in) {
           return body_->type_of(in).shape == step.static_shape;
         });
}

// An inline While `loop` whose TensorArray variable j is overwritten whole
// (initial_value_dead: written at the counter's index, from 0, by a write W
// in place) and whose W writes the result of a binary elementwise kernel
// step E that is also the next value of variable k, read in the body only
// by E (dynamic_rnn: state = x[:, i, :] + state; states.write(i, state)):
// E writes its result straight into row i of the array, as W would copy it
// there, and variable k moves to that row, where E reads it next, strided.
// Variable k starts in row 0, its initial value copied there on entry
// (E's first result, at index 0, goes over it in place); W finds its value
// in place and copies nothing. An index out of range: E writes over
// variable k (the same layout) and W fails with its own error. Needs: E's
// result read by nothing else (W and the variable k's output only), the
// index computed before E, the condition and the parent not reading
// variable k (the loop ends with it in a row of the array), E's strided
// inputs of the array's row length.
void Plan::keep_rows_in_arrays(Step& loop) {
  Plan& body = *loop.subplans[1];
  const graph::Body& cond = *loop.node->subgraphs[0];
  for (size_t j = 0; j < loop.buffers.size(); ++j) {
    if (!loop.initial_value_dead[j]) continue;
    const Source& written = body.sources_[size_t(body.outputs_[j])];
    if (written.kind != Source::Step) continue;
    Step& write = body.steps_[size_t(written.index)];
    if (!write.op || write.op->id != ops::OpId::TensorArrayWrite ||
        write.write_into_input != int32_t(j))
      continue;
    const Source& computed = body.sources_[size_t(write.inputs[2])];
    if (computed.kind != Source::Step) continue;
    Step& op = body.steps_[size_t(computed.index)];
    if (!body.reads_strided(op) || op.row_output || op.out_dtypes[0] != write.out_dtypes[0])
      continue;
    // k: the variable whose next value op's result is, the only output it is.
    int32_t k = -1;
    for (size_t o = 0; o < body.outputs_.size(); ++o) {
      if (body.outputs_[o] != op.out_slot) continue;
      k = k < 0 && o != j ? int32_t(o) : -2;
    }
    if (k < 0 || !loop.var_static_shapes[size_t(k)] ||
        *loop.var_static_shapes[size_t(k)] != op.static_shape ||
        count_reads(cond, cond.placeholders[size_t(k)]) != 0)
      continue;
    const int32_t variable = body.input_slots_[size_t(k)];
    int32_t operand = -1;
    bool only_readers = true;
    for (const Step& s : body.steps_) {
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        if (s.inputs[i] == op.out_slot) only_readers = only_readers && &s == &write && i == 2;
        if (s.inputs[i] != variable) continue;
        only_readers = only_readers && &s == &op && operand < 0;
        operand = int32_t(i);
      }
    }
    const Source& index = body.sources_[size_t(write.inputs[1])];
    const bool index_before = index.kind != Source::Step || index.index < computed.index;
    if (!only_readers || operand < 0 || !index_before || op.input_strides[size_t(operand)] != 0)
      continue;
    const int32_t result = loop.out_slot + k;
    bool read_after = false;
    for (const Step& s : steps_) {
      for (int32_t in : s.inputs) read_after = read_after || in == result;
    }
    for (int32_t o : outputs_) read_after = read_after || o == result;
    if (read_after) continue;
    // The array's rows along the write's axis: [outer, size, inner].
    const Shape& shape = *loop.var_static_shapes[j];
    const int64_t axis =
        write.attrs->axis < 0 ? write.attrs->axis + shape.rank() : write.attrs->axis;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < shape.rank(); ++d) {
      if (d < axis) outer *= shape[d];
      if (d > axis) inner *= shape[d];
    }
    const int64_t size = shape[int(axis)];
    if (size < 1 || (op.strided_run != 0 && op.strided_run != inner)) continue;
    const size_t element = dtype_size(op.out_dtypes[0]);
    op.row_output = std::make_unique<Step::RowOutput>(
        Step::RowOutput{write.inputs[0], write.inputs[1], size, inner * int64_t(element),
                        size * inner, variable, operand});
    op.write_into_input = -1;
    op.strided_run = inner;
    op.input_strides[size_t(operand)] = size * inner;
    write.strided_run = inner;
    write.input_strides[2] = size * inner;
    loop.variables_in_rows.push_back(
        {int32_t(k), int32_t(j), outer, size_t(inner) * element, size_t(size * inner) * element});
  }
}

namespace {

// A transpose copies this many runs at most as a static copy (its offsets
// are a table in the step).
constexpr int64_t kMaxStaticCopyRuns = 64;

// Calls f with a function copying `bytes` bytes, of a constant size for the
// usual small runs (moves inline, not a call into the C library).
template <class F>
void with_run_copy(size_t bytes, const F& f) {
  switch (bytes) {
    case 4:
      return f([](char* to, const char* from) { std::memcpy(to, from, 4); });
    case 8:
      return f([](char* to, const char* from) { std::memcpy(to, from, 8); });
    case 16:
      return f([](char* to, const char* from) { std::memcpy(to, from, 16); });
    case 32:
      return f([](char* to, const char* from) { std::memcpy(to, from, 32); });
    default:
      return f([bytes](char* to, const char* from) { std::memcpy(to, from, bytes); });
  }
}

// A transpose of `in` (static, not empty) as runs: the trailing output axes
// that keep their input axes (perm[d] == d from some d on) are one run; the
// offsets of the runs in output order, or nothing when there are too many.
std::unique_ptr<Plan::Step::StaticCopy> transpose_runs(const Shape& in, const ops::Attrs& attrs,
                                                       size_t element_bytes) {
  const int rank = in.rank();
  std::vector<int> perm(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    const int64_t p = attrs.ints.empty() ? rank - 1 - d : attrs.ints[size_t(d)];
    perm[size_t(d)] = int(p < 0 ? p + rank : p);
  }
  int kept = rank;
  while (kept > 0 && perm[size_t(kept) - 1] == kept - 1) --kept;
  auto copy = std::make_unique<Plan::Step::StaticCopy>();
  copy->run_bytes = element_bytes;
  for (int d = kept; d < rank; ++d) copy->run_bytes *= size_t(in[d]);
  int64_t runs = 1;
  for (int d = 0; d < kept; ++d) runs *= in[perm[size_t(d)]];
  if (runs > kMaxStaticCopyRuns) return nullptr;
  std::vector<size_t> strides(size_t(rank) + 1, element_bytes);  // bytes per input axis
  for (int d = rank - 1; d > 0; --d) strides[size_t(d) - 1] = strides[size_t(d)] * size_t(in[d]);
  // The output's leading axes, counted like a number whose last digit is
  // axis kept - 1.
  std::vector<int64_t> counter(size_t(kept), 0);
  size_t offset = 0;
  for (int64_t r = 0; r < runs; ++r) {
    copy->from.push_back(uint32_t(offset));
    for (int d = kept - 1; d >= 0; --d) {
      const size_t stride = strides[size_t(perm[size_t(d)])];
      offset += stride;
      if (++counter[size_t(d)] < in[perm[size_t(d)]]) break;
      offset -= stride * size_t(in[perm[size_t(d)]]);
      counter[size_t(d)] = 0;
    }
  }
  return copy;
}

}  // namespace

void Plan::mark_static_copies() {
  const graph::Body& body = *body_;
  for (Step& step : steps_) {
    if (step.kind != graph::NodeKind::Op || !step.shape_is_static || step.shape_only ||
        step.row_output || step.runs_shape_rule)
      continue;
    const DType dtype = step.out_dtypes[0];
    if (step.op->id == ops::OpId::Transpose) {
      const Shape& in = body.type_of(step.node->inputs[0]).shape;
      if (step.buffers[0] < 0 || !in.is_fully_defined() || in.num_elements() < 1 ||
          byte_size(in, dtype) > std::numeric_limits<uint32_t>::max())
        continue;
      step.static_copy = transpose_runs(in, *step.attrs, dtype_size(dtype));
      continue;
    }
    // A write in place in an inline loop's body: its array holds the static
    // size already (see plan_memory).
    if (step.op->id != ops::OpId::TensorArrayWrite || step.attrs->keepdims ||
        step.write_into_input < 0 || donated_bytes_.empty())
      continue;
    const ops::ValueType& index = body.type_of(step.node->inputs[1]);
    const ops::ValueType& value = body.type_of(step.node->inputs[2]);
    const Shape& shape = step.static_shape;
    const int64_t axis = step.attrs->axis < 0 ? step.attrs->axis + shape.rank() : step.attrs->axis;
    if ((index.dtype != DType::int32 && index.dtype != DType::int64) || index.shape.rank() != 0 ||
        !value.shape.is_fully_defined() || value.dtype != dtype || axis < 0 || axis >= shape.rank())
      continue;
    int64_t runs = 1, inner = 1;
    for (int d = 0; d < shape.rank(); ++d) {
      if (d < axis) runs *= shape[d];
      if (d > axis) inner *= shape[d];
    }
    if (value.shape.num_elements() != runs * inner) continue;
    step.static_copy = std::make_unique<Step::StaticCopy>();
    step.static_copy->element_bytes = dtype_size(dtype);
    step.static_copy->run_bytes = size_t(inner) * step.static_copy->element_bytes;
    step.static_copy->rows = shape[int(axis)];
    step.static_copy->runs = runs;
  }
}

bool Plan::run_static_copy(Arena& a, const Step& step) const {
  const Step::StaticCopy& c = *step.static_copy;
  const int32_t out_slot = step.out_slot;
  if (!c.from.empty()) {  // a transpose
    char* out = static_cast<char*>(a.reserve(step.buffers[0], step.static_bytes));
    const char* in = static_cast<const char*>(a.data[size_t(step.inputs[0])]);
    with_run_copy(c.run_bytes, [&](auto copy) {
      for (size_t r = 0; r < c.from.size(); ++r) copy(out + r * c.run_bytes, in + c.from[r]);
    });
    a.data[size_t(out_slot)] = out;
    a.shape[size_t(out_slot)] = &step.static_shape;
    return true;
  }
  const void* at = a.data[size_t(step.inputs[1])];
  const int64_t i = slot_dtypes_[size_t(step.inputs[1])] == DType::int32
                        ? *static_cast<const int32_t*>(at)
                        : *static_cast<const int64_t*>(at);
  if (i < 0 || i >= c.rows) return false;
  char* array = static_cast<char*>(const_cast<void*>(a.data[size_t(step.inputs[0])]));
  char* to = array + size_t(i) * c.run_bytes;
  const char* from = static_cast<const char*>(a.data[size_t(step.inputs[2])]);
  // (A variable kept in this row, plan_views.cpp: written here already.)
  if (from != to) {
    const size_t from_stride =
        step.input_strides[2] > 0 ? size_t(step.input_strides[2]) * c.element_bytes : c.run_bytes;
    const size_t to_stride = size_t(c.rows) * c.run_bytes;
    with_run_copy(c.run_bytes, [&](auto copy) {
      for (int64_t o = 0; o < c.runs; ++o)
        copy(to + size_t(o) * to_stride, from + size_t(o) * from_stride);
    });
  }
  a.data[size_t(out_slot)] = array;
  a.shape[size_t(out_slot)] = &step.static_shape;
  return true;
}

void Plan::run_row_view(Arena& a, const Step& step) const {
  const int32_t params = step.inputs[0], index = step.inputs[1];
  const Shape& shape = *a.shape[size_t(params)];
  const void* at = a.data[size_t(index)];
  const int64_t i = slot_dtypes_[size_t(index)] == DType::int32 ? *static_cast<const int32_t*>(at)
                                                                : *static_cast<const int64_t*>(at);
  if (i < 0 || i >= shape[step.view_axis]) {
    // gather's own error; its kernel checks every index before it writes.
    ops::KernelInput kin[2] = {{a.data[size_t(params)], &shape, slot_dtypes_[size_t(params)]},
                               {at, a.shape[size_t(index)], slot_dtypes_[size_t(index)]}};
    ops::KernelContext kctx{step.op->name,      {kin, 2},   nullptr, &step.static_shape,
                            step.out_dtypes[0], step.attrs, nullptr};
    step.op->kernel(kctx);
    throw InternalError("gather accepted an index out of range");
  }
  if (step.view_axis > 0) {
    a.data[size_t(step.out_slot)] =
        static_cast<const char*>(a.data[size_t(params)]) + size_t(i * step.view_index_bytes);
    a.shape[size_t(step.out_slot)] = &step.static_shape;
    return;
  }
  const Shape* out_shape = &step.static_shape;
  size_t row = step.static_bytes;
  if (!step.shape_is_static) {
    a.dynamic_shapes[size_t(step.out_slot)] = Shape(shape.dims().subspan(1));
    out_shape = &a.dynamic_shapes[size_t(step.out_slot)];
    row = byte_size(*out_shape, step.out_dtypes[0]);
  }
  a.data[size_t(step.out_slot)] =
      static_cast<const char*>(a.data[size_t(params)]) + size_t(i) * row;
  a.shape[size_t(step.out_slot)] = out_shape;
}

}  // namespace ag::exec
