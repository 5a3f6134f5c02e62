// Compiling and running a Fused node (passes/fusion.cpp): its members run
// block by block. For each block of kBlockElements elements, each member
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
// small loop state) runs flat instead: each member's scalar kernel per
// element, the same functor as its kernel's, without a kernel call.
// A composed chain (two add/sub/mul members over floats, optionally summed:
// MSE's (a - b) * (a - b)) runs both members' functors in one loop per block
// instead, so the first member's value stays in a register: the same
// functors in the same order per element, and the sum in sum_block's lanes
// and order, so it gives the bits the member-by-member run gives.

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "exec/plan_internal.h"
#include "ops/parallel.h"
#include "ops/scalar_ops.h"

namespace ag::exec {

namespace {

const ops::Attrs& all_axes() {
  static const ops::Attrs attrs;  // no axes: reduce over all of them
  return attrs;
}

// A block's float sum of value(0), ..., value(n - 1): more independent
// lanes than the reduction kernel's eight, so that the block's additions do
// not wait on each other (four vector registers in flight). Only the order
// of the additions differs from the kernel's (the bound is in
// tests/runtime/pass_fusion_test.cpp).
template <class T, class Value>
T sum_values(int64_t n, Value value) {
  constexpr int64_t kLanes = kFusedSumLanes;
  if (n < kLanes) {
    T sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += value(i);
    return sum;
  }
  T lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = value(l);
  const int64_t body = n - n % kLanes;
  for (int64_t i = kLanes; i < body; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += value(i + l);
  }
  // Pairwise, so the lanes' sum is a short chain of vector additions;
  // unrolled, as it runs once per block.
#pragma GCC unroll 8
  for (int64_t width = kLanes / 2; width > 0; width /= 2) {
    for (int64_t l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  T sum = lanes[0];
  for (int64_t i = body; i < n; ++i) sum += value(i);
  return sum;
}

template <class T>
T sum_block(const T* x, int64_t n) {
  return sum_values<T>(n, [x](int64_t i) { return x[i]; });
}

// ---- Composed chains ----------------------------------------------------------

// Where the second member reads the first's value v: G(v, v), G(v, e) or
// G(e, v), e an outside value.
enum class SecondForm { kBoth, kLeft, kRight };

// v = F(a[i], b[i]), then G on v: per block, written to `out`, or (kSum)
// summed into *out. Scalar operands arrive broadcast over a block.
template <class T, class F, class G, SecondForm kForm, bool kSum>
void composed_chain(const void* const* operands, int64_t n, void* out) {
  const T* a = static_cast<const T*>(operands[0]);
  const T* b = static_cast<const T*>(operands[1]);
  const T* e = static_cast<const T*>(operands[2]);
  auto value = [a, b, e](int64_t i) {
    const T v = F{}(a[i], b[i]);
    if constexpr (kForm == SecondForm::kBoth) {
      return G{}(v, v);
    } else if constexpr (kForm == SecondForm::kLeft) {
      return G{}(v, e[i]);
    } else {
      return G{}(e[i], v);
    }
  };
  if constexpr (kSum) {
    *static_cast<T*>(out) = sum_values<T>(n, value);
  } else {
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = value(i);
  }
}

// Calls f with the functor of add, sub or mul; null for other ops.
template <class Then>
FusedProgram::ComposedFn with_arithmetic(ops::OpId id, Then then) {
  switch (id) {
    case ops::OpId::Add:
      return then(ops::scalar::AddOp{});
    case ops::OpId::Sub:
      return then(ops::scalar::SubOp{});
    case ops::OpId::Mul:
      return then(ops::scalar::MulOp{});
    default:
      return nullptr;
  }
}

template <class T>
FusedProgram::ComposedFn composed_for(ops::OpId first, ops::OpId second, SecondForm form,
                                      bool sum) {
  return with_arithmetic(first, [&](auto f) {
    return with_arithmetic(second, [&](auto g) -> FusedProgram::ComposedFn {
      using F = decltype(f);
      using G = decltype(g);
      auto pick = [&]<SecondForm kForm>() -> FusedProgram::ComposedFn {
        return sum ? &composed_chain<T, F, G, kForm, true> : &composed_chain<T, F, G, kForm, false>;
      };
      switch (form) {
        case SecondForm::kBoth:
          return pick.template operator()<SecondForm::kBoth>();
        case SecondForm::kLeft:
          return pick.template operator()<SecondForm::kLeft>();
        case SecondForm::kRight:
          break;
      }
      return pick.template operator()<SecondForm::kRight>();
    });
  });
}

// The composed loop of a program that is such a chain (see the file
// comment), else null.
FusedProgram::ComposedFn composed_program(const FusedProgram& program,
                                          std::span<const ops::ValueType* const> input_types) {
  if (program.members.size() != 2 || (program.reduction && !program.float_sum)) return nullptr;
  const FusedProgram::Member& first = program.members[0];
  const FusedProgram::Member& second = program.members[1];
  const DType dtype = first.dtype;
  if (first.operands.size() != 2 || second.operands.size() != 2 || second.dtype != dtype ||
      (dtype != DType::float32 && dtype != DType::float64)) {
    return nullptr;
  }
  for (const FusedProgram::Operand& op : first.operands) {
    if (input_types[size_t(op.index)]->dtype != dtype) return nullptr;
  }
  const bool left_is_first = !second.operands[0].external;
  const bool right_is_first = !second.operands[1].external;
  for (const FusedProgram::Operand& op : second.operands) {
    if (op.external && input_types[size_t(op.index)]->dtype != dtype) return nullptr;
  }
  const SecondForm form = left_is_first && right_is_first ? SecondForm::kBoth
                          : left_is_first                 ? SecondForm::kLeft
                                                          : SecondForm::kRight;
  return dtype == DType::float32
             ? composed_for<float>(first.op->id, second.op->id, form, program.float_sum)
             : composed_for<double>(first.op->id, second.op->id, form, program.float_sum);
}

// The composed chain's three operands: the first member's two, then the
// second member's outside one (or the first's again, unread). Scalars are
// broadcast over the scratch blocks first.
struct ComposedOperands {
  const FusedProgram::Operand* operand[3];
  const char* base[3];
  size_t element_size[3];
  bool advances[3];
};

ComposedOperands composed_operands(const Plan::Arena& a, const Plan::Step& step,
                                   std::span<const DType> slot_dtypes, char* scratch) {
  const FusedProgram& program = *step.fused;
  const FusedProgram::Member& second = program.members[1];
  const FusedProgram::Operand* outside =
      second.operands[0].external ? &second.operands[0] : &second.operands[1];
  ComposedOperands ops{{&program.members[0].operands[0], &program.members[0].operands[1],
                        outside->external ? outside : &program.members[0].operands[0]},
                       {},
                       {},
                       {}};
  size_t broadcast_block = 0;
  for (size_t i = 0; i < 3; ++i) {
    const int32_t slot = step.inputs[size_t(ops.operand[i]->index)];
    const size_t size = dtype_size(slot_dtypes[size_t(slot)]);
    const char* data = static_cast<const char*>(a.data[size_t(slot)]);
    ops.element_size[i] = size;
    ops.advances[i] = !ops.operand[i]->scalar;
    if (ops.advances[i]) {
      ops.base[i] = data;
      continue;
    }
    char* block = scratch + broadcast_block++ * program.block_bytes;
    for (int64_t k = 0; k < kBlockElements; ++k) std::memcpy(block + size_t(k) * size, data, size);
    ops.base[i] = block;
  }
  return ops;
}

// A flat program (a few elements, no reduction): each member as a flat
// step, member after member over all elements (they fit one block).
// `current` is the member running, for its errors.
void run_flat_members(const Plan::Arena& a, const Plan::Step& step,
                      std::span<const DType> slot_dtypes, char* scratch, void* out,
                      const FusedProgram::Member*& current) {
  const FusedProgram& program = *step.fused;
  const auto n = int32_t(program.num_elements);
  for (const FusedProgram::Member& m : program.members) {
    current = &m;
    const void* in[kMaxScalarInputs];
    uint32_t strides[kMaxScalarInputs];
    for (size_t i = 0; i < kMaxScalarInputs; ++i) {
      const FusedProgram::Operand& op = m.operands[i < m.operands.size() ? i : 0];
      if (op.external) {
        int32_t slot = step.inputs[size_t(op.index)];
        in[i] = a.data[size_t(slot)];
        strides[i] = op.scalar ? 0 : uint32_t(dtype_size(slot_dtypes[size_t(slot)]));
      } else {
        const FusedProgram::Member& source = program.members[size_t(op.index)];
        in[i] = scratch + size_t(source.block) * program.block_bytes;
        strides[i] = uint32_t(dtype_size(source.dtype));
      }
    }
    void* block_out = m.block >= 0 ? scratch + size_t(m.block) * program.block_bytes : out;
    run_flat(m.scalar_kernel, n, in, strides, block_out, uint32_t(dtype_size(m.dtype)));
  }
  current = nullptr;
}

}  // namespace

std::unique_ptr<FusedProgram> compile_fused(const graph::Node& node,
                                            std::span<const ops::ValueType* const> input_types) {
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

  // Scratch blocks: every member but an unreduced last one writes a block,
  // which is free again after the last member that reads it.
  std::vector<FusedProgram::Member>& members = program->members;
  std::vector<size_t> last_read(members.size(), 0);
  size_t widest = 1;
  for (size_t m = 0; m < members.size(); ++m) {
    widest = std::max(widest, dtype_size(members[m].dtype));
    for (const FusedProgram::Operand& op : members[m].operands) {
      if (!op.external) last_read[size_t(op.index)] = m;
    }
  }
  std::vector<int32_t> free_blocks;
  for (size_t m = 0; m < members.size(); ++m) {
    bool writes_output = m + 1 == members.size() && !program->reduction;
    if (!writes_output) {
      if (free_blocks.empty()) free_blocks.push_back(int32_t(program->num_blocks++));
      members[m].block = free_blocks.back();
      free_blocks.pop_back();
    }
    for (const FusedProgram::Operand& op : members[m].operands) {
      // Read last here (an operand read twice frees its block once).
      if (!op.external && last_read[size_t(op.index)] == m &&
          members[size_t(op.index)].block >= 0 &&
          std::find(free_blocks.begin(), free_blocks.end(), members[size_t(op.index)].block) ==
              free_blocks.end()) {
        free_blocks.push_back(members[size_t(op.index)].block);
      }
    }
  }
  program->block_bytes = size_t(kBlockElements) * widest;
  const DType value_dtype = members.back().dtype;
  program->float_sum = program->reduction && program->reduction->id == ops::OpId::ReduceSum &&
                       (value_dtype == DType::float32 || value_dtype == DType::float64);
  program->composed = composed_program(*program, input_types);
  // A composed chain's scratch blocks hold its three operands' broadcasts.
  if (program->composed) program->num_blocks = std::max<size_t>(program->num_blocks, 3);
  size_t partials = 0;
  if (program->reduction) {
    size_t count = size_t((program->num_elements + kBlockElements - 1) / kBlockElements);
    partials = count * dtype_size(value_dtype);
  }
  program->scratch_bytes = program->num_blocks * program->block_bytes + partials;

  if (!program->reduction && program->num_elements <= kMaxFlatElements) {
    program->flat = true;
    for (FusedProgram::Member& m : members) {
      const FusedProgram::Operand& first = m.operands[0];
      DType input = first.external ? input_types[size_t(first.index)]->dtype
                                   : members[size_t(first.index)].dtype;
      m.scalar_kernel = ops::scalar_kernel(m.op->id, input, m.dtype);
      program->flat = program->flat && m.scalar_kernel;
    }
  }
  return program;
}

void Plan::run_fused(Arena& a, const Step& step) const {
  const FusedProgram& program = *step.fused;
  const DType out_dtype = step.out_dtypes[0];
  void* out;
  const Shape* out_shape = &step.static_shape;
  if (step.write_into_input >= 0 &&
      step.static_bytes <= a.input_capacity[size_t(step.write_into_input)]) {
    // Block by block, each block's inputs are read before it is written.
    out = const_cast<void*>(a.data[size_t(step.inputs[size_t(step.in_place_operand)])]);
  } else if (step.buffers[0] >= 0) {
    out = a.reserve(step.buffers[0], step.static_bytes);
  } else {
    Tensor fresh = detail::make_eager(out_dtype, step.static_shape);
    out = fresh.raw_mutable_data();
    a.holders[size_t(step.out_slot)] = std::move(fresh);
    out_shape = &a.holders[size_t(step.out_slot)].shape();
  }
  if (program.flat) {
    auto* scratch = static_cast<char*>(a.reserve(step.first_scratch, program.scratch_bytes));
    const FusedProgram::Member* current = nullptr;
    try {
      run_flat_members(a, step, slot_dtypes_, scratch, out, current);
    } catch (const Error& e) {
      if (!current) throw;
      rethrow_defined_at(e, *current->node);
    }
    a.data[size_t(step.out_slot)] = out;
    a.shape[size_t(step.out_slot)] = out_shape;
    return;
  }

  // The blocks split over the intra-op threads in contiguous chunks, each
  // chunk with its own member blocks (a composed chain's broadcasts are read
  // only, and shared); each block writes its own partial result, so the
  // result does not depend on the thread count.
  const int64_t num_blocks = (program.num_elements + kBlockElements - 1) / kBlockElements;
  const int64_t max_chunks = intra_op_threads();
  const size_t chunk_bytes = program.num_blocks * program.block_bytes;
  const size_t partial_bytes = program.scratch_bytes - chunk_bytes;
  auto* scratch = static_cast<char*>(
      a.reserve(step.first_scratch, chunk_bytes * size_t(max_chunks) + partial_bytes));
  char* partials = scratch + chunk_bytes * size_t(max_chunks);
  const DType value_dtype = program.members.back().dtype;  // what a reduction reduces
  static const Shape kScalar;
  // A composed chain: adds and multiplies of floats, which raise nothing.
  std::optional<ComposedOperands> composed;
  if (program.composed) composed = composed_operands(a, step, slot_dtypes_, scratch);

  auto run_blocks = [&](int64_t chunk, int64_t begin, int64_t end) {
    char* blocks = scratch + size_t(chunk) * chunk_bytes;
    constexpr size_t kMaxOperands = 3;
    ops::KernelInput in[kMaxOperands];
    const FusedProgram::Member* current = nullptr;
    try {
      for (int64_t block_index = begin; block_index < end; ++block_index) {
        const int64_t start = block_index * kBlockElements;
        const Shape block_shape{std::min(kBlockElements, program.num_elements - start)};
        char* partial = partials + size_t(block_index) * dtype_size(value_dtype);
        if (composed) {
          const void* operands[3];
          for (size_t i = 0; i < 3; ++i) {
            operands[i] = composed->base[i] +
                          (composed->advances[i] ? size_t(start) * composed->element_size[i] : 0);
          }
          void* block_out = program.float_sum
                                ? partial
                                : static_cast<char*>(out) + size_t(start) * dtype_size(out_dtype);
          program.composed(operands, block_shape[0], block_out);
          continue;
        }
        for (const FusedProgram::Member& m : program.members) {
          current = &m;
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
          void* block_out = m.block >= 0
                                ? blocks + size_t(m.block) * program.block_bytes
                                : static_cast<char*>(out) + size_t(start) * dtype_size(out_dtype);
          m.op->kernel({m.op->name,
                        {in, m.operands.size()},
                        block_out,
                        &block_shape,
                        m.dtype,
                        m.attrs,
                        nullptr});
        }
        current = nullptr;
        if (!program.reduction) continue;
        const char* value = blocks + size_t(program.members.back().block) * program.block_bytes;
        if (program.float_sum) {
          if (value_dtype == DType::float32) {
            *reinterpret_cast<float*>(partial) =
                sum_block(reinterpret_cast<const float*>(value), block_shape[0]);
          } else {
            *reinterpret_cast<double*>(partial) =
                sum_block(reinterpret_cast<const double*>(value), block_shape[0]);
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
  ops::parallel_chunks(num_blocks, ops::kParallelGrain / kBlockElements, max_chunks, run_blocks);

  if (program.reduction) {
    const Shape partial_shape{num_blocks};
    ops::KernelInput reduced{partials, &partial_shape, value_dtype};
    program.reduction->kernel(
        {program.reduction->name, {&reduced, 1}, out, &kScalar, out_dtype, &all_axes(), nullptr});
    if (program.mean) {
      // As kernel_reduce_mean divides its sum: integers truncate. The
      // element count is at least 1 (fusion takes no empty shapes).
      visit_dtype(out_dtype, [&](auto v) {
        using T = decltype(v);
        if constexpr (!std::is_same_v<T, bool>) {
          T* result = static_cast<T*>(out);
          *result = T(*result / T(program.num_elements));
        }
      });
    }
  }
  a.data[size_t(step.out_slot)] = out;
  a.shape[size_t(step.out_slot)] = out_shape;
}

}  // namespace ag::exec
