// Compiling a Body into a Plan (see plan.h), in the phases that the
// constructor runs in this order, each building on the ones before:
//   1. slot assignment      one slot per value;
//   2. step building        one step per node that computes something;
//  2b. shape-only steps     which values only their shape is read of;
//  2c. views                which gathers are views (of a row, or of a slice
//                            read strided), which loop variables start
//                            uncopied (plan_views.cpp);
//   3. memory plan          which buffer each computed value lives in;
//  3b. static copies        which steps copy runs of bytes fixed now instead
//                            of calling their kernel (plan_views.cpp);
//   4. output aliasing      which outputs may share an input's memory;
//   5. scalar-step selection which steps call an op's scalar kernel (per
//                            element, for small static vectors, or folded
//                            over them, for small integer reductions);
//  5b. loop variables' slots which slots of an inline loop's body are its
//                            variables' memory;
//  5c. inline loops' copies  what ends an inline loop's iteration;
//   6. program              (an owning plan, once its branches' and inline
//                            loops' buffers are placed) the instructions
//                            run_steps walks.
// Running the plan is in plan_run.cpp.

#include <algorithm>
#include <climits>
#include <memory>
#include <utility>
#include <vector>

#include "exec/plan_internal.h"
#include "ops/kernels.h"
#include "ops/random.h"

namespace ag::exec {

namespace {

bool is_identity(const graph::Node& n) {
  return n.kind == graph::NodeKind::Op && n.op == ops::OpId::Identity;
}

}  // namespace

// The state shared by the phases while one plan is compiled.
struct Plan::Compiler {
  Plan& plan;
  const graph::Body& body;
  ArenaLayout& layout;                           // the arena's slots and children so far
  const std::vector<int32_t>* branch_inputs;     // an If branch, inline loop: its inputs' slots
  int32_t branch_output_slot;                    // an If branch: the If's output 0 slot, else -1
  std::vector<int32_t> first_slot;               // per node: the slot of its output 0
  std::vector<bool> slot_is_scalar;              // per slot: static rank 0
  std::vector<const ops::ValueType*> slot_type;  // per slot
  int32_t first_own_slot;                        // the first slot this plan assigns

  int32_t num_slots() const { return int32_t(plan.sources_.size()); }
  int32_t slot_of(graph::ValueRef v) const {
    v = through_identity(body, v);
    return first_slot[size_t(v.node)] + v.output;
  }

  // An elementwise op, or a fused one without a reduction or with the value
  // as output 0: each element of output 0 depends only on the inputs'
  // elements at the same index.
  bool writes_elementwise(const Step& step) const {
    if (step.kind == graph::NodeKind::Fused)
      return !step.fused->reduction || step.fused->keeps_value;
    if (step.buffers.size() != 1) return false;
    return step.kind == graph::NodeKind::Op && (step.op->flags & ops::kElementwise) &&
           !(step.op->flags & ops::kStateful);
  }
  // The input of `step` that its one output may write over, or -1
  // (ops::in_place_input: all_reduce's input 0, fused_conv's residual). Not
  // a value the step also reads as another input: the kernel reads those
  // (a convolution's image) after it has begun to write.
  int overwritable_input(const Step& step) const {
    if (step.kind != graph::NodeKind::Op || step.buffers.size() != 1 || step.inputs.empty())
      return -1;
    const int k = ops::in_place_input(*step.op, *step.attrs);
    if (k < 0) return -1;
    const int32_t slot = step.inputs[size_t(k)];
    return std::count(step.inputs.begin(), step.inputs.end(), slot) == 1 ? k : -1;
  }
  // Whether `slot` has the static shape and element size of `step`'s output.
  bool same_layout(int32_t slot, const Step& step) const {
    const ops::ValueType& t = *slot_type[size_t(slot)];
    return step.shape_is_static && t.shape == step.static_shape &&
           dtype_size(t.dtype) == dtype_size(step.out_dtypes[0]);
  }

  void use_if_output_slots();
  void assign_slots();
  std::vector<size_t> donated_to_branches(size_t node, const std::vector<int32_t>& inputs,
                                          const std::vector<int32_t>& last_reader) const;
  void build_steps();
  void mark_shape_only_steps();
  void plan_memory();
  void inputs_aliased_by(int32_t slot, std::vector<int32_t>& out) const;
  void mark_output_aliasing();
  void select_scalar_steps();
  bool select_flat_reduction(Step& step) const;
  void prepare_kernels();
  static bool if_output_in_variable(Step& branch_if, size_t k, int32_t var,
                                    std::vector<std::pair<Step*, size_t>>& ifs,
                                    std::vector<Step*>& writers);
  void keep_in_variables();
  void plan_loop_copies();
};

// A branch's node whose outputs are the If's outputs k, k + 1, ... (in that
// order) computes them in the If's output slots: the If then has nothing to
// move for them (see emit_program). Only steps that write their slots' data
// and shapes, never a held tensor (Op, Fused, If, While): both branches'
// nodes may take a slot, and a tensor one left would outlive its value.
void Plan::Compiler::use_if_output_slots() {
  const auto num_outputs = int32_t(body.outputs.size());
  for (int32_t k = 0; k < num_outputs; ++k) {
    const graph::ValueRef v = through_identity(body, body.outputs[size_t(k)]);
    const graph::Node& n = body.nodes[size_t(v.node)];
    if (first_slot[size_t(v.node)] >= 0 ||
        (n.kind != graph::NodeKind::Op && n.kind != graph::NodeKind::Fused &&
         n.kind != graph::NodeKind::If && n.kind != graph::NodeKind::While)) {
      continue;
    }
    const int32_t first = k - v.output;  // the If output its output 0 would be
    bool all = first >= 0 && first + int32_t(n.outputs.size()) <= num_outputs;
    for (int32_t j = 0; all && j < int32_t(n.outputs.size()); ++j) {
      const graph::ValueRef o = through_identity(body, body.outputs[size_t(first + j)]);
      all = o.node == v.node && o.output == j;
    }
    if (all) first_slot[size_t(v.node)] = branch_output_slot + first;
  }
}

// 1. Slot assignment.
// Needs: the body's nodes in topological order, one placeholder per input.
// Guarantees: every node output has a slot (node outputs are consecutive
// slots, after the layout's), with its dtype and whether it is a static
// scalar; an Identity's output is read from its input's slot, an If
// branch's placeholder is the parent's slot of that input, and a node that
// computes the If's outputs k, k + 1, ... may have the If's slots for them
// (use_if_output_slots). Inputs' sources,
// input_slots_ and outputs_ are set; every other source is still unset.
void Plan::Compiler::assign_slots() {
  first_slot.assign(body.nodes.size(), -1);
  if (branch_inputs) {
    for (size_t k = 0; k < body.placeholders.size(); ++k)
      first_slot[size_t(body.placeholders[k])] = (*branch_inputs)[k];
    if (branch_output_slot >= 0) use_if_output_slots();
  }
  int32_t count = first_own_slot = layout.num_slots;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    if (first_slot[i] >= 0) continue;
    first_slot[i] = count;
    count += int32_t(body.nodes[i].outputs.size());
  }
  layout.num_slots = count;
  plan.sources_.assign(size_t(count), Source{Source::Step, -1});
  plan.slot_dtypes_.resize(size_t(count));
  slot_is_scalar.assign(size_t(count), false);
  slot_type.assign(size_t(count), nullptr);
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    for (size_t k = 0; k < body.nodes[i].outputs.size(); ++k) {
      slot_type[size_t(first_slot[i]) + k] = &body.nodes[i].outputs[k];
      plan.slot_dtypes_[size_t(first_slot[i]) + k] = body.nodes[i].outputs[k].dtype;
      slot_is_scalar[size_t(first_slot[i]) + k] = body.nodes[i].outputs[k].shape.rank() == 0;
    }
  }
  plan.num_inputs_ = body.placeholders.size();
  plan.input_slots_.assign(plan.num_inputs_, -1);
  for (size_t k = 0; k < body.placeholders.size(); ++k) {
    int32_t slot = first_slot[size_t(body.placeholders[k])];
    plan.sources_[size_t(slot)] = {Source::Input, int32_t(k)};
    plan.input_slots_[k] = slot;
  }
  for (graph::ValueRef v : body.outputs) plan.outputs_.push_back(slot_of(v));
}

