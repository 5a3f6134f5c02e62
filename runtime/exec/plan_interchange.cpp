// Loops run in the other order (loop interchange), decided while compiling.
//
// An inline While whose body is a recurrence kept in the rows of its
// TensorArray (plan_views.cpp, keep_rows_in_arrays; dynamic_rnn:
// `state = x[:, i, :] + state; states.write(i, state)`) and nothing else
// computes row i of the array from row i - 1 and a row of a value the loop
// does not change, element by element: each run of a row (one batch entry's
// features) depends only on the same run of the rows before it. Iteration
// by iteration, the loop walks its array and its input a row at a time, the
// row's runs far apart (dynamic_rnn at 32x100x128: 32 runs of 512 bytes,
// 51 KB apart, in the array and in the input: about 64 streams for the
// hardware prefetcher, which follows far fewer). Interchanged, it computes
// one run position's whole recurrence at a time, each with one call of the
// op's kernel that walks memory in order, as a hand-written batch-major
// loop does.
//
// Needs: the body's row output marked (keep_rows_in_arrays), so the loop
// writes every row of the array from a counter that starts at 0 and steps
// by 1 (plan_views.cpp, loop_writing_every_row); the loop's trip count fixed
// when compiling: the condition is the one step `counter < rows`, rows
// being the array's; three loop variables (the counter, the array, the
// state); a body of only the recurrence, the array's write, the rows of its
// other operand (a view of a value no step writes, at least `rows` long
// along the viewed axis, at the counter's index) or a value the loop does
// not change, and the counter's steps (its next value, the index cast).
// Guarantees: every element goes through the same operations in the same
// order as in the iterative loop, so the array holds the same bits; the
// counter ends at `rows` and the state's variable in the last row, as the
// loop leaves them. The only error possible is the op's own (an integer
// division by zero), which carries the op's "defined at" as it would.

#include <algorithm>
#include <cstdint>
#include <optional>

#include "exec/plan_internal.h"
#include "ops/parallel.h"

