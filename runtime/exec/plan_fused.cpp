// Compiling and running a Fused node (passes/fusion.cpp): its members run
// block by block. For each block of kBlockElements elements (a program
// without scratch blocks: kStreamBlockElements), each member
// calls its op's own kernel (the same function eager mode and the other
// steps call, so the arithmetic is written once and gives the same bits) on
// that block: a vectorised loop over a few KiB that stays in L1, with the
// dispatch paid once per block instead of once per element. Intermediate
// blocks live in the step's scratch buffer, reused once a member's value is
// read for the last time; the last member writes its block straight into the
// output. A trailing reduction over all axes reduces each block to a partial
// result with its own kernel (a float sum with a loop of its own, with more
// lanes), then the partial results with the same kernel: integers give
// exactly the unfused result, floating-point sums and products differ from
// it only by reassociation (docs/benchmarks.md, "Fusion").
// A program of at most kMaxFlatElements elements without a reduction (a
// small loop state) runs flat instead: each member's flat kernel (the same
// functor as its kernel's, in a loop over the elements) without a
// KernelContext.
// Stages (compose): a member whose value only one other member reads may run
// in that member's loop instead of writing a block of its own, from a fixed
// set of pairs: add/sub/mul into add/sub/mul (MSE's (a - b) * (a - b), its
// sum in sum_block's lanes and order; 3 * x + 1, an integer product with a
// broadcast power of two or sum of two as shifts), and a comparison into the
// where it is the condition of (no bool block), with an integer mod by a
// broadcast scalar that the comparison reads (x % 2 == 0), and the quotient
// of that division if the where selects it (x // 2); and a where that
// guards such a division step of one vector with scalars, collatz's
// where(x > 1, where(x % 2 == 0, x // 2, 3 * x + 1), x), all nine members
// in one loop that reads x once. The same functors
// in the same order per element, so a composed stage gives the
// member-by-member bits. A where that gives the value an integer max or min
// reduces (a loop condition's maximum, the node's second output) folds each
// block's partial result in its loop.
// The blocks split over the intra-op threads (ops/parallel.h), each chunk of
// blocks with its own scratch blocks. The composed loops and the float
// block sums are in exec/fused_loops.cpp, compiled once per instruction set
// (ops/isa.h): the plan takes those of the CPU's when it is built.

#include <algorithm>
#include <bit>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "exec/fused_loops.h"
#include "exec/plan_internal.h"
#include "ops/parallel.h"
#include "ops/scalar_ops.h"

