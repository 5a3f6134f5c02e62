// The executor. A Body is compiled once into a flat Plan: a list of steps,
// each a kernel pointer with the slots it reads and writes, plus a memory
// plan that lets values with disjoint lifetimes share buffers. A step whose
// inputs and output are static scalars (loop counters, conditions) calls the
// op's scalar kernel directly, without a KernelContext or dtype dispatch,
// into memory its slot points at for the arena's life (no pointer or shape
// stored per step); on a static vector of a few elements it calls the op's
// flat kernel, the same functor in a loop over the elements (and an integer
// reduction of such a vector folds the elements with its reducer's scalar
// kernel). Running a plan
// walks the steps only: no graph walking, no hashing, and no allocation
// beyond the buffers (kept in an arena between calls) and the returned
// tensors. An If's branches are plans whose slots and buffers lie in their
// parent's arena: a branch reads its inputs from the parent's slots, nothing
// is bound, and its steps run inline in the parent's program (the steps as
// compact instructions, an If as a conditional jump). So do a While's
// condition and body when all its loop variables have static shapes (an
// inline loop: a backward jump in the parent's program, the variables' slots
// bound once); any other While runs its condition and body plans in child
// arenas, so a loop iteration allocates nothing either (a loop variable that
// grows, like a dynamic TensorArray, is reallocated with spare room, O(log n)
// times). An If's outputs are not copied: they stay where its branch left
// them. A While owns its loop variables; its body may write into them in
// place (TensorArray writes, elementwise updates), and a variable may live
// in the rows of a TensorArray variable that its updates are written to
// (plan_views.cpp); a loop that does only that, over exactly the array's
// rows, runs batch-major (plan_interchange.cpp). A top-level inline loop's
// variable that is a function output lives in the output's fresh tensor.
//
// Compiling is plan_compile.cpp, running plan_run.cpp; the structures both
// share are in plan_internal.h.
//
// Needs: a Body whose nodes are in topological (and program) order, with one
// placeholder per input. Guarantees: outputs equal what eager execution of
// the same ops gives; stateful steps run in program order on every call;
// unknown dims are resolved from the actual values on each call.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "ag/tensor.h"
#include "graph/graph.h"
#include "ops/op_registry.h"

namespace ag::exec {

class Plan {
 public:
  // A top-level plan returns fresh tensors; a nested plan (branch or loop
  // body) leaves its outputs in its arena for the parent step to read.
  // The plan keeps `body` alive: its steps point at the nodes' attributes.
  // A nested plan may overwrite its first `donated_inputs` inputs in place
  // (a While body's loop variables, which the While owns).
  explicit Plan(std::shared_ptr<const graph::Body> body, bool top_level = true,
                size_t donated_inputs = 0);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // `inputs` has one tensor per placeholder of the body; `outputs` receives
  // one tensor per output. Safe to call from several threads at once.
  void run(std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) const;

  // The body this plan runs: the optimised graph, fused nodes and all.
  const std::shared_ptr<const graph::Body>& body() const { return body_; }

  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return outputs_.size(); }
  size_t num_steps() const;
  // The same, summed over this plan and its nested plans; and how many of
  // those are fused steps (a Fused node's program).
  size_t num_steps_in_all_plans() const;
  size_t num_fused_steps_in_all_plans() const;
  // How many of them are scalar steps (see above).
  size_t num_scalar_steps() const;
  // The same, summed over this plan and its nested plans.
  size_t num_scalar_steps_in_all_plans() const;
  // How many are flat steps: an elementwise op (or a fused group without a
  // reduction) on a static vector of a few elements, run as its flat
  // kernel(s), or an integer or bool reduction of such a vector
  // to one element, run as its reducer's scalar kernel folded over them.
  size_t num_flat_steps() const;
  size_t num_flat_steps_in_all_plans() const;
  // How many steps compute only their value's shape, because nothing reads
  // its elements (a range that only gives a loop its length).
  size_t num_shape_only_steps() const;
  // How many buffers the memory plan uses for intermediate values.
  size_t num_buffers() const { return num_buffers_; }
  // The same, summed over this plan and its nested plans.
  size_t num_buffers_in_all_plans() const;
  // How many steps, here and in nested plans, write into a loop variable's
  // memory instead of a buffer (a TensorArray write, or an elementwise op on
  // the variable, in a While body). For tests: the While's donation of its
  // loop variables is otherwise invisible.
  size_t num_in_place_steps() const;
  // How many slots of inline loops' bodies are a loop variable's memory for
  // the whole loop (a scalar step's output written into the variable in
  // place, an If's output that is the variable's next value), so that their
  // steps store no pointer and no copy ends an iteration for them.
  size_t num_slots_in_variables() const;
  // How many steps, here and in nested plans, are views read where they
  // are, without a copy (plan_views.cpp): rows x[i], and slices x[:, i, :]
  // read strided, which num_strided_views counts alone.
  size_t num_row_views() const;
  size_t num_strided_views() const;
  // How many While loop variables, here and in nested plans, start without
  // a copy of their initial value because the loop overwrites them whole
  // before reading them (plan_views.cpp).
  size_t num_uncopied_loop_variables() const;
  // How many steps, in nested plans, write their result straight into a
  // row of a loop's TensorArray, where a loop variable then lives
  // (plan_views.cpp).
  size_t num_row_outputs() const;
  // How many inline While steps, here and in nested plans, run in the other
  // loop order: a recurrence kept in an array's rows, computed one run
  // position at a time along all the rows (plan_interchange.cpp).
  size_t num_interchanged_loops() const;
  // How many steps, here and in nested plans, copy runs of bytes fixed when
  // compiling instead of calling their kernel (plan_views.cpp): small
  // transposes of static shapes, and TensorArray writes in place in an
  // inline loop's body.
  size_t num_static_copies() const;
  // How many While steps, here and in nested plans, run inline in their
  // parent's program (see above), and how many in child arenas.
  size_t num_inline_loops() const;
  size_t num_child_arena_loops() const;

