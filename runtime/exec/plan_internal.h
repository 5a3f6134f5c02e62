// The data structures of a Plan, shared by compiling it (plan_compile.cpp)
// and running it (plan_run.cpp): a Step is what compiling decided about one
// node; an Arena is the state of one call. Internal to the executor.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "core/tensor_impl.h"
#include "exec/plan.h"
#include "graph/small_vector.h"
#include "graph/variable_state.h"
#include "ops/kernels.h"

namespace ag::exec {

constexpr size_t kMaxScalarInputs = 3;  // where(c, x, y)
using ops::kMaxFlatElements;

// A fused step's block (plan_fused.cpp): 1024 elements, so that a block of
// float32 is 4 KiB, a chain's live blocks fit in a 32 KiB L1, and a kernel
// call costs little next to its loop.
constexpr int64_t kBlockElements = 1024;
// A fused step without scratch blocks (each stage reads the node's inputs
// and writes its output or a partial result, as MSE's composed sum does)
// streams its inputs in blocks this large: nothing needs to stay in L1, and
// each block boundary costs about 70 ns (MSE over 1e6 floats: 17% over the
// hand loop at 1024, 5.6% at 16384, 2.2% at 65536). Still 16 blocks of
// 1e6 elements to split over the intra-op threads.
constexpr int64_t kStreamBlockElements = 65536;
// A fused float sum adds each block in this many lanes (sum_block).
constexpr int64_t kFusedSumLanes = 16;

// A Fused node compiled (plan_fused.cpp): its members as calls of their ops'
// kernels on one block of elements at a time.
struct FusedProgram {
  struct Operand {
    bool external;  // the node's input `index`, else member `index`'s block
    bool scalar;    // an external single element, broadcast
    int32_t index;
  };
  // Inline up to an elementwise op's operand count: a program has a member
  // (and a stage) per fused node, so no heap block each.
  using Operands = graph::SmallVector<Operand, kMaxScalarInputs>;
  struct Member {
    const graph::Node* node;  // for the "defined at" of its errors
    const ops::OpDef* op;
    const ops::Attrs* attrs;
    DType dtype;
    Operands operands;
    int32_t block = -1;  // its scratch block; -1: the node's output
    // A flat program's: the op's flat kernel, for its dtypes; per operand
    // (padded with the first), the slot of the node's input it is or -1 for
    // the scratch at byte flat_offsets[i], and its stride in bytes; the
    // output's scratch offset (-1: the node's output). Fixed when the
    // program is compiled.
    ops::FlatKernelFn flat_kernel = nullptr;
    std::array<int32_t, kMaxScalarInputs> flat_slots{};
    std::array<uint32_t, kMaxScalarInputs> flat_offsets{};
    std::array<uint32_t, kMaxScalarInputs> flat_strides{};
    int64_t flat_out_offset = -1;
  };
  std::vector<Member> members;
  // A trailing reduction over all axes of the last member, or null; a mean
  // runs as a sum, divided at the end.
  const ops::OpDef* reduction = nullptr;
  bool mean = false;
  // The node's output 0 is the last member's value, written like an
  // unreduced program's, and output 1 the reduction of it.
  bool keeps_value = false;
  // A float sum (or mean): each block is summed by the fused kernel's own
  // loop (plan_fused.cpp, sum_block), the partial sums by the kernel.
  bool float_sum = false;
  int64_t num_elements = 0;                 // per member
  int64_t block_elements = kBlockElements;  // or kStreamBlockElements
  size_t block_bytes = 0;                   // one scratch block
  size_t num_blocks = 0;                    // scratch blocks (members' values reuse them)
  size_t scratch_bytes = 0;  // the blocks, then one partial result per block of elements
  // At most kMaxFlatElements elements and no reduction: each member runs as
  // a flat step (its flat kernel) instead of a kernel call.
  bool flat = false;
  // The loops that run per block, in order (plan_fused.cpp, compose): a
  // stage runs one member with its kernel, or several members composed into
  // one loop over the block's operands that writes the value of `member`
  // (with `sums`, the block's float sum: its partial result).
  // `reduced`: where a stage that folds writes the block's partial result;
  // `flags`: the stage's, for the choices its loop makes at run time.
  using ComposedFn = void (*)(const void* const* operands, int64_t n, void* out, void* reduced,
                              uint32_t flags);
  struct Stage {
    int32_t member;
    ComposedFn composed = nullptr;  // null: the member's kernel
    // The composed loop's operands; an external scalar's `index` is its
    // block in `broadcasts`.
    Operands operands;
    bool sums = false;
    // Writes its value and also folds the block's partial result of the
    // program's reduction (an integer max or min) in its loop.
    bool folds = false;
    // Whose "defined at" the stage's errors carry: `member`, or in a composed
    // loop the one member in it that can fail (a mod's division by zero).
    int32_t error_member = -1;
    uint32_t flags = 0;  // passed to `composed`
    // Reads its external scalar operands where their slots hold them (one
    // element), not broadcast over a block: a guarded step, which a flat
    // program runs too.
    bool scalars_in_place = false;
  };
  std::vector<Stage> stages;
  // The external scalars composed loops read, broadcast over a block each
  // before the first block runs.
  std::vector<int32_t> broadcasts;
};

struct Plan::Step {
  graph::NodeKind kind = graph::NodeKind::Op;
  const graph::Node* node = nullptr;  // for the "defined at" of its errors
  const ops::OpDef* op = nullptr;
  const ops::Attrs* attrs = nullptr;
  std::vector<int32_t> inputs;  // slots
  int32_t out_slot = -1;        // first output slot; outputs are consecutive
  // Whether no other step writes them: not so for an If branch's step that
  // computes the If's outputs in their slots (use_if_output_slots), which
  // the other branch writes too.
  bool owns_slots = true;
  std::vector<DType> out_dtypes;
  Shape static_shape;  // Op steps: the output shape when fully known
  bool shape_is_static = false;
  // Op steps: the op's shape rule runs on the actual shapes when the step
  // runs. For an output of unknown shape, to learn it; for a static output
  // from an input with unknown dims, to reject the inputs eager mode rejects
  // (a [5] reshaped to [2,3], a [2] added to a [3]).
  bool runs_shape_rule = false;
  // Only the output's shape is read: the kernel does not run (see
  // mark_shape_only_steps in plan_compile.cpp).
  bool shape_only = false;
  size_t static_bytes = 0;  // the output's size when shape_is_static
  // What the op's prepare function made for this step (ops::PrepareFn;
  // KernelContext::prepared), or null.
  ops::PreparedKernel prepared;
  // Scalar steps (an elementwise op on static rank-0 values, written into a
  // buffer): the op's scalar kernel, called without a KernelContext, and its
  // input slots, padded with the first so that all are always read.
  ops::ScalarKernelFn scalar_kernel = nullptr;
  std::array<int32_t, kMaxScalarInputs> scalar_inputs{};
  // A scalar step of a two-input op: the same kernel, its inputs passed as
  // arguments (Instr::Code::Scalar2).
  ops::BinaryScalarKernelFn binary_kernel = nullptr;
  // Its kernel for its second input, a constant of this plan, prepared
  // (ops::binary_kernel_by_constant; Instr::Code::Scalar2Constant), or null.
  ops::BinaryScalarKernelFn constant_kernel = nullptr;
  ops::PreparedConstant prepared_constant;
  // Flat steps (the same on a static vector of up to kMaxFlatElements): the
  // op's flat kernel, the element count (0 for a scalar step), and each
  // input's stride in bytes (see ops::FlatKernelFn).
  ops::FlatKernelFn flat_kernel = nullptr;
  int32_t flat_elements = 0;
  std::array<uint32_t, kMaxScalarInputs> flat_strides{};
  // Flat reductions (an integer or bool vector of up to kMaxFlatElements
  // reduced to one element): scalar_kernel is the reducer's binary op (add
  // for a sum), folded over the flat_elements elements from `reduce_init`,
  // the reduction of no elements. Exact in any order, so the same as the
  // reduction kernel. Aligned for any element type: the kernel writes it.
  bool flat_reduce = false;
  alignas(8) std::array<unsigned char, 8> reduce_init{};
  // An in-place op whose input 0 is a loop variable this plan may overwrite
  // (a TensorArray write in a loop body): the number of that input, whose
  // memory the op writes into when its capacity allows; -1 otherwise.
  int32_t write_into_input = -1;
  // Which of the step's inputs that loop variable is (0 for a TensorArray
  // write; any same-shaped operand of an elementwise op).
  int32_t in_place_operand = 0;
  // A gather of one index run as a view, without a buffer (plan_views.cpp):
  // of the row for a leading index; of the slice x[:, i, :] for an index on
  // axis view_axis > 0, whose view starts view_index_bytes * i into x and
  // whose readers read it strided (strided_operand).
  bool row_view = false;
  int32_t view_axis = 0;
  int64_t view_index_bytes = 0;
  // Inputs read strided: per input, the elements between the starts of its
  // runs of strided_run elements, or 0 (contiguous). A binary elementwise
  // op's slice x[:, i, :] (strided view) is such an input; so is a loop
  // variable kept in a row of a TensorArray (row_output), for the op that
  // reads it and for the array's write.
  std::array<int64_t, kMaxScalarInputs> input_strides{};
  int64_t strided_run = 0;
  // A binary elementwise step in a loop body whose result is row i of a
  // TensorArray, a loop variable, and the next value of another loop
  // variable (dynamic_rnn's state; plan_views.cpp, keep_rows_in_arrays):
  // it writes the result straight into that row, strided (its runs
  // `stride` elements apart), and the other variable moves to the row.
  struct RowOutput {
    int32_t array;      // the array's slot
    int32_t index;      // the written index's slot, computed before this step
    int64_t size;       // rows
    int64_t row_bytes;  // from row i to row i + 1
    int64_t stride;     // elements from a run of the row to its next
    int32_t variable;   // the slot of the variable that moves to the row
    int32_t operand;    // the input that is that variable
  };
  std::unique_ptr<RowOutput> row_output;
  // A step run as copies of runs of bytes fixed when compiling, not as its
  // kernel (plan_views.cpp, mark_static_copies). A transpose: the output's
  // runs, back to back, from the byte offsets `from` of its input. A
  // TensorArray write into its array in place: the value's `runs` runs into
  // row i of `rows`, which lie along the write's axis `run_bytes` apart (the
  // runs of a row `rows * run_bytes` apart).
  struct StaticCopy {
    size_t run_bytes = 0;
    std::vector<uint32_t> from;
    int64_t rows = 0;
    int64_t runs = 0;
    size_t element_bytes = 0;  // of the value, whose input_strides count elements
  };
  std::unique_ptr<StaticCopy> static_copy;
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
  // While: per loop variable, its size in bytes when static, else 0.
  std::vector<size_t> var_static_bytes;
  // While: per loop variable, whether the loop overwrites it whole before
  // reading it, so that its initial value is not copied in (plan_views.cpp).
  std::vector<uint8_t> initial_value_dead;
  // An inline While: the loop variables kept in a row of a TensorArray
  // variable (RowOutput), which have no buffer: each starts in row 0 of
  // the array, its initial value copied there as `outer` runs of
  // `run_bytes`, `stride_bytes` apart.
  struct VariableInRow {
    int32_t variable;
    int32_t array;
    int64_t outer;
    size_t run_bytes;
    size_t stride_bytes;
  };
  std::vector<VariableInRow> variables_in_rows;
  // An inline While run in the other loop order (plan_interchange.cpp):
  // its one variable kept in the rows of its array (variables_in_rows) is a
  // recurrence whose runs are independent, so the loop runs as one kernel
  // call per run position of the rows (a batch entry), each along all the
  // rows, instead of iteration by iteration.
  struct InterchangedLoop {
    const Step* op;                 // the recurrence: the body's step with the RowOutput
    int32_t counter, array, state;  // the loop variables
    int64_t rows;                   // the loop's iterations: the array's rows
    int64_t outer;                  // runs per row
    int64_t run;                    // elements per run
    int64_t array_per_run;          // elements from a run of a row to the next
    // The op's other operand: its slot (where it starts, at i = 0) and
    // elements from one iteration's to the next (0: the same every
    // iteration) and from a run to the next.
    int32_t input_slot;
    int64_t input_per_iteration;
    int64_t input_per_run;
    Shape first_row, later_rows;  // of one run position: [run], [rows - 1, run]
  };
  std::unique_ptr<InterchangedLoop> interchanged;
  bool keeps_in_row(size_t variable) const {
    return std::any_of(
        variables_in_rows.begin(), variables_in_rows.end(),
        [variable](const VariableInRow& v) { return size_t(v.variable) == variable; });
  }
  // Fused: the members' program; its scratch is buffer first_scratch.
  std::unique_ptr<FusedProgram> fused;
  // An inline While (Plan::runs_inline): its condition and body run in the
  // parent's program and arena, reading the loop variables from the While's
  // output slots, which always hold the variables' own buffers.
  bool inline_loop = false;
  // Its iteration count in Arena::loop_iterations, when it has a
  // maximum_iterations; else -1.
  int32_t loop_counter = -1;
  // The copies that end an iteration: a body output that is not already in
  // its variable's buffer (written there in place, or passed through) is
  // copied into it. One that may be another variable's memory (x, y = y, x)
  // is first held aside in its scratch buffer, before any variable changes.
  struct LoopCopy {
    int32_t from;     // the body output's slot
    int32_t var;      // the loop variable's slot
    uint32_t bytes;   // its static size
    int32_t scratch;  // its scratch buffer, or -1
  };
  std::vector<LoopCopy> loop_copies;
  bool loop_holds_aside = false;  // some copy has a scratch buffer
  // An inline While: slots of its body (and of the body's Ifs) that point at
  // a static loop variable's memory for the whole loop, set by LoopEnter
  // (plan_compile.cpp, keep_in_variables): a step's output written into the
  // variable in place, and an If's output that is the variable's next value.
  // Steps writing them write there (output_in_variable), and the variable
  // needs no copy at the end of an iteration.
  struct SlotInVariable {
    int32_t slot;
    int32_t var;  // the loop variable's slot
  };
  std::vector<SlotInVariable> slots_in_variables;
  // If: per output, the loop variable whose memory the output's slot is
  // (see slots_in_variables), or -1 (empty: none): a branch passing that
  // variable through moves nothing.
  std::vector<int32_t> output_variables;
  // A scalar step whose output slot is a loop variable's memory (see
  // slots_in_variables): it writes there, like a pinned output.
  bool output_in_variable = false;