namespace ag::exec {

namespace {

const ops::Attrs& all_axes() {
  static const ops::Attrs attrs;  // no axes: reduce over all of them
  return attrs;
}

bool same_operand(const FusedProgram::Operand& p, const FusedProgram::Operand& q) {
  return p.external == q.external && p.scalar == q.scalar && p.index == q.index;
}

// A where of the program that guarded_division_step runs with its step.
struct GuardedStep {
  ops::OpId guard;  // greater, less or equal, x on the left
  uint32_t flags = 0;
  FusedProgram::Operands operands;  // x, g, s, r, t, e
  std::vector<int32_t> joined;      // the members it takes in
  int32_t error_member = -1;
};

// Whether the where member m is the root of a guarded_division_step: every
// other member in it read only by the next one in, x one operand that is
// not a scalar, the others broadcast scalars, all of the where's integer
// dtype. `dtype_of` gives an operand's dtype.
template <class DTypeOf>
std::optional<GuardedStep> match_guarded_step(const FusedProgram& program,
                                              std::span<const int32_t> reads, int32_t m,
                                              DTypeOf dtype_of) {
  using Operand = FusedProgram::Operand;
  using Member = FusedProgram::Member;
  using ops::OpId;
  const std::vector<Member>& members = program.members;
  const Member& where = members[size_t(m)];
  if (where.op->id != OpId::Where || !is_integer(where.dtype)) return std::nullopt;
  const DType dtype = where.dtype;
  GuardedStep step;
  // The member `op` names if `reader` makes all its reads and it is one of
  // `ids` (a member of the step).
  auto only_for = [&](const Operand& op, const Member& reader,
                      std::initializer_list<OpId> ids) -> const Member* {
    if (op.external) return nullptr;
    int32_t by_reader = 0;
    for (const Operand& o : reader.operands) by_reader += !o.external && o.index == op.index;
    const Member& member = members[size_t(op.index)];
    if (reads[size_t(op.index)] != by_reader ||
        std::find(ids.begin(), ids.end(), member.op->id) == ids.end()) {
      return nullptr;
    }
    step.joined.push_back(op.index);
    return &member;
  };
  auto scalar = [&](const Operand& op) {
    return op.external && op.scalar && dtype_of(op) == dtype;
  };
  // The non-scalar operand of a binary member whose other operand is a
  // scalar, and that scalar; side 0 when x is on the left.
  auto split = [&](const Member& binary, Operand& x, Operand& other) {
    for (int side = 0; side < 2; ++side) {
      const Operand& a = binary.operands[size_t(side)];
      const Operand& b = binary.operands[size_t(1 - side)];
      if (!scalar(a) && scalar(b) && dtype_of(a) == dtype) {
        x = a;
        other = b;
        return side;
      }
    }
    return -1;
  };

  const Member* guard = only_for(where.operands[0], where,
                                 {OpId::Greater, OpId::Less, OpId::GreaterEqual, OpId::LessEqual,
                                  OpId::Equal, OpId::NotEqual});
  Operand x, g;
  const int x_side = guard ? split(*guard, x, g) : -1;
  if (x_side < 0) return std::nullopt;
  // Cmp(x, g) with x on the left, then negated: x >= g is !(x < g).
  OpId cmp = guard->op->id;
  if (x_side == 1) {
    constexpr std::pair<OpId, OpId> kMirrored[] = {{OpId::Greater, OpId::Less},
                                                   {OpId::Less, OpId::Greater},
                                                   {OpId::GreaterEqual, OpId::LessEqual},
                                                   {OpId::LessEqual, OpId::GreaterEqual}};
    for (auto [from, to] : kMirrored) {
      if (cmp == from) {
        cmp = to;
        break;
      }
    }
  }
  bool negated = cmp == OpId::GreaterEqual || cmp == OpId::LessEqual || cmp == OpId::NotEqual;
  step.guard = cmp == OpId::GreaterEqual ? OpId::Less
               : cmp == OpId::LessEqual  ? OpId::Greater
               : cmp == OpId::NotEqual   ? OpId::Equal
                                         : cmp;
  // The where keeps x on one branch and steps on the other.
  int step_branch = same_operand(where.operands[2], x)   ? 1
                    : same_operand(where.operands[1], x) ? 2
                                                         : 0;
  if (step_branch == 0) return std::nullopt;
  negated = negated != (step_branch == 2);
  const Member* inner = only_for(where.operands[size_t(step_branch)], where, {OpId::Where});
  const Member* test =
      inner ? only_for(inner->operands[0], *inner, {OpId::Equal, OpId::NotEqual}) : nullptr;
  if (!test) return std::nullopt;
  // x mod s == r, either side.
  const int mod_side = test->operands[0].external ? 1 : 0;
  const Operand& r = test->operands[size_t(1 - mod_side)];
  const Member* mod =
      scalar(r) ? only_for(test->operands[size_t(mod_side)], *test, {OpId::Mod}) : nullptr;
  Operand mod_x, s;
  if (!mod || split(*mod, mod_x, s) != 0 || !same_operand(mod_x, x)) return std::nullopt;
  // The quotient x // s on one branch of the inner where, x * t +- e on the other.
  const Member* div = nullptr;
  int div_branch = 0;
  for (int branch = 1; branch <= 2 && !div; ++branch) {
    div = only_for(inner->operands[size_t(branch)], *inner, {OpId::FloorDiv});
    div_branch = branch;
  }
  if (!div || !same_operand(div->operands[0], x) || !same_operand(div->operands[1], s)) {
    return std::nullopt;
  }
  const Member* sum =
      only_for(inner->operands[size_t(3 - div_branch)], *inner, {OpId::Add, OpId::Sub});
  Operand product_operand, e;
  const int product_side = sum ? split(*sum, product_operand, e) : -1;
  const Member* product =
      product_side >= 0 ? only_for(product_operand, *sum, {OpId::Mul}) : nullptr;
  Operand product_x, t;
  if (!product || split(*product, product_x, t) < 0 || !same_operand(product_x, x)) {
    return std::nullopt;
  }
  const bool quotient_where_unequal = (test->op->id == OpId::NotEqual) != (div_branch == 2);
  step.flags =
      (negated ? kStepWhereGuardFails : 0) | (quotient_where_unequal ? kQuotientWhereUnequal : 0) |
      (div - members.data() < mod - members.data() ? kQuotientFirst : 0) |
      (sum->op->id == OpId::Sub ? product_side == 0 ? kProductMinusAddend : kAddendMinusProduct
                                : 0);
  step.error_member = int32_t(std::min(div - members.data(), mod - members.data()));
  step.operands = {x, g, s, r, t, e};
  return step;
}

// The state shared by compose's phases: the members' reads, which members
// run alone or are taken in, and the stage being built for one member.
struct Composer {
  using Member = FusedProgram::Member;
  using Operand = FusedProgram::Operand;
  using Stage = FusedProgram::Stage;