  // A value as nested plans exchange it. `capacity` is how many bytes a
  // nested plan may write at `data` when the input is donated to it (a While
  // body's loop variable), and 0 otherwise.
  struct View {
    const void* data;
    const Shape* shape;
    size_t capacity = 0;
  };
  struct Step;
  struct Instr;
  struct Arena;
  std::unique_ptr<Arena> new_arena() const;
  // Binds inputs first, first + 1, ... of a loop's condition or body to
  // `inputs`. They keep these values until bound again: a While binds its
  // captured values once and a loop variable whenever it changes.
  void bind(Arena& arena, std::span<const View> inputs, size_t first) const;
  View output_view(const Arena& arena, size_t k) const;

 private:
  // The sum of per_step(step) over the steps of this plan and of every nested
  // plan (the counters above).
  template <class PerStep>
  size_t sum_over_all_steps(const PerStep& per_step) const;

  struct Compiler;  // the compilation phases, plan_compile.cpp
  // The slots and child arenas of one arena, handed out while a plan and
  // its If branches (which share its arena) are compiled.
  struct ArenaLayout {
    int32_t num_slots = 0;
    size_t num_children = 0;
    size_t num_loop_counters = 0;  // inline loops with a maximum_iterations
  };
  // An If branch, or an inline loop's condition or body: its slots come
  // after `layout`'s, its inputs are the parent's `input_slots`, and its
  // buffers are numbered from 0 until relocate_buffers moves them after the
  // parent's. A branch's If outputs are the parent's slots from
  // `output_slot` on (a value the branch computes as output k may be
  // computed in the If's slot k); a loop's plans have no output_slot (-1).
  // An inline body may overwrite its first inputs, the loop variables, whose
  // buffers hold `donated_bytes` each.
  Plan(std::shared_ptr<const graph::Body> body, ArenaLayout& layout,
       std::vector<int32_t> input_slots, int32_t output_slot,
       std::vector<size_t> donated_bytes = {});
  void compile(ArenaLayout& layout, const std::vector<int32_t>* branch_inputs,
               int32_t branch_output_slot);
  // Whether a While node's condition and body can run inline in its
  // parent's program (plan_compile.cpp).
  static bool runs_inline(const graph::Node& loop);
  void relocate_buffers(int32_t delta);
  // Sets the constants' slots, points the pinned outputs' slots at their
  // memory (from arena.pinned[pinned_used] on) and creates the child arenas
  // of this plan and of its branches.
  void init_arena(Arena& arena, size_t& pinned_used) const;
  // How many elements of Arena::pinned the pinned outputs of this plan and
  // of its branches take.
  size_t pinned_size() const;
  struct Source {
    enum Kind : uint8_t { Input, Constant, Step } kind;
    int32_t index;  // input number, constant number, or step number
  };
  std::unique_ptr<Arena> acquire_arena() const;
  void release_arena(std::unique_ptr<Arena> arena) const;
  Tensor materialize(Arena& arena, int32_t slot) const;
  // Appends this plan's steps to `program`, with its If branches' inline.
  void emit_program(std::vector<Instr>& program) const;
  static void fuse_tests(std::vector<Instr>& program);
  // Runs the program: this plan's steps and its branches'.
  void run_steps(Arena& a) const;
  void run_general_step(Arena& a, const Step& step) const;
  // A step that reads or writes a variable, or calls a host function.
  void run_host_step(Arena& a, const Step& step) const;
  // A scalar or flat step's output that is a top-level output: a fresh
  // tensor, held in its slot.
  void* fresh_output(Arena& a, const Step& step) const;
  void run_op(Arena& a, const Step& step) const;
  // Whether the plan may write into input `input` (see donated_bytes_).
  bool is_donated(int32_t input) const {
    return size_t(input) < num_donated_ &&
           (donated_bytes_.empty() || donated_bytes_[size_t(input)] > 0);
  }
  // How many bytes a step may write into donated input `input`.
  size_t donated_capacity(const Arena& a, int32_t input) const;
  void run_while(Arena& a, const Step& step) const;
  // An inline loop's entry (its variables' initial values into their
  // buffers) and its update at the end of an iteration.
  void enter_loop(Arena& a, const Step& step) const;
  void update_loop_variables(Arena& a, const Step& step) const;
  void run_fused(Arena& a, const Step& step) const;  // plan_fused.cpp
  void* fused_output(Arena& a, const Step& step, size_t index, const Shape*& shape) const;
  void fill_fused_broadcasts(Arena& a, const Step& step, char* scratch) const;
  // Loop variables overwritten whole (plan_views.cpp): marked after the
  // steps are built, before the shape-only steps.
  void mark_dead_initial_values();
  // Row views (plan_views.cpp): marked after the shape-only steps, before
  // the memory plan.
  void mark_views();
  void mark_strided_view(Step& gather);
  bool reads_strided(const Step& step) const;
  void keep_rows_in_arrays(Step& loop);
  // Loops run in the other order (plan_interchange.cpp): marked after the
  // rows kept in arrays; run from the loop's entry.
  void interchange_loop(Step& loop);
  void run_interchanged(Arena& a, const Step& loop) const;
  void run_row_view(Arena& a, const Step& step) const;
  // Static copies (plan_views.cpp): marked after the memory plan; run in
  // place of the kernel, false when the step must run its kernel instead (a
  // TensorArray write's index out of range, for the kernel's error).
  void mark_static_copies();
  bool run_static_copy(Arena& a, const Step& step) const;
  // Where a step with a RowOutput writes: its array's row at the index.
  void* array_row(const Arena& a, const Step& step, const ops::KernelInput* kin) const;
  // Stores `v` as the value of `slot`, copying into the slot's buffer.
  // With `grow`, a buffer that must be enlarged gets spare room (a loop
  // variable that grows every iteration, like a dynamic TensorArray). A
  // `static_shape` (which v has) is used instead of a copy of v's shape.
  void store(Arena& a, int32_t slot, int32_t buffer, View v, bool grow = false,
             const Shape* static_shape = nullptr) const;