// 2. Step building.
// Needs: slots (phase 1).
// Guarantees: one step per node other than placeholders, constants and
// Identity, in node order, with its input and output slots, its output
// shape and size when static, its random state, for If and While its
// branches' and loop's nested plans, for Fused its program (a While's body may overwrite its loop
// variables, its first inputs). Every slot's source is set. No step has a
// buffer yet.
void Plan::Compiler::build_steps() {
  // Per slot, the last node that reads it (INT_MAX: an output of the plan),
  // for donated_to_branches: needed only where there is something to donate.
  std::vector<int32_t> last_reader;
  if (!plan.donated_bytes_.empty()) {
    last_reader.assign(size_t(num_slots()), -1);
    for (size_t i = 0; i < body.nodes.size(); ++i) {
      const graph::Node& n = body.nodes[i];
      if (n.kind == graph::NodeKind::Placeholder || is_identity(n)) continue;
      for (graph::ValueRef in : n.inputs) last_reader[size_t(slot_of(in))] = int32_t(i);
    }
    for (graph::ValueRef v : body.outputs) last_reader[size_t(slot_of(v))] = INT_MAX;
  }
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const graph::Node& n = body.nodes[i];
    if (n.kind == graph::NodeKind::Placeholder || is_identity(n)) continue;
    if (n.kind == graph::NodeKind::Const) {
      plan.sources_[size_t(first_slot[i])] = {Source::Constant, int32_t(plan.constants_.size())};
      plan.constants_.push_back(n.value);
      continue;
    }
    Step step;
    step.kind = n.kind;
    step.node = &n;
    step.op = n.kind == graph::NodeKind::Op ? &ops::op_def(n.op) : nullptr;
    step.attrs = &n.attrs;
    for (graph::ValueRef in : n.inputs) step.inputs.push_back(slot_of(in));
    step.out_slot = first_slot[i];
    // (Only a branch's node that computes the If's outputs has slots before
    // the layout's: the If's, which the other branch writes too.)
    step.owns_slots = first_slot[i] >= first_own_slot;
    for (const auto& t : n.outputs) step.out_dtypes.push_back(t.dtype);
    step.buffers.assign(n.outputs.size(), -1);
    if (n.kind == graph::NodeKind::Op || n.kind == graph::NodeKind::Fused) {
      step.static_shape = n.outputs[0].shape;
      step.shape_is_static = step.static_shape.is_fully_defined();
      if (step.shape_is_static)
        step.static_bytes = byte_size(step.static_shape, step.out_dtypes[0]);
      step.runs_shape_rule =
          n.kind == graph::NodeKind::Op &&
          (!step.shape_is_static ||
           std::any_of(n.inputs.begin(), n.inputs.end(), [&](graph::ValueRef in) {
             return !body.type_of(in).shape.is_fully_defined();
           }));
    }
    if (n.kind == graph::NodeKind::Fused) {
      std::vector<const ops::ValueType*> input_types;
      for (graph::ValueRef in : n.inputs) input_types.push_back(&body.type_of(in));
      step.fused = compile_fused(n, input_types, step.inputs);
    }
    step.variable = n.variable;
    step.effect = n.effect;
    if (step.op && (step.op->flags & ops::kStateful)) {
      step.rng_key = ops::eager_random_state(n.attrs.seed).key;
      step.rng_counter = std::make_unique<std::atomic<uint64_t>>(0);
    }
    if (n.kind == graph::NodeKind::If) {
      // The branches read the If's inputs (after the predicate) where they are.
      std::vector<int32_t> inputs(step.inputs.begin() + 1, step.inputs.end());
      const std::vector<size_t> donated = donated_to_branches(i, inputs, last_reader);
      for (const auto& branch : n.subgraphs)
        step.subplans.push_back(
            std::unique_ptr<Plan>(new Plan(branch, layout, inputs, step.out_slot, donated)));
    }
    if (n.kind == graph::NodeKind::While) {
      if (!n.attrs.ints.empty()) step.maximum_iterations = n.attrs.ints[0];
      for (const ops::ValueType& t : n.outputs) {
        const bool is_static = t.shape.is_fully_defined();
        step.var_static_shapes.push_back(is_static ? &t.shape : nullptr);
        step.var_static_bytes.push_back(is_static ? byte_size(t.shape, t.dtype) : 0);
      }
      // A While owns its loop variables (its output buffers), so its body
      // may overwrite them: they are the body's first inputs.
      step.inline_loop = runs_inline(n);
      if (step.inline_loop) {
        // The condition and body read the variables in the While's output
        // slots, the captured values where they are.
        std::vector<int32_t> inputs = step.inputs;
        for (size_t k = 0; k < n.outputs.size(); ++k) inputs[k] = step.out_slot + int32_t(k);
        step.subplans.push_back(
            std::unique_ptr<Plan>(new Plan(n.subgraphs[0], layout, inputs, -1)));
        step.subplans.push_back(std::unique_ptr<Plan>(
            new Plan(n.subgraphs[1], layout, inputs, -1, step.var_static_bytes)));
        if (step.maximum_iterations >= 0) step.loop_counter = int32_t(layout.num_loop_counters++);
      } else {
        step.subplans.push_back(std::make_unique<Plan>(n.subgraphs[0], false));
        step.subplans.push_back(std::make_unique<Plan>(n.subgraphs[1], false, n.outputs.size()));
        step.first_child = layout.num_children;
        layout.num_children += step.subplans.size();
      }
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      plan.sources_[size_t(first_slot[i]) + k] = {Source::Step, int32_t(plan.steps_.size())};
    }
    plan.steps_.push_back(std::move(step));
  }
}