  FusedProgram& program;
  std::span<const ops::ValueType* const> input_types;
  const bool flat;
  std::vector<Member>& members;
  const int32_t last;
  std::vector<int32_t> reads;  // per member: how many operands read it
  // Per member: its stage runs it alone (not composed, not taken in by a
  // later stage); taken_in: a later stage runs it. Flags rather than
  // searches of `stages`, so that composing stays linear in the members.
  std::vector<bool> alone, taken_in;
  Stage stage{};                // the stage being built
  std::vector<int32_t> joined;  // the members whose stages it takes in

  Composer(FusedProgram& p, std::span<const ops::ValueType* const> types, bool flat_program)
      : program(p),
        input_types(types),
        flat(flat_program),
        members(p.members),
        last(int32_t(p.members.size()) - 1),
        reads(p.members.size(), 0),
        alone(p.members.size(), false),
        taken_in(p.members.size(), false) {
    for (const Member& m : members) {
      for (const Operand& op : m.operands) {
        if (!op.external) ++reads[size_t(op.index)];
      }
    }
  }

  DType dtype_of(const Operand& op) const {
    return op.external ? input_types[size_t(op.index)]->dtype : members[size_t(op.index)].dtype;
  }
  // Whether `reader` makes every read of the member `op` names, which runs
  // alone: its loop can then run in reader's.
  bool joinable(const Operand& op, const Member& reader) const {
    if (op.external) return false;
    int32_t by_reader = 0;
    for (const Operand& o : reader.operands) by_reader += !o.external && o.index == op.index;
    return reads[size_t(op.index)] == by_reader && alone[size_t(op.index)];
  }