  // A scalar, flat or reduction step that writes neither a fresh tensor nor
  // a loop variable: its output lives in memory of its own in each arena
  // (Arena::pinned), which its slot points at from the arena's creation, so
  // running it stores no pointer and no shape (see Instr::kPinnedOutput).
  bool pinned_output() const {
    return scalar_kernel && write_into_input < 0 && buffers[0] >= 0 && owns_slots;
  }
  // Whether its slot points at its output's memory before it runs, so that
  // it writes there and stores nothing (Instr::kPinnedOutput).
  bool writes_where_slot_points() const { return pinned_output() || output_in_variable; }
};

// One instruction of a plan's program (plan_compile.cpp, emit_program): the
// plan's steps in order with its If branches' steps inline, so that running a
// plan, branches included, is one loop over a compact array. A scalar step's
// instruction holds all it reads; other steps are run from their Step.
struct Plan::Instr {
  // (In this order in run_steps's dispatch table, which ends with End.)
  enum class Code : uint8_t {
    // The step's scalar kernel on the 1, 2 or 3 slots `in`, into the memory
    // slot `out` points at (Step::writes_where_slot_points).
    Scalar1,
    Scalar2,  // (with the step's binary kernel)
    Scalar3,
    // Scalar2 whose bool result a Branch or LoopTest right after it tests:
    // on past the test if true, else to `target`.
    Scalar2Test,
    // Scalar2 on slot in[0] and the step's prepared constant (its
    // constant_kernel).
    Scalar2Constant,
    // The same for an output that is not pinned: into `buffer` (a buffer,
    // a fresh tensor or a loop variable), as slot `out`.
    ScalarToBuffer,
    Flat,     // the step's flat kernel on slots `in` (a flat step)
    Reduce,   // a flat reduction: the reducer's kernel folded over slot in[0]
    General,  // any other step: run_step
    Branch,   // an If: on to the then branch if slot in[0] is true, else to `target`
    Jump,     // to `target` (past the else branch)
    Move,     // an If's output `out` takes the value of the branch's output in[0]
    // An inline While: LoopEnter, the condition's program, LoopTest, the
    // body's program, LoopBack.
    // The loop variables take their initial values; slots_in_variables
    // point at them. A loop run interchanged runs whole, then on to
    // `target`, past the loop.
    LoopEnter,
    LoopTest,  // on to the body if slot in[0] is true (and iterations remain), else to `target`
    LoopBack,  // the loop variables take the body's outputs; back to the condition, `target`
               // (a Jump when the body leaves every variable in its memory)
    End,       // the program's last instruction
  };
  Code code = Code::General;
  int32_t out = -1;
  int32_t target = -1;
  // A scalar, flat or reduction step's output: its buffer (>= 0);
  // kPinnedOutput, the memory its slot points at already
  // (Step::writes_where_slot_points); kFreshOutput, a fresh tensor; below that,
  // in_place_at(slot): the memory of `slot`, a loop variable it overwrites
  // (an inline loop body's step). (A LoopTest's is its loop's iteration
  // counter, or -1.)
  int32_t buffer = kFreshOutput;
  static constexpr int32_t kPinnedOutput = -1;
  static constexpr int32_t kFreshOutput = -2;
  static constexpr int32_t in_place_at(int32_t slot) { return kFreshOutput - 1 - slot; }
  int32_t in_place_slot() const { return kFreshOutput - 1 - buffer; }
  uint32_t bytes = 0;  // a scalar step's output size
  std::array<int32_t, kMaxScalarInputs> in{};
  ops::ScalarKernelFn kernel = nullptr;
  ops::BinaryScalarKernelFn binary_kernel = nullptr;  // Scalar2's, Scalar2Test's, Scalar2Constant's
  const void* constant = nullptr;                     // Scalar2Constant's second input
  ops::FlatKernelFn flat_kernel = nullptr;            // a flat step's
  const Shape* shape = nullptr;                       // a scalar step's static output shape
  const Step* step = nullptr;  // for Branch, Jump and Move: the If; for Loop*: the While
  // The plan the step is of (an If branch, for its steps): a General step
  // runs as its member, which reads that plan's slot types and sources.
  const Plan* plan = nullptr;
};

// A While that writes every row of its TensorArray variable k before
// anything reads it (plan_views.cpp): the body's only read of the array is
// one write at the index of a counter variable that starts at 0 and steps by
// 1, the write's result is read only as the array's next value, and the
// condition is `counter < bound`, bound at least the array's `size` (rows
// along the write's axis), without reading the array.
struct RowsLoop {
  size_t counter;
  int64_t bound;
  int64_t size;
};
std::optional<RowsLoop> loop_writing_every_row(const graph::Body& parent, const graph::Node& w,
                                               size_t k);
// Whether `index`, in a While's `body`, is the loop counter `j` itself, or
// element j of a constant 0, 1, 2, ... (a materialised range) of at least
// `size` elements: the counter cast to int32 (an int32 range without its
// gathers, passes/range_loops.cpp) is the counter while the indices up to
// `size` fit.
bool is_counter(const graph::Body& body, graph::ValueRef index, size_t j, int64_t size);

// Compiles a Fused node whose inputs have the types `input_types` and are
// read from `input_slots`.
std::unique_ptr<FusedProgram> compile_fused(const graph::Node& node,
                                            std::span<const ops::ValueType* const> input_types,
                                            std::span<const int32_t> input_slots);

// Rethrows an error of `node` with where the user's code defined it, as
// TensorFlow's "defined at". If, While and Fused steps pass their nested
// errors on as they are: the failing node inside has said where it is.
[[noreturn]] void rethrow_defined_at(const Error& e, const graph::Node& node);

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
  std::vector<View> updates;             // scratch for a While's new loop variables
  std::vector<int64_t> loop_iterations;  // per inline loop with a maximum_iterations
  // The pinned outputs' memory (Step::pinned_output), sized when the arena
  // is made and never moved: their slots point into it.
  std::vector<std::max_align_t> pinned;

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

using graph::through_identity;

inline size_t byte_size(const Shape& shape, DType dtype) {
  return size_t(shape.num_elements()) * dtype_size(dtype);
}

}  // namespace ag::exec