  std::shared_ptr<const graph::Body> body_;
  std::vector<Step> steps_;
  // What run_steps walks; an owning plan's (a branch's steps are in its
  // parent's).
  std::vector<Instr> program_;
  std::vector<Source> sources_;       // per slot
  std::vector<DType> slot_dtypes_;    // per slot
  std::vector<Tensor> constants_;     // Const node values
  std::vector<int32_t> outputs_;      // slot of each output
  std::vector<int32_t> input_slots_;  // slot of each input
  size_t num_donated_ = 0;            // inputs the plan may write into
  // An inline loop body: per donated input, the bytes its buffer holds (a
  // static loop variable's size), instead of Arena::input_capacity. An If
  // branch in such a body: per input, those bytes when it is donated, else 0
  // (Compiler::donated_to_branches).
  std::vector<size_t> donated_bytes_;
  // Per output: the inputs whose memory it may be, and whether one is an
  // input other than the same-numbered one (see run_while).
  std::vector<std::vector<int32_t>> output_inputs_;
  std::vector<uint8_t> output_may_alias_input_;
  bool any_output_may_alias_input_ = false;
  size_t num_inputs_ = 0;
  size_t num_buffers_ = 0;
  size_t num_scratch_ = 0;  // While steps' scratch buffers, after num_buffers_
  // Buffers of this plan and its branches: its own, then the scratch, then
  // each branch's, in step order.
  size_t total_buffers_ = 0;
  ArenaLayout arena_layout_;  // the arena's slots and children (an owning plan)
  bool top_level_ = true;
  // Arenas between calls: one in a lock-free slot (the usual single caller
  // takes and returns it with one atomic exchange each), more in the pool.
  mutable std::atomic<Arena*> cached_arena_{nullptr};
  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<Arena>> pool_;
};

}  // namespace ag::exec