  void add_stage(int32_t m);
  ops::OpId where_fold(int32_t m) const;
  void compose_where(int32_t m);
  void compose_compare_select(const Member& where, const Member& compare, ops::OpId fold);
  void compose_divmod_compare_select(const Member& where, const Member& compare,
                                     const Operand& mod_operand, int side, ops::OpId fold);
  void compose_arithmetic_pair(int32_t m);
  void drop_taken_in();
  void broadcast_scalars();
};

// Member m's stage: composed with the members it takes in, or m alone.
void Composer::add_stage(int32_t m) {
  const Member& member = members[size_t(m)];
  stage = Stage{m, nullptr, {}, false, false, m, 0, false};
  joined.clear();
  if (member.op->id == ops::OpId::Where) {
    compose_where(m);
  } else if (!flat && member.operands.size() == 2 && dtype_of(member.operands[0]) == member.dtype) {
    compose_arithmetic_pair(m);
  }
  if (stage.composed) {
    // Their members run in this stage.
    for (int32_t j : joined) {
      alone[size_t(j)] = false;
      taken_in[size_t(j)] = true;
    }
  } else {
    stage.operands.clear();
    stage.sums = false;
    stage.folds = false;
    stage.flags = 0;
  }
  alone[size_t(m)] = !stage.composed;
  program.stages.push_back(std::move(stage));
}

// The last member's where folds an integer max or min of its values: that
// reduction, else kCount.
ops::OpId Composer::where_fold(int32_t m) const {
  const Member& member = members[size_t(m)];
  const ops::OpId reduction = program.reduction ? program.reduction->id : ops::OpId::kCount;
  return m == last && is_integer(member.dtype) &&
                 (reduction == ops::OpId::ReduceMax || reduction == ops::OpId::ReduceMin)
             ? reduction
             : ops::OpId::kCount;
}

// A where: the root of a guarded step, or the where of a comparison read
// only as its condition.
void Composer::compose_where(int32_t m) {
  const Member& member = members[size_t(m)];
  const ops::OpId fold = where_fold(m);
  stage.folds = fold != ops::OpId::kCount;
  if (auto guarded = match_guarded_step(program, reads, m,
                                        [this](const Operand& op) { return dtype_of(op); })) {
    stage.composed =
        isa_fused_loops().guarded_division_step_for(member.dtype, guarded->guard, fold);
    stage.operands = std::move(guarded->operands);
    stage.flags = guarded->flags;
    stage.error_member = guarded->error_member;
    stage.scalars_in_place = true;
    joined = std::move(guarded->joined);
  }
  const Operand& condition = member.operands[0];
  const Member* first = !flat && !stage.composed && joinable(condition, member)
                            ? &members[size_t(condition.index)]
                            : nullptr;
  if (first && first->operands.size() == 2 && dtype_of(first->operands[0]) == member.dtype)
    compose_compare_select(member, *first, fold);
}

// The comparison `compare`, the condition of `where`, in the where's loop:
// with a mod by a broadcast scalar that only the comparison reads (all
// three in one loop), else alone.
void Composer::compose_compare_select(const Member& where, const Member& compare, ops::OpId fold) {
  const Operand& condition = where.operands[0];
  for (int side = 0; side < 2 && !stage.composed; ++side) {
    const Operand& operand = compare.operands[size_t(side)];
    if (!joinable(operand, compare)) continue;
    const Member& mod = members[size_t(operand.index)];
    if (mod.op->id != ops::OpId::Mod || !mod.operands[1].external || !mod.operands[1].scalar) {
      continue;
    }
    compose_divmod_compare_select(where, compare, operand, side, fold);
    if (stage.composed) break;
    stage.composed =
        isa_fused_loops().mod_compare_select_for(where.dtype, compare.op->id, side == 0, fold);
    if (!stage.composed) continue;
    stage.operands = {mod.operands[0], mod.operands[1], compare.operands[size_t(1 - side)],
                      where.operands[1], where.operands[2]};
    stage.error_member = operand.index;  // the only member here that can fail
    joined = {condition.index, operand.index};
  }
  if (!stage.composed) {
    stage.composed = isa_fused_loops().compare_select_for(where.dtype, compare.op->id, fold);
    stage.operands = {compare.operands[0], compare.operands[1], where.operands[1],
                      where.operands[2]};
    joined = {condition.index};
  }
}

// And the quotient of the mod's division, if the where selects it and
// nothing else reads it (collatz: x // 2 where x % 2 == 0).
void Composer::compose_divmod_compare_select(const Member& where, const Member& compare,
                                             const Operand& mod_operand, int side, ops::OpId fold) {
  const Operand& condition = where.operands[0];
  const Member& mod = members[size_t(mod_operand.index)];
  for (int branch = 1; branch <= 2 && !stage.composed; ++branch) {
    const Operand& selected = where.operands[size_t(branch)];
    if (!joinable(selected, where)) continue;
    const Member& div = members[size_t(selected.index)];
    if (div.op->id != ops::OpId::FloorDiv || !same_operand(div.operands[0], mod.operands[0]) ||
        !same_operand(div.operands[1], mod.operands[1])) {
      continue;
    }
    stage.composed = isa_fused_loops().divmod_compare_select_for(
        where.dtype, compare.op->id, branch == 1, selected.index < mod_operand.index, fold);
    if (!stage.composed) continue;
    stage.operands = {mod.operands[0], mod.operands[1], compare.operands[size_t(1 - side)],
                      where.operands[size_t(3 - branch)]};
    // Both fail together (a zero divisor): the first in order.
    stage.error_member = std::min(selected.index, mod_operand.index);
    joined = {condition.index, mod_operand.index, selected.index};
  }
}

// An add, sub or mul read only by member m, an add, sub or mul of the same
// dtype: v in a register, or an integer product with a broadcast scalar by
// scaled_pair.
void Composer::compose_arithmetic_pair(int32_t m) {
  const Member& member = members[size_t(m)];
  const bool left = joinable(member.operands[0], member);
  const Operand* read = left                                   ? &member.operands[0]
                        : joinable(member.operands[1], member) ? &member.operands[1]
                                                               : nullptr;
  const Member* first = read ? &members[size_t(read->index)] : nullptr;
  if (!first || first->operands.size() != 2 || first->dtype != member.dtype ||
      dtype_of(first->operands[0]) != member.dtype) {
    return;
  }
  const Operand& other = left ? member.operands[1] : member.operands[0];
  const bool both = !other.external && other.index == read->index;
  const SecondForm form = both ? SecondForm::kBoth : left ? SecondForm::kLeft : SecondForm::kRight;
  stage.sums = m == last && program.float_sum && !program.keeps_value;
  // kBoth's third operand is not read.
  const Operand& third = both ? first->operands[0] : other;
  // An integer product with a broadcast scalar (either side: integer
  // products commute exactly).
  const int scalar_side = first->op->id != ops::OpId::Mul ? -1
                          : first->operands[1].scalar     ? 1
                          : first->operands[0].scalar     ? 0
                                                          : -1;
  if (scalar_side >= 0) {
    stage.composed = isa_fused_loops().scaled_pair_for(member.dtype, member.op->id, form);
    stage.operands = {first->operands[size_t(1 - scalar_side)],
                      first->operands[size_t(scalar_side)], third};
  }
  if (!stage.composed) {
    stage.composed = isa_fused_loops().arithmetic_pair_for(member.dtype, first->op->id,
                                                           member.op->id, form, stage.sums);
    stage.operands = {first->operands[0], first->operands[1], third};
  }
  joined = {read->index};
}

void Composer::drop_taken_in() {
  std::erase_if(program.stages,
                [&](const FusedProgram::Stage& s) { return taken_in[size_t(s.member)]; });
}

// The scalars the final stages read broadcast (not those of stages a
// guarded step took in): each external scalar's operand names its block in
// program.broadcasts instead of its input.
void Composer::broadcast_scalars() {
  // Per external input, its block in program.broadcasts or -1.
  std::vector<int32_t> broadcast_of(input_types.size(), -1);
  auto stage_operand = [&](const Operand& op) {
    if (!op.external || !op.scalar) return op;
    int32_t& block = broadcast_of[size_t(op.index)];
    if (block < 0) {
      block = int32_t(program.broadcasts.size());
      program.broadcasts.push_back(op.index);
    }
    return Operand{true, true, block};
  };
  for (FusedProgram::Stage& s : program.stages) {
    if (!s.composed || s.scalars_in_place) continue;
    for (Operand& op : s.operands) op = stage_operand(op);
  }
}

// Groups the members into stages (FusedProgram::Stage). A member whose
// every read is by the next stage's member m, and which runs alone, joins
// m's loop when the pair is one the composed loops cover: an add, sub or
// mul read by an add, sub or mul of the same dtype (v in a register; MSE's
// (a - b) * (a - b), 3 * x + 1: an integer product with a broadcast scalar
// by scaled_pair), or a comparison read only as the condition
// of a where over its operands' dtype (collatz's where(x > 1, ...)), with
// the mod by a broadcast integer that only the comparison reads, if one is
// its operand (collatz's where(x % 2 == 0, ...): three members in one loop),
// and with the quotient of the same division if the where selects it and
// the comparison is an equality (x // 2: four members in one loop). A where
// that match_guarded_step finds takes in its whole step (the stages the
// step's members formed until then): nine members in one loop.
// Every other member is a stage of its own, run by its kernel. A `flat`
// program (run_flat_members) composes only guarded steps, which read their
// scalars in place; its other members run as flat steps.
void compose(FusedProgram& program, std::span<const ops::ValueType* const> input_types, bool flat) {
  Composer composer(program, input_types, flat);
  for (int32_t m = 0; m <= composer.last; ++m) composer.add_stage(m);
  composer.drop_taken_in();
  composer.broadcast_scalars();
}

// A flat program (a few elements, no reduction): each stage over all
// elements (they fit one block), a member as its flat step or a guarded
// step's composed loop. `current` is the member whose errors it raises.
void run_flat_members(const Plan::Arena& a, const Plan::Step& step, char* scratch, void* out,
                      const FusedProgram::Member*& current) {
  const FusedProgram& program = *step.fused;
  const auto n = int32_t(program.num_elements);
  const void* const* const data = a.data.data();
  for (const FusedProgram::Stage& stage : program.stages) {
    const FusedProgram::Member& m = program.members[size_t(stage.member)];
    current = &program.members[size_t(stage.error_member)];
    void* block_out = m.flat_out_offset >= 0 ? scratch + m.flat_out_offset : out;
    if (stage.composed) {
      const void* in[kMaxComposedOperands];
      for (size_t i = 0; i < stage.operands.size(); ++i) {
        const FusedProgram::Operand& op = stage.operands[i];
        in[i] = op.external ? data[size_t(step.inputs[size_t(op.index)])]
                            : scratch + size_t(program.members[size_t(op.index)].block) *
                                            program.block_bytes;
      }
      stage.composed(in, n, block_out, nullptr, stage.flags);
      continue;
    }
    const void* in[kMaxScalarInputs];
    for (size_t i = 0; i < kMaxScalarInputs; ++i) {
      in[i] = m.flat_slots[i] >= 0 ? data[size_t(m.flat_slots[i])] : scratch + m.flat_offsets[i];
    }
    m.flat_kernel(in, m.flat_strides.data(), n, block_out);
  }
  current = nullptr;
}

// Where a flat program's members read and write, and with which strides
// (see FusedProgram::Member), once its blocks are placed.
void place_flat_operands(FusedProgram& program, std::span<const ops::ValueType* const> input_types,
                         std::span<const int32_t> input_slots) {
  for (FusedProgram::Member& m : program.members) {
    for (size_t i = 0; i < kMaxScalarInputs; ++i) {
      const FusedProgram::Operand& op = m.operands[i < m.operands.size() ? i : 0];
      if (op.external) {
        m.flat_slots[i] = input_slots[size_t(op.index)];
        m.flat_strides[i] =
            op.scalar ? 0 : uint32_t(dtype_size(input_types[size_t(op.index)]->dtype));
      } else {
        const FusedProgram::Member& source = program.members[size_t(op.index)];
        m.flat_slots[i] = -1;
        m.flat_offsets[i] = uint32_t(size_t(source.block) * program.block_bytes);
        m.flat_strides[i] = uint32_t(dtype_size(source.dtype));
      }
    }
    m.flat_out_offset = m.block >= 0 ? int64_t(size_t(m.block) * program.block_bytes) : -1;
  }
}

}  // namespace

std::unique_ptr<FusedProgram> compile_fused(const graph::Node& node,
                                            std::span<const ops::ValueType* const> input_types,
                                            std::span<const int32_t> input_slots) {
  const graph::Body& sub = *node.subgraphs[0];
  auto program = std::make_unique<FusedProgram>();
  std::vector<int32_t> external_of(sub.nodes.size(), -1), member_of(sub.nodes.size(), -1);
  for (size_t k = 0; k < sub.placeholders.size(); ++k) {
    external_of[size_t(sub.placeholders[k])] = int32_t(k);
  }
  const graph::Node* last = nullptr;
  for (size_t i = 0; i < sub.nodes.size(); ++i) {
    const graph::Node& n = sub.nodes[i];
    if (n.kind == graph::NodeKind::Placeholder) continue;
    const ops::OpDef& def = ops::op_def(n.op);
    if (!(def.flags & ops::kElementwise)) {  // the trailing reduction
      program->mean = n.op == ops::OpId::ReduceMean;
      program->reduction = program->mean ? &ops::op_def(ops::OpId::ReduceSum) : &def;
      program->num_elements = sub.type_of(n.inputs[0]).shape.num_elements();
      continue;
    }
    FusedProgram::Member member{&n, &def, &n.attrs, n.outputs[0].dtype, {}, -1};
    for (graph::ValueRef in : n.inputs) {
      int32_t external = external_of[size_t(in.node)];
      if (external >= 0) {
        bool scalar = input_types[size_t(external)]->shape.num_elements() == 1 &&
                      !(n.outputs[0].shape.num_elements() == 1);
        member.operands.push_back({true, scalar, external});
      } else {
        member.operands.push_back({false, false, member_of[size_t(in.node)]});
      }
    }
    member_of[i] = int32_t(program->members.size());
    program->members.push_back(std::move(member));
    last = &n;
  }
  if (!program->reduction) program->num_elements = last->outputs[0].shape.num_elements();
  program->keeps_value = sub.outputs.size() == 2;

  std::vector<FusedProgram::Member>& members = program->members;
  const DType value_dtype = members.back().dtype;
  program->float_sum = program->reduction && program->reduction->id == ops::OpId::ReduceSum &&
                       (value_dtype == DType::float32 || value_dtype == DType::float64);
  if (!program->reduction && program->num_elements <= kMaxFlatElements) {
    program->flat = true;
    for (FusedProgram::Member& m : members) {
      const FusedProgram::Operand& first = m.operands[0];
      DType input = first.external ? input_types[size_t(first.index)]->dtype
                                   : members[size_t(first.index)].dtype;
      m.flat_kernel = ops::flat_kernel(m.op->id, input, m.dtype);
      program->flat = program->flat && m.flat_kernel;
    }
  }
  compose(*program, input_types, program->flat);

  // Scratch blocks: every stage but an unreduced last one (or one that sums
  // its block) writes its member's block, which is free again after the
  // last stage that reads it.
  auto stage_reads = [&](const FusedProgram::Stage& stage) -> const FusedProgram::Operands& {
    return stage.composed ? stage.operands : members[size_t(stage.member)].operands;
  };
  const std::vector<FusedProgram::Stage>& stages = program->stages;
  std::vector<size_t> last_read(members.size(), 0);
  size_t widest = 1;
  for (size_t s = 0; s < stages.size(); ++s) {
    widest = std::max(widest, dtype_size(members[size_t(stages[s].member)].dtype));
    for (const FusedProgram::Operand& op : stage_reads(stages[s])) {
      if (!op.external) last_read[size_t(op.index)] = s;
    }
  }
  std::vector<int32_t> free_blocks;
  std::vector<bool> released(members.size(), false);  // its block is free again
  for (size_t s = 0; s < stages.size(); ++s) {
    FusedProgram::Member& member = members[size_t(stages[s].member)];
    bool writes_output = s + 1 == stages.size() && (!program->reduction || program->keeps_value);
    if (!writes_output && !stages[s].sums) {
      if (free_blocks.empty()) free_blocks.push_back(int32_t(program->num_blocks++));
      member.block = free_blocks.back();
      free_blocks.pop_back();
    }
    for (const FusedProgram::Operand& op : stage_reads(stages[s])) {
      // Read last here (an operand read twice frees its block once).
      if (!op.external && last_read[size_t(op.index)] == s &&
          members[size_t(op.index)].block >= 0 && !released[size_t(op.index)]) {
        released[size_t(op.index)] = true;
        free_blocks.push_back(members[size_t(op.index)].block);
      }
    }
  }
  for (int32_t external : program->broadcasts) {
    widest = std::max(widest, dtype_size(input_types[size_t(external)]->dtype));
  }
  if (program->num_blocks == 0 && program->broadcasts.empty()) {
    program->block_elements = kStreamBlockElements;
  }
  program->block_bytes = size_t(program->block_elements) * widest;
  size_t partials = 0;
  if (program->reduction) {
    size_t count =
        size_t((program->num_elements + program->block_elements - 1) / program->block_elements);
    partials = count * dtype_size(value_dtype);
  }
  program->scratch_bytes =
      (program->broadcasts.size() + program->num_blocks) * program->block_bytes + partials;
  if (program->flat) place_flat_operands(*program, input_types, input_slots);
  return program;
}

namespace {

// The shape of a scalar operand or result.
const Shape kScalar;

// The reduction of the blocks' partial results into `reduced_out`; a mean
// divides the sum as kernel_reduce_mean does (integers truncate).
void reduce_partials(const FusedProgram& program, const char* partials, int64_t num_blocks,
                     DType value_dtype, DType reduced_dtype, void* reduced_out) {
  const Shape partial_shape{num_blocks};
  ops::KernelInput reduced{partials, &partial_shape, value_dtype};
  program.reduction->kernel({program.reduction->name,
                             {&reduced, 1},
                             reduced_out,
                             &kScalar,
                             reduced_dtype,
                             &all_axes(),
                             nullptr});
  if (!program.mean) return;
  // The element count is at least 1 (fusion takes no empty shapes).
  visit_dtype(reduced_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (!std::is_same_v<T, bool>) {
      T* result = static_cast<T*>(reduced_out);
      *result = T(*result / T(program.num_elements));
    }
  });
}

}  // namespace