namespace ag::exec {

void Plan::interchange_loop(Step& loop) {
  if (loop.variables_in_rows.size() != 1 || loop.buffers.size() != 3) return;
  const Step::VariableInRow& v = loop.variables_in_rows[0];
  const std::optional<RowsLoop> rows = loop_writing_every_row(*body_, *loop.node, size_t(v.array));
  const Plan& cond = *loop.subplans[0];
  const Plan& body = *loop.subplans[1];
  const graph::Body& body_graph = *loop.node->subgraphs[1];
  if (!rows || rows->bound != rows->size || cond.steps_.size() != 1) return;
  const auto counter = int32_t(rows->counter);
  const DType counter_dtype = loop.out_dtypes[size_t(counter)];
  if (counter_dtype != DType::int32 && counter_dtype != DType::int64) return;

  const Step* op = nullptr;
  for (const Step& s : body.steps_) {
    if (s.row_output) op = &s;
  }
  const Source& written = body.sources_[size_t(body.outputs_[size_t(v.array)])];
  if (op == nullptr || written.kind != Source::Step) return;
  const Step& write = body.steps_[size_t(written.index)];
  const size_t element = dtype_size(op->out_dtypes[0]);

  // The op's other operand: the rows of a value no step writes, or a value
  // the loop does not change.
  const size_t other = 1 - size_t(op->row_output->operand);
  const int32_t other_slot = op->inputs[other];
  const Source& other_source = body.sources_[size_t(other_slot)];
  const Step* view = nullptr;
  int32_t input_slot = other_slot;
  int64_t input_per_iteration = 0;
  if (other_source.kind == Source::Step) {
    view = &body.steps_[size_t(other_source.index)];
    if (!view->row_view || !view->shape_is_static) return;
    const Shape& params = body_graph.type_of(view->node->inputs[0]).shape;
    if (!params.is_fully_defined() || params[view->view_axis] < rows->size ||
        !is_counter(body_graph, view->node->inputs[1], size_t(counter), rows->size))
      return;
    input_slot = view->inputs[0];
    input_per_iteration =
        int64_t(view->view_axis > 0 ? size_t(view->view_index_bytes) : view->static_bytes) /
        int64_t(element);
  } else if (other_source.kind == Source::Input) {
    if (size_t(other_source.index) < loop.buffers.size()) return;  // a loop variable
  } else if (other_source.kind != Source::Constant) {
    return;
  }

  // Nothing else in the body: the counter's next value and the indices
  // (is_counter: the counter, or its cast) only.
  const int32_t next_counter = body.outputs_[size_t(counter)];
  for (const Step& s : body.steps_) {
    const bool counts = s.out_slot == next_counter || s.out_slot == write.inputs[1] ||
                        (view != nullptr && s.out_slot == view->inputs[1]);
    if (&s != op && &s != &write && &s != view && !counts) return;
  }

  const int64_t run = op->strided_run;
  const int64_t outer = op->static_shape.num_elements() / run;
  const int64_t input_per_run = op->input_strides[other] != 0 ? op->input_strides[other] : run;
  loop.interchanged = std::make_unique<Step::InterchangedLoop>(Step::InterchangedLoop{
      op, counter, v.array, v.variable, rows->size, outer, run, int64_t(v.stride_bytes / element),
      input_slot, input_per_iteration, input_per_run, Shape{run}, Shape{rows->size - 1, run}});
}

void Plan::run_interchanged(Arena& a, const Step& loop) const {
  const Step::InterchangedLoop& l = *loop.interchanged;
  const Step& op = *l.op;
  const DType dtype = op.out_dtypes[0];
  const size_t element = dtype_size(dtype);
  char* array = static_cast<char*>(const_cast<void*>(a.data[size_t(loop.out_slot + l.array)]));
  const char* input = static_cast<const char*>(a.data[size_t(l.input_slot)]);
  const size_t state = size_t(op.row_output->operand), other = 1 - state;
  // Run positions [begin, end): each independent of the others, so they
  // split over the intra-op threads like an elementwise kernel's elements.
  auto run_positions = [&](int64_t begin, int64_t end) {
    ops::KernelInput kin[2];
    // Strided inputs (binary_loop's strided branch): the state from the row
    // before, the other operand from its next row (or the same one).
    kin[state] = {nullptr, &l.later_rows, dtype, l.run, l.run};
    kin[other] = {nullptr, &l.later_rows, dtype, l.run, l.input_per_iteration};
    ops::KernelContext ctx{op.op->name, {kin, 2}, nullptr, nullptr, dtype, op.attrs, nullptr};
    ctx.out_stride = l.run;
    for (int64_t o = begin; o < end; ++o) {
      // Row 0 holds the initial state (enter_loop): the first result goes
      // over it, then each row is computed from the one before.
      char* first = array + size_t(o * l.array_per_run) * element;
      const char* x = input + size_t(o * l.input_per_run) * element;
      kin[state].data = first;
      kin[other].data = x;
      ctx.out = first;
      ctx.out_shape = &l.first_row;
      op.op->kernel(ctx);
      if (l.rows == 1) continue;
      kin[other].data = x + size_t(l.input_per_iteration) * element;
      ctx.out = first + size_t(l.run) * element;
      ctx.out_shape = &l.later_rows;
      op.op->kernel(ctx);
    }
  };
  try {
    ops::parallel_for(l.outer, std::max<int64_t>(1, ops::kParallelGrain / (l.rows * l.run)),
                      run_positions);
  } catch (const Error& e) {
    rethrow_defined_at(e, *op.node);
  }
  void* counter = const_cast<void*>(a.data[size_t(loop.out_slot + l.counter)]);
  if (loop.out_dtypes[size_t(l.counter)] == DType::int32) {
    *static_cast<int32_t*>(counter) = int32_t(l.rows);
  } else {
    *static_cast<int64_t*>(counter) = l.rows;
  }
  a.data[size_t(loop.out_slot + l.state)] = array + size_t((l.rows - 1) * l.run) * element;
}

}  // namespace ag::exec