// An If's inputs that its branches may overwrite, as their donated_bytes
// (0: not donated; empty: none is): a loop variable of an inline loop's
// body (static capacity) that the If reads last and once, which is no
// output of the body and not a scalar. A branch then writes it in place
// (a TensorArray written in an `if` in a loop: one row, not a copy of the
// array per iteration), and the If's output is that memory, which the
// loop's update then need not copy. Either branch runs, not both: the other
// passes the value through or computes its own.
std::vector<size_t> Plan::Compiler::donated_to_branches(
    size_t node, const std::vector<int32_t>& inputs,
    const std::vector<int32_t>& last_reader) const {
  if (plan.donated_bytes_.empty()) return {};  // not an inline loop's body (or its branch)
  std::vector<size_t> donated(inputs.size(), 0);
  bool any = false;
  for (size_t j = 0; j < inputs.size(); ++j) {
    const int32_t slot = inputs[j];
    const Source& src = plan.sources_[size_t(slot)];
    if (src.kind != Source::Input || !plan.is_donated(src.index) ||
        last_reader[size_t(slot)] != int32_t(node) || slot_is_scalar[size_t(slot)] ||
        std::count(inputs.begin(), inputs.end(), slot) != 1)
      continue;
    donated[j] = plan.donated_bytes_[size_t(src.index)];
    any = true;
  }
  if (!any) donated.clear();
  return donated;
}

// 2b. Shape-only steps.
// Needs: steps (phase 2), the loop variables overwritten whole
// (mark_dead_initial_values).
// Guarantees: a Range or Zeros step whose value is no output of the plan
// and is read only for its shape is shape_only: it runs its shape rule, with
// the same errors, but computes no elements and gets no buffer. (Neither
// kernel can fail where its shape rule succeeded, so no error is lost.) A
// value is read only for its shape by kShapeOnly ops (dim, shape, size,
// rank: a staged for loop's length once the loop computes its elements
// itself, passes/range_loops.cpp) and as the initial value of a loop
// variable that the loop overwrites whole before reading it (a TensorArray's
// zeros, written at every index).
void Plan::Compiler::mark_shape_only_steps() {
  std::vector<bool> only_shape_read(size_t(num_slots()), true);
  for (const Step& step : plan.steps_) {
    const bool reads_shape = step.op && (step.op->flags & ops::kShapeOnly);
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const bool dead_initial_value =
          i < step.initial_value_dead.size() && step.initial_value_dead[i];
      const int32_t in = step.inputs[i];
      only_shape_read[size_t(in)] =
          only_shape_read[size_t(in)] && (reads_shape || dead_initial_value);
    }
  }
  for (int32_t o : plan.outputs_) only_shape_read[size_t(o)] = false;
  for (Step& step : plan.steps_) {
    step.shape_only = step.kind == graph::NodeKind::Op &&
                      (step.op->id == ops::OpId::Range || step.op->id == ops::OpId::Zeros) &&
                      only_shape_read[size_t(step.out_slot)];
  }
}