// Output `index` of a fused step: into its planned buffer, or a fresh tensor
// the arena holds (`shape` then points to the tensor's shape).
void* Plan::fused_output(Arena& a, const Step& step, size_t index, const Shape*& shape) const {
  if (step.buffers[index] >= 0) {
    return a.reserve(step.buffers[index],
                     index == 0 ? step.static_bytes : dtype_size(step.out_dtypes[index]));
  }
  Tensor& held = a.holders[size_t(step.out_slot) + index];
  held = detail::make_eager(step.out_dtypes[index], *shape);
  shape = &held.shape();
  return held.raw_mutable_data();
}

// Each broadcast input repeated over one block, shared by every chunk.
void Plan::fill_fused_broadcasts(Arena& a, const Step& step, char* scratch) const {
  const FusedProgram& program = *step.fused;
  for (size_t b = 0; b < program.broadcasts.size(); ++b) {
    const int32_t slot = step.inputs[size_t(program.broadcasts[b])];
    visit_dtype(slot_dtypes_[size_t(slot)], [&](auto v) {
      using T = decltype(v);
      T* block = reinterpret_cast<T*>(scratch + b * program.block_bytes);
      std::fill_n(block, std::min(program.block_elements, program.num_elements),
                  *static_cast<const T*>(a.data[size_t(slot)]));
    });
  }
}

void Plan::run_fused(Arena& a, const Step& step) const {
  const FusedProgram& program = *step.fused;
  const DType out_dtype = step.out_dtypes[0];
  const Shape* out_shape = &step.static_shape;
  // Block by block, each block's inputs are read before it is written.
  void* out =
      step.write_into_input >= 0 && step.static_bytes <= donated_capacity(a, step.write_into_input)
          ? const_cast<void*>(a.data[size_t(step.inputs[size_t(step.in_place_operand)])])
          : fused_output(a, step, 0, out_shape);
  if (program.flat) {
    auto* scratch = static_cast<char*>(a.reserve(step.first_scratch, program.scratch_bytes));
    const FusedProgram::Member* current = nullptr;
    try {
      run_flat_members(a, step, scratch, out, current);
    } catch (const Error& e) {
      if (!current) throw;
      rethrow_defined_at(e, *current->node);
    }
    a.data[size_t(step.out_slot)] = out;
    a.shape[size_t(step.out_slot)] = out_shape;
    return;
  }

  // The blocks split over the intra-op threads in contiguous chunks, each
  // chunk with its own member blocks after the shared broadcasts; each block
  // writes its own partial result, so the result does not depend on the
  // thread count.
  const int64_t block_elements = program.block_elements;
  const int64_t num_blocks = (program.num_elements + block_elements - 1) / block_elements;
  const int64_t max_chunks = intra_op_threads();
  const size_t broadcast_bytes = program.broadcasts.size() * program.block_bytes;
  const size_t chunk_bytes = program.num_blocks * program.block_bytes;
  const size_t partial_bytes = program.scratch_bytes - broadcast_bytes - chunk_bytes;
  auto* scratch = static_cast<char*>(a.reserve(
      step.first_scratch, broadcast_bytes + chunk_bytes * size_t(max_chunks) + partial_bytes));
  char* partials = scratch + broadcast_bytes + chunk_bytes * size_t(max_chunks);
  const DType value_dtype = program.members.back().dtype;  // what a reduction reduces
  fill_fused_broadcasts(a, step, scratch);
  // The last stage gave each block's partial result already.
  const bool last_reduces = program.stages.back().sums || program.stages.back().folds;
  // Output 1, the reduction, when output 0 is the value.
  void* reduced_out = out;
  const Shape* reduced_shape = out_shape;
  if (program.keeps_value) {
    reduced_shape = &step.node->outputs[1].shape;
    reduced_out = fused_output(a, step, 1, reduced_shape);
  }

  auto run_blocks = [&](int64_t chunk, int64_t begin, int64_t end) {
    char* blocks = scratch + broadcast_bytes + size_t(chunk) * chunk_bytes;
    ops::KernelInput in[kMaxComposedOperands];
    const void* composed_in[kMaxComposedOperands];
    const FusedProgram::Member* current = nullptr;
    try {
      for (int64_t block_index = begin; block_index < end; ++block_index) {
        const int64_t start = block_index * block_elements;
        const Shape block_shape{std::min(block_elements, program.num_elements - start)};
        char* partial = partials + size_t(block_index) * dtype_size(value_dtype);
        for (const FusedProgram::Stage& stage : program.stages) {
          const FusedProgram::Member& m = program.members[size_t(stage.member)];
          current = &program.members[size_t(stage.error_member)];
          void* block_out = stage.sums ? partial
                            : m.block >= 0
                                ? blocks + size_t(m.block) * program.block_bytes
                                : static_cast<char*>(out) + size_t(start) * dtype_size(out_dtype);
          if (stage.composed) {
            for (size_t i = 0; i < stage.operands.size(); ++i) {
              const FusedProgram::Operand& op = stage.operands[i];
              if (op.external && op.scalar) {
                composed_in[i] = stage.scalars_in_place
                                     ? a.data[size_t(step.inputs[size_t(op.index)])]
                                     : scratch + size_t(op.index) * program.block_bytes;
              } else if (op.external) {
                int32_t slot = step.inputs[size_t(op.index)];
                composed_in[i] = static_cast<const char*>(a.data[size_t(slot)]) +
                                 size_t(start) * dtype_size(slot_dtypes_[size_t(slot)]);
              } else {
                composed_in[i] =
                    blocks + size_t(program.members[size_t(op.index)].block) * program.block_bytes;
              }
            }
            stage.composed(composed_in, block_shape[0], block_out, partial, stage.flags);
            continue;
          }
          for (size_t i = 0; i < m.operands.size(); ++i) {
            const FusedProgram::Operand& op = m.operands[i];
            if (op.external) {
              int32_t slot = step.inputs[size_t(op.index)];
              DType dtype = slot_dtypes_[size_t(slot)];
              const char* data = static_cast<const char*>(a.data[size_t(slot)]);
              in[i] = op.scalar ? ops::KernelInput{data, &kScalar, dtype}
                                : ops::KernelInput{data + size_t(start) * dtype_size(dtype),
                                                   &block_shape, dtype};
            } else {
              const FusedProgram::Member& source = program.members[size_t(op.index)];
              in[i] = {blocks + size_t(source.block) * program.block_bytes, &block_shape,
                       source.dtype};
            }
          }
          m.op->kernel({m.op->name,
                        {in, m.operands.size()},
                        block_out,
                        &block_shape,
                        m.dtype,
                        m.attrs,
                        nullptr});
        }
        current = nullptr;
        if (!program.reduction || last_reduces) continue;
        const char* value =
            program.keeps_value
                ? static_cast<const char*>(out) + size_t(start) * dtype_size(out_dtype)
                : blocks + size_t(program.members.back().block) * program.block_bytes;
        if (program.float_sum) {
          if (value_dtype == DType::float32) {
            *reinterpret_cast<float*>(partial) = isa_fused_loops().sum_float_block(
                reinterpret_cast<const float*>(value), block_shape[0]);
          } else {
            *reinterpret_cast<double*>(partial) = isa_fused_loops().sum_double_block(
                reinterpret_cast<const double*>(value), block_shape[0]);
          }
        } else {
          ops::KernelInput reduced{value, &block_shape, value_dtype};
          program.reduction->kernel({program.reduction->name,
                                     {&reduced, 1},
                                     partial,
                                     &kScalar,
                                     value_dtype,
                                     &all_axes(),
                                     nullptr});
        }
      }
    } catch (const Error& e) {
      if (!current) throw;
      rethrow_defined_at(e, *current->node);
    }
  };
  ops::parallel_chunks(num_blocks, std::max<int64_t>(1, ops::kParallelGrain / block_elements),
                       max_chunks, run_blocks);

  if (program.reduction)
    reduce_partials(program, partials, num_blocks, value_dtype, step.out_dtypes.back(),
                    reduced_out);
  a.data[size_t(step.out_slot)] = out;
  a.shape[size_t(step.out_slot)] = out_shape;
  if (program.keeps_value) {
    a.data[size_t(step.out_slot) + 1] = reduced_out;
    a.shape[size_t(step.out_slot) + 1] = reduced_shape;
  }
}

}  // namespace ag::exec