// 3. Memory plan.
// Needs: steps (phase 2).
// Guarantees: values computed into buffers are op results that are not
// top-level outputs, and every While result (its loop variables) but a
// top-level inline loop's that is an output (a fresh tensor); two values
// alive at the same time never share a buffer, and a buffer is free again
// after the last step that reads its value, so values with disjoint lifetimes
// share one. A nested plan's outputs stay alive to its end, for the parent to
// read. An If's inputs live as long as its outputs (they may be the same
// memory: see run_if). An in-place op (a TensorArray write) whose input 0 is
// a donated input read last by it writes into that input's memory. Each While
// gets one scratch buffer per loop variable, and each Fused step one for its
// blocks, numbered after num_buffers_.
// In place: an elementwise op (and where, cast, an unreduced fused node)
// whose input of the output's static shape and element size is read last by
// it writes over that input: it takes over the input's buffer, or writes into
// a donated input (a While body's loop variable, which then needs no copy).
// Each output element depends only on the input elements at its own index,
// which the kernel reads before it writes that element. An op that may write
// over an input (ops::in_place_input) takes over its buffer the same way.
void Plan::Compiler::plan_memory() {
  std::vector<Step>& steps = plan.steps_;
  std::vector<int32_t> last_use(size_t(num_slots()), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int32_t in : steps[s].inputs) last_use[size_t(in)] = int32_t(s);
  }
  std::vector<bool> is_output(size_t(num_slots()), false);
  for (int32_t o : plan.outputs_) {
    is_output[size_t(o)] = true;
    last_use[size_t(o)] = INT_MAX;
  }
  // An If's outputs are not copied: each is the value its branch left, in
  // the branch's arena or, when the branch passes an input through, the
  // parent's value itself. So the If's inputs stay alive as long as its
  // outputs (in reverse order, so that chains of Ifs extend transitively).
  for (size_t s = steps.size(); s-- > 0;) {
    const Step& step = steps[s];
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
  std::vector<int32_t> buffer_of(size_t(num_slots()), -1);
  auto release = [&](int32_t slot) {
    if (buffer_of[size_t(slot)] >= 0) free_buffers.push_back(buffer_of[size_t(slot)]);
    buffer_of[size_t(slot)] = -1;
  };
  // (An inline loop body writes into a variable only within its static
  // size: its buffer's capacity is not looked up at run time.)
  auto donated_dying_here = [&](int32_t slot, size_t s) {
    const Source& src = plan.sources_[size_t(slot)];
    const Step& step = steps[s];
    return src.kind == Source::Input && plan.is_donated(src.index) &&
           last_use[size_t(slot)] == int32_t(s) &&
           (plan.donated_bytes_.empty() ||
            (step.shape_is_static && step.static_bytes <= plan.donated_bytes_[size_t(src.index)]));
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    Step& step = steps[s];
    const int overwritable = overwritable_input(step);
    if (overwritable >= 0 && donated_dying_here(step.inputs[size_t(overwritable)], s)) {
      step.write_into_input = plan.sources_[size_t(step.inputs[size_t(overwritable)])].index;
      step.in_place_operand = overwritable;
    }
    const bool computed = step.kind == graph::NodeKind::Op || step.kind == graph::NodeKind::Fused;
    bool buffered =
        (computed && !step.shape_only && !step.row_view) || step.kind == graph::NodeKind::While;
    // An elementwise step writes over an input of its own type that dies
    // here: preferably a donated loop variable, which then needs no copy at
    // the end of the iteration (not a scalar, whose copy costs less than
    // losing its scalar step, unless an inline loop's body keeps it: see
    // select_scalar_steps), else an intermediate's buffer.
    int32_t taken_over = -1;
    // Takes over the buffer of input `in` if its value dies here and fits.
    auto take_over_dying = [&](int32_t in) {
      if (last_use[size_t(in)] != int32_t(s) || buffer_of[size_t(in)] < 0 || !same_layout(in, step))
        return false;
      taken_over = buffer_of[size_t(in)];
      buffer_of[size_t(in)] = -1;  // now the output's
      return true;
    };
    // (A step without outputs has no out_slot: asked only of those that write.)
    auto function_output = [&] { return plan.top_level_ && is_output[size_t(step.out_slot)]; };
    if (writes_elementwise(step) && !function_output()) {
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        int32_t in = step.inputs[i];
        if (donated_dying_here(in, s) && same_layout(in, step) &&
            (step.static_shape.rank() > 0 || !plan.donated_bytes_.empty())) {
          step.write_into_input = plan.sources_[size_t(in)].index;
          step.in_place_operand = int32_t(i);
          break;
        }
      }
      for (size_t i = 0; i < step.inputs.size() && step.write_into_input < 0; ++i) {
        if (take_over_dying(step.inputs[i])) break;
      }
    }
    // An op that may write over an input (all_reduce, whose transport then
    // needs no copy of it; fused_conv, which sums into its residual) takes
    // that input's buffer where it dies here, as an elementwise step does.
    if (taken_over < 0 && step.write_into_input < 0 && overwritable >= 0 && !function_output())
      take_over_dying(step.inputs[size_t(overwritable)]);
    // Such a write never falls back to a buffer: the loop variable's buffer
    // holds a value of this static size already (as it holds any write into
    // an inline loop's variable: see donated_dying_here).
    const bool into_input =
        (writes_elementwise(step) || !plan.donated_bytes_.empty()) && step.write_into_input >= 0;
    for (size_t k = 0; k < step.buffers.size(); ++k) {
      int32_t slot = step.out_slot + int32_t(k);
      // A top-level inline loop's variable that is an output lives in its
      // fresh tensor from the start: no copy into one at the end.
      bool fresh = plan.top_level_ && is_output[size_t(slot)] && (computed || step.inline_loop);
      if (!buffered || fresh || step.keeps_in_row(k) || (k == 0 && into_input)) continue;
      if (k == 0 && taken_over >= 0) {
        free_buffers.push_back(taken_over);
      } else if (free_buffers.empty()) {
        free_buffers.push_back(int32_t(plan.num_buffers_++));
      }
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
  for (Step& step : steps) {
    if (step.kind != graph::NodeKind::While && step.kind != graph::NodeKind::Fused) continue;
    step.first_scratch = int32_t(plan.num_buffers_ + plan.num_scratch_);
    plan.num_scratch_ += step.kind == graph::NodeKind::While ? step.buffers.size() : 1;
  }
}

// 4. Output aliasing.
// Needs: the memory plan (phase 3), and the nested plans' output aliasing.
// Guarantees: output_inputs_[k] lists the inputs whose memory output k may
// be: an input passed through (by this body, or by the branches of its Ifs,
// followed into them), or one an op wrote into in place. The list is exact
// or larger, never smaller. output_may_alias_input_[k] is set when it names
// an input other than k (a While body's loop variables trading values,
// x, y = y, x); when no output's is, the While updates each variable as it
// reads the body's outputs (see run_while).
void Plan::Compiler::inputs_aliased_by(int32_t slot, std::vector<int32_t>& out) const {
  const Source& src = plan.sources_[size_t(slot)];
  if (src.kind == Source::Input) out.push_back(src.index);
  if (src.kind != Source::Step) return;
  const Step& step = plan.steps_[size_t(src.index)];
  if (step.write_into_input >= 0) out.push_back(step.write_into_input);
  if (step.row_view) inputs_aliased_by(step.inputs[0], out);
  if (step.kind != graph::NodeKind::If) return;
  const size_t k = size_t(slot - step.out_slot);
  for (const auto& branch : step.subplans) {
    for (int32_t i : branch->output_inputs_[k]) inputs_aliased_by(step.inputs[size_t(i) + 1], out);
  }
}

void Plan::Compiler::mark_output_aliasing() {
  plan.output_inputs_.assign(plan.outputs_.size(), {});
  plan.output_may_alias_input_.assign(plan.outputs_.size(), 0);
  for (size_t k = 0; k < plan.outputs_.size(); ++k) {
    std::vector<int32_t>& inputs = plan.output_inputs_[k];
    inputs_aliased_by(plan.outputs_[k], inputs);
    plan.output_may_alias_input_[k] =
        std::any_of(inputs.begin(), inputs.end(), [&](int32_t i) { return size_t(i) != k; });
    plan.any_output_may_alias_input_ =
        plan.any_output_may_alias_input_ || plan.output_may_alias_input_[k];
  }
}

// 5. Scalar- and flat-step selection. Loop counters, flags and conditions
// are mostly rank-0 values, and small loop states short vectors: for those
// the generic step costs more than the arithmetic.
// Needs: the memory plan (phase 3): such a step writes into its buffer, or,
// as a top-level output, into a fresh tensor.
// Guarantees: a step gets the op's scalar kernel exactly when it is a
// non-stateful elementwise op with at most kMaxScalarInputs inputs, whose
// output has a static shape of at most kMaxFlatElements elements and is not
// written into an input (except in an inline loop's body, whose loop
// variables' memory is known to hold it: the step then writes there), and
// each of whose inputs has a static shape with
// one element or the output's element count. It is a scalar step when all of
// them are rank 0, else a flat step: the kernel per element (an input of one element is
// broadcast; one of the output's count has its layout, since broadcasting
// never reorders elements).
void Plan::Compiler::select_scalar_steps() {
  for (Step& step : plan.steps_) {
    if (select_flat_reduction(step)) continue;
    if (step.kind != graph::NodeKind::Op || !(step.op->flags & ops::kElementwise) ||
        (step.op->flags & ops::kStateful) || !step.shape_is_static ||
        step.static_shape.num_elements() > kMaxFlatElements ||
        (step.write_into_input >= 0 && plan.donated_bytes_.empty()) ||
        step.inputs.size() > kMaxScalarInputs) {
      continue;
    }
    const int64_t n = step.static_shape.num_elements();
    bool all_scalar = true, flat = n > 0;
    for (int32_t in : step.inputs) {
      const Shape& shape = slot_type[size_t(in)]->shape;
      all_scalar = all_scalar && slot_is_scalar[size_t(in)];
      flat = flat && shape.is_fully_defined() &&
             (shape.num_elements() == 1 || shape.num_elements() == n);
    }
    const bool scalar = all_scalar && step.static_shape.rank() == 0;
    if (!scalar && !flat) continue;
    step.scalar_kernel = ops::scalar_kernel(step.op->id, plan.slot_dtypes_[size_t(step.inputs[0])],
                                            step.out_dtypes[0]);
    for (size_t i = 0; i < kMaxScalarInputs; ++i) {
      step.scalar_inputs[i] = step.inputs[i < step.inputs.size() ? i : 0];
    }
    if (scalar && step.inputs.size() == 2) {
      const DType dtype = plan.slot_dtypes_[size_t(step.inputs[0])];
      step.binary_kernel = ops::binary_scalar_kernel(step.op->id, dtype, step.out_dtypes[0]);
      const Source& second = plan.sources_[size_t(step.inputs[1])];
      if (step.binary_kernel && second.kind == Source::Constant) {
        step.constant_kernel = ops::binary_kernel_by_constant(
            step.op->id, dtype, plan.constants_[size_t(second.index)].raw_data(),
            step.prepared_constant);
      }
    }
    if (scalar || !step.scalar_kernel) continue;
    step.flat_kernel = ops::flat_kernel(step.op->id, plan.slot_dtypes_[size_t(step.inputs[0])],
                                        step.out_dtypes[0]);
    step.flat_elements = int32_t(n);
    for (size_t i = 0; i < kMaxScalarInputs; ++i) {
      int32_t in = step.scalar_inputs[i];
      bool broadcast = slot_type[size_t(in)]->shape.num_elements() == 1 && n > 1;
      step.flat_strides[i] = broadcast ? 0 : uint32_t(dtype_size(plan.slot_dtypes_[size_t(in)]));
    }
  }
}

namespace {

// The binary op whose scalar kernel folds a reduction's elements, as its
// kernel (kernels_reduce.cpp) folds them; or Identity for other ops.
ops::OpId reducer_of(ops::OpId reduction) {
  switch (reduction) {
    case ops::OpId::ReduceSum:
      return ops::OpId::Add;
    case ops::OpId::ReduceProd:
      return ops::OpId::Mul;
    case ops::OpId::ReduceMax:
    case ops::OpId::ReduceAny:
      return ops::OpId::Maximum;
    case ops::OpId::ReduceMin:
    case ops::OpId::ReduceAll:
      return ops::OpId::Minimum;
    default:
      return ops::OpId::Identity;
  }
}

}  // namespace

// A loop's condition often reduces a small state vector (collatz: while
// reduce_max(x) > 1; the tanh loop: while reduce_sum(x) > 1): a reduction to
// one element of a static vector of at most kMaxFlatElements is a flat step
// that folds the elements in order with the reducer's scalar kernel. Integer
// (wrapping) and bool folds give the same result in any order; a float fold's
// bits depend on the order, so floats are flat steps only where the kernel
// folds in order too (fewer than ops::kInOrderReduceElements elements).
bool Plan::Compiler::select_flat_reduction(Step& step) const {
  if (step.kind != graph::NodeKind::Op || step.inputs.size() != 1 || !step.shape_is_static ||
      step.static_shape.num_elements() != 1) {
    return false;
  }
  const ops::OpId reducer = reducer_of(step.op->id);
  const ops::ValueType& input = *slot_type[size_t(step.inputs[0])];
  const DType dtype = input.dtype;
  if (reducer == ops::OpId::Identity || dtype != step.out_dtypes[0] ||
      !input.shape.is_fully_defined() || input.shape.num_elements() < 1 ||
      input.shape.num_elements() > kMaxFlatElements ||
      (is_floating(dtype) && input.shape.num_elements() >= ops::kInOrderReduceElements) ||
      dtype_size(dtype) > step.reduce_init.size()) {
    return false;
  }
  step.scalar_kernel = ops::scalar_kernel(reducer, dtype, dtype);
  if (!step.scalar_kernel) return false;
  // The fold starts from the reduction of no elements (0 for a sum, the
  // lowest value for a max), which the kernel itself gives.
  static const ops::Attrs kAllAxes;
  static const Shape kNoElements{0};
  const ops::KernelInput empty{step.reduce_init.data(), &kNoElements, dtype};
  step.op->kernel({step.op->name,
                   {&empty, 1},
                   step.reduce_init.data(),
                   &step.static_shape,
                   dtype,
                   &kAllAxes,
                   nullptr});
  step.flat_reduce = true;
  step.flat_elements = int32_t(input.shape.num_elements());
  step.scalar_inputs.fill(step.inputs[0]);
  return true;
}

Plan::Plan(std::shared_ptr<const graph::Body> body, bool top_level, size_t donated_inputs)
    : body_(std::move(body)), num_donated_(donated_inputs), top_level_(top_level) {
  compile(arena_layout_, nullptr, -1);
  emit_program(program_);
  fuse_tests(program_);
  Instr end;
  end.code = Instr::Code::End;
  program_.push_back(end);
}

Plan::Plan(std::shared_ptr<const graph::Body> body, ArenaLayout& layout,
           std::vector<int32_t> input_slots, int32_t output_slot, std::vector<size_t> donated_bytes)
    : body_(std::move(body)),
      num_donated_(donated_bytes.size()),
      donated_bytes_(std::move(donated_bytes)),
      top_level_(false) {
  compile(layout, &input_slots, output_slot);
}

// A While runs inline when its loop variables have static shapes: each then
// keeps one buffer of its size for the whole loop, which the condition and
// body read in place and the body may write into without a capacity check.
bool Plan::runs_inline(const graph::Node& loop) {
  return std::all_of(loop.outputs.begin(), loop.outputs.end(),
                     [](const ops::ValueType& t) { return t.shape.is_fully_defined(); });
}

// 5c. Kernels' work done once per step (ops::PrepareFn).
// Needs: the steps' inputs and the plan's constants.
// Guarantees: an op step with a prepare function, all of whose inputs have
// static types, holds what it returned for those types, the constant
// inputs' data given (a loaded model's weights), in Step::prepared; its
// kernel gets it on every call.
void Plan::Compiler::prepare_kernels() {
  for (Step& step : plan.steps_) {
    if (step.kind != graph::NodeKind::Op || step.shape_only) continue;
    const ops::PrepareFn prepare = ops::prepare_fn(step.op->id);
    if (!prepare) continue;
    std::vector<ops::ValueType> types;
    std::vector<const void*> constants;
    for (int32_t in : step.inputs) {
      types.push_back(*slot_type[size_t(in)]);
      const Source& source = plan.sources_[size_t(in)];
      constants.push_back(source.kind == Source::Constant
                              ? plan.constants_[size_t(source.index)].raw_data()
                              : nullptr);
    }
    const bool static_types = std::all_of(types.begin(), types.end(),
                                          [](const auto& t) { return t.shape.is_fully_defined(); });
    if (static_types) step.prepared = prepare({step.op->name, types, *step.attrs, constants});
  }
}

void Plan::compile(ArenaLayout& layout, const std::vector<int32_t>* branch_inputs,
                   int32_t branch_output_slot) {
  Compiler compiler{*this, *body_, layout, branch_inputs, branch_output_slot, {}, {}, {}, -1};
  compiler.assign_slots();
  compiler.build_steps();
  mark_dead_initial_values();
  compiler.mark_shape_only_steps();
  mark_views();
  compiler.plan_memory();
  mark_static_copies();
  compiler.mark_output_aliasing();
  compiler.select_scalar_steps();
  compiler.prepare_kernels();
  compiler.keep_in_variables();
  compiler.plan_loop_copies();
  // The branches' and inline loops' buffers after this plan's.
  total_buffers_ = num_buffers_ + num_scratch_;
  for (Step& step : steps_) {
    if (step.kind != graph::NodeKind::If && !step.inline_loop) continue;
    for (auto& branch : step.subplans) {
      branch->relocate_buffers(int32_t(total_buffers_));
      total_buffers_ += branch->total_buffers_;
    }
  }
}

namespace {

// Whether a step of `plan` other than `except` reads `slot`.
bool read_by_another_step(const std::vector<Plan::Step>& steps, int32_t slot,
                          const Plan::Step* except) {
  return std::any_of(steps.begin(), steps.end(), [&](const Plan::Step& s) {
    return &s != except && std::find(s.inputs.begin(), s.inputs.end(), slot) != s.inputs.end();
  });
}

}  // namespace

// Whether output k of If step `branch_if` (slot `slot`) can be loop variable
// `var`'s memory for the whole loop: in each branch, output k is `var`
// passed through, or is computed in `slot` by a scalar step or a nested If
// for which this holds, the only reader of `var` in the branch (so `var`'s
// old value is read before it is overwritten, and by nothing after); and no
// other output is `var`. Collects the Ifs (with their output) and the
// scalar steps that write `slot`.
bool Plan::Compiler::if_output_in_variable(Step& branch_if, size_t k, int32_t var,
                                           std::vector<std::pair<Step*, size_t>>& ifs,
                                           std::vector<Step*>& writers) {
  const int32_t slot = branch_if.out_slot + int32_t(k);
  ifs.emplace_back(&branch_if, k);
  for (const auto& branch : branch_if.subplans) {
    Plan& b = *branch;
    for (size_t j = 0; j < b.outputs_.size(); ++j) {
      if (j != k && b.outputs_[j] == var) return false;
    }
    const int32_t out = b.outputs_[k];
    if (out == var) continue;  // passed through
    const Source& src = b.sources_[size_t(out)];
    if (out != slot || src.kind != Source::Step) return false;
    Step& writer = b.steps_[size_t(src.index)];
    if (read_by_another_step(b.steps_, var, &writer)) return false;
    if (writer.kind == graph::NodeKind::If) {
      if (!if_output_in_variable(writer, size_t(slot - writer.out_slot), var, ifs, writers))
        return false;
    } else if (writer.scalar_kernel && writer.flat_elements == 0 && !writer.flat_reduce) {
      writers.push_back(&writer);
    } else {
      return false;
    }
  }
  return true;
}

// 5b. Loop variables' slots.
// Needs: the inline loops' bodies and their Ifs' branches compiled (scalar
// steps selected, in-place writes planned).
// Guarantees: an inline While's slots_in_variables lists the body's slots
// that are a static loop variable's memory from LoopEnter on: the output of
// a scalar step that writes the variable in place, and an If output that is
// the variable's next value where each branch passes the variable through or
// computes it last (if_output_in_variable) and no other step of the body
// reads the variable (nor is it a body output). Their writers are
// output_in_variable, the Ifs' output_variables name the variable (their
// branches move nothing for it), and no copy ends an iteration for it.
void Plan::Compiler::keep_in_variables() {
  for (Step& loop : plan.steps_) {
    if (!loop.inline_loop) continue;
    Plan& loop_body = *loop.subplans[1];
    const auto in_variable = [&](size_t k) {
      return loop.var_static_shapes[k] != nullptr && !loop.keeps_in_row(k);
    };
    for (Step& step : loop_body.steps_) {
      if (!step.scalar_kernel || step.write_into_input < 0) continue;
      const auto k = size_t(step.write_into_input);
      if (!in_variable(k)) continue;
      step.output_in_variable = true;
      loop.slots_in_variables.push_back({step.out_slot, loop.out_slot + int32_t(k)});
    }
    for (size_t k = 0; k < loop.buffers.size(); ++k) {
      const int32_t var = loop.out_slot + int32_t(k);
      const int32_t out = loop_body.outputs_[k];
      const Source& src = loop_body.sources_[size_t(out)];
      if (!in_variable(k) || src.kind != Source::Step ||
          std::count(loop_body.outputs_.begin(), loop_body.outputs_.end(), var) > 0 ||
          std::any_of(loop.slots_in_variables.begin(), loop.slots_in_variables.end(),
                      [&](const Step::SlotInVariable& s) { return s.slot == out; })) {
        continue;
      }
      Step& branch_if = loop_body.steps_[size_t(src.index)];
      std::vector<std::pair<Step*, size_t>> ifs;
      std::vector<Step*> writers;
      if (branch_if.kind != graph::NodeKind::If ||
          read_by_another_step(loop_body.steps_, var, &branch_if) ||
          !if_output_in_variable(branch_if, size_t(out - branch_if.out_slot), var, ifs, writers)) {
        continue;
      }
      for (auto [step, output] : ifs) {
        if (step->output_variables.empty()) step->output_variables.assign(step->buffers.size(), -1);
        step->output_variables[output] = var;
      }
      for (Step* writer : writers) writer->output_in_variable = true;
      loop.slots_in_variables.push_back({out, var});
    }
  }
}

// 5c. Inline loops' copies.
// Needs: the memory plan (phase 3: the While's scratch buffers) and the
// body's output aliasing (its phase 4).
// Guarantees: an inline While's loop_copies list, in variable order, each
// variable whose body output is not in its memory already (passed through,
// or written there by the step that computes it); a copy whose output may
// be another variable's memory is held aside in the variable's scratch
// buffer first.
void Plan::Compiler::plan_loop_copies() {
  for (Step& step : plan.steps_) {
    if (!step.inline_loop) continue;
    const Plan& loop_body = *step.subplans[1];
    for (size_t k = 0; k < step.buffers.size(); ++k) {
      const int32_t var = step.out_slot + int32_t(k);
      const Source& src = loop_body.sources_[size_t(loop_body.outputs_[k])];
      // (A variable kept in an array's row moves with the step writing it;
      // one written in place is output 0, the one a step writes into its input.)
      const auto in_variable = [&](const Step::SlotInVariable& s) {
        return s.slot == loop_body.outputs_[k] && s.var == var;
      };
      if (loop_body.outputs_[k] == var || step.keeps_in_row(k) ||
          std::any_of(step.slots_in_variables.begin(), step.slots_in_variables.end(),
                      in_variable) ||
          (src.kind == Source::Step &&
           loop_body.steps_[size_t(src.index)].write_into_input == int32_t(k) &&
           loop_body.steps_[size_t(src.index)].out_slot == loop_body.outputs_[k])) {
        continue;
      }
      const bool hold = loop_body.output_may_alias_input_[k];
      step.loop_copies.push_back({loop_body.outputs_[k], var, uint32_t(step.var_static_bytes[k]),
                                  hold ? step.first_scratch + int32_t(k) : -1});
      step.loop_holds_aside = step.loop_holds_aside || hold;
    }
  }
}

// 6. Program.
// Needs: phases 1 to 5 done for this plan, its branches and inline loops,
// and their buffers relocated (so, in an owning plan: they run in it).
// Guarantees: one instruction per step, in step order; a scalar or flat
// step's holds its kernel, slots, buffer and static shape. An If becomes a
// Branch on its predicate, the then branch's program and a Move per output
// (the If's output slot takes the branch output's value), a Jump past the
// else branch, then the else branch's program and its Moves. An inline
// While becomes a LoopEnter, the condition's program, a LoopTest on its
// output (to past the loop), the body's program and a LoopBack to the
// condition (a Jump when no variable needs a copy). Every instruction names
// its step (the If or While, for those they become) and the plan the step
// is of. An output the branch computed in the If's output slot needs no
// Move, nor does a loop variable passed through to the output that is its
// memory (Step::output_variables).
void Plan::emit_program(std::vector<Instr>& program) const {
  for (const Step& step : steps_) {
    Instr instr;
    instr.step = &step;
    instr.plan = this;
    if (step.inline_loop) {
      instr.code = Instr::Code::LoopEnter;
      const size_t enter_at = program.size();
      program.push_back(instr);
      const auto condition_at = int32_t(program.size());
      step.subplans[0]->emit_program(program);
      const size_t test_at = program.size();
      instr.code = Instr::Code::LoopTest;
      instr.in[0] = step.subplans[0]->outputs_[0];
      instr.buffer = step.loop_counter;
      program.push_back(instr);
      step.subplans[1]->emit_program(program);
      instr.code = step.loop_copies.empty() ? Instr::Code::Jump : Instr::Code::LoopBack;
      instr.target = condition_at;
      program.push_back(instr);
      program[test_at].target = int32_t(program.size());
      program[enter_at].target = int32_t(program.size());
      continue;
    }
    if (step.kind == graph::NodeKind::If) {
      auto emit_branch = [&](const Plan& branch) {
        branch.emit_program(program);
        for (size_t k = 0; k < branch.outputs_.size(); ++k) {
          if (branch.outputs_[k] == step.out_slot + int32_t(k)) continue;  // computed there
          // (Passed through: the variable's memory, which the slot is.)
          if (!step.output_variables.empty() && branch.outputs_[k] == step.output_variables[k])
            continue;
          Instr move = instr;
          move.code = Instr::Code::Move;
          move.out = step.out_slot + int32_t(k);
          move.in[0] = branch.outputs_[k];
          program.push_back(move);
        }
      };
      const size_t branch_at = program.size();
      instr.code = Instr::Code::Branch;
      instr.in[0] = step.inputs[0];
      program.push_back(instr);
      emit_branch(*step.subplans[0]);
      const size_t jump_at = program.size();
      instr.code = Instr::Code::Jump;
      program.push_back(instr);
      program[branch_at].target = int32_t(program.size());
      emit_branch(*step.subplans[1]);
      program[jump_at].target = int32_t(program.size());
      continue;
    }
    if (step.scalar_kernel) {
      // (A two-input op without a binary kernel reads its padded inputs as Scalar3.)
      constexpr Instr::Code kScalar[] = {Instr::Code::Scalar1, Instr::Code::Scalar2,
                                         Instr::Code::Scalar3};
      const size_t arity = step.inputs.size() == 2 && !step.binary_kernel ? 3 : step.inputs.size();
      instr.code = step.flat_reduce                   ? Instr::Code::Reduce
                   : step.flat_elements != 0          ? Instr::Code::Flat
                   : !step.writes_where_slot_points() ? Instr::Code::ScalarToBuffer
                   : step.constant_kernel             ? Instr::Code::Scalar2Constant
                                                      : kScalar[arity - 1];
      instr.kernel = step.scalar_kernel;
      instr.binary_kernel = step.binary_kernel;
      if (step.constant_kernel) {
        instr.binary_kernel = step.constant_kernel;
        instr.constant = &step.prepared_constant;
      }
      instr.flat_kernel = step.flat_kernel;
      instr.in = step.scalar_inputs;
      instr.out = step.out_slot;
      instr.buffer = step.writes_where_slot_points() ? Instr::kPinnedOutput
                     : step.write_into_input >= 0
                         ? Instr::in_place_at(step.inputs[size_t(step.in_place_operand)])
                     : step.buffers[0] >= 0 ? step.buffers[0]
                                            : Instr::kFreshOutput;
      instr.bytes = uint32_t(step.static_bytes);
      instr.shape = &step.static_shape;
    }
    program.push_back(instr);
  }
}

// A comparison right before the Branch or LoopTest (without a
// maximum_iterations) on its result also tests it (Scalar2Test): one
// dispatch less per If and per loop iteration. Not when a jump lands on the
// test (which would skip the comparison); the test stays in the program,
// stepped over.
void Plan::fuse_tests(std::vector<Instr>& program) {
  std::vector<bool> targeted(program.size() + 1, false);
  for (const Instr& instr : program) {
    if (instr.target >= 0) targeted[size_t(instr.target)] = true;
  }
  for (size_t i = 1; i < program.size(); ++i) {
    const Instr& test = program[i];
    Instr& compare = program[i - 1];
    const bool plain_test =
        test.code == Instr::Code::Branch || (test.code == Instr::Code::LoopTest && test.buffer < 0);
    if (plain_test && compare.code == Instr::Code::Scalar2 && compare.out == test.in[0] &&
        !targeted[i]) {
      compare.code = Instr::Code::Scalar2Test;
      compare.target = test.target;
    }
  }
}

void Plan::relocate_buffers(int32_t delta) {
  for (Step& step : steps_) {
    for (int32_t& b : step.buffers) {
      if (b >= 0) b += delta;
    }
    if (step.first_scratch >= 0) step.first_scratch += delta;
    for (Step::LoopCopy& copy : step.loop_copies) {
      if (copy.scratch >= 0) copy.scratch += delta;
    }
    if (step.kind == graph::NodeKind::If || step.inline_loop) {
      for (auto& branch : step.subplans) branch->relocate_buffers(delta);
    }
  }
}

Plan::~Plan() {
  delete cached_arena_.load(std::memory_order_acquire);
}

size_t Plan::num_steps() const {
  return steps_.size();
}

template <class PerStep>
size_t Plan::sum_over_all_steps(const PerStep& per_step) const {
  size_t sum = 0;
  for (const Step& step : steps_) {
    sum += size_t(per_step(step));
    for (const auto& sub : step.subplans) sum += sub->sum_over_all_steps(per_step);
  }
  return sum;
}

namespace {

bool is_scalar_step(const Plan::Step& s) {
  return s.scalar_kernel != nullptr && s.flat_elements == 0;
}

bool is_flat_step(const Plan::Step& s) {
  return s.flat_elements > 0 || (s.fused && s.fused->flat);
}

}  // namespace

size_t Plan::num_scalar_steps() const {
  return size_t(std::count_if(steps_.begin(), steps_.end(), is_scalar_step));
}

size_t Plan::num_scalar_steps_in_all_plans() const {
  return sum_over_all_steps(is_scalar_step);
}

size_t Plan::num_flat_steps() const {
  return size_t(std::count_if(steps_.begin(), steps_.end(), is_flat_step));
}

size_t Plan::num_flat_steps_in_all_plans() const {
  return sum_over_all_steps(is_flat_step);
}

size_t Plan::num_shape_only_steps() const {
  return size_t(
      std::count_if(steps_.begin(), steps_.end(), [](const Step& s) { return s.shape_only; }));
}

size_t Plan::num_buffers_in_all_plans() const {
  size_t count = num_buffers_;
  for (const Step& step : steps_) {
    for (const auto& sub : step.subplans) count += sub->num_buffers_in_all_plans();
  }
  return count;
}

size_t Plan::num_steps_in_all_plans() const {
  return sum_over_all_steps([](const Step&) { return true; });
}

size_t Plan::num_fused_steps_in_all_plans() const {
  return sum_over_all_steps([](const Step& s) { return s.fused != nullptr; });
}

size_t Plan::num_row_views() const {
  return sum_over_all_steps([](const Step& s) { return s.row_view; });
}

size_t Plan::num_strided_views() const {
  return sum_over_all_steps([](const Step& s) { return s.row_view && s.view_axis > 0; });
}

size_t Plan::num_uncopied_loop_variables() const {
  return sum_over_all_steps([](const Step& s) {
    return std::count(s.initial_value_dead.begin(), s.initial_value_dead.end(), 1);
  });
}

size_t Plan::num_row_outputs() const {
  return sum_over_all_steps([](const Step& s) { return s.row_output != nullptr; });
}

size_t Plan::num_interchanged_loops() const {
  return sum_over_all_steps([](const Step& s) { return s.interchanged != nullptr; });
}

size_t Plan::num_static_copies() const {
  return sum_over_all_steps([](const Step& s) { return s.static_copy != nullptr; });
}

size_t Plan::num_inline_loops() const {
  return sum_over_all_steps([](const Step& s) { return s.inline_loop; });
}

size_t Plan::num_child_arena_loops() const {
  return sum_over_all_steps(
      [](const Step& s) { return s.kind == graph::NodeKind::While && !s.inline_loop; });
}

size_t Plan::num_slots_in_variables() const {
  return sum_over_all_steps([](const Step& s) { return s.slots_in_variables.size(); });
}

size_t Plan::num_in_place_steps() const {
  return sum_over_all_steps([](const Step& s) { return s.write_into_input >= 0; });
}

}  // namespace ag::exec
