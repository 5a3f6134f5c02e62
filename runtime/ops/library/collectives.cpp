// The collectives of ag/distribute.h: all_reduce, broadcast, all_gather and
// reduce_scatter, as ops. Their kernels hand the buffers to the installed
// ag::distribute::Backend (ag_distribute's Context installs the one on MPI),
// so the runtime links no transport. They are stateful ops: every rank must
// run them in the same order, so they run on every call, in program order,
// and the optimiser never folds, merges or removes them.
// Attrs: ints = [reduce op, number of ranks when called]; axis = the root.
// The number of ranks is fixed when the op is called (traced), because
// all_gather's and reduce_scatter's output shapes depend on it.
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ag/distribute.h"
#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"

namespace ag::ops {
namespace {

std::mutex collective_backend_mutex;
std::shared_ptr<distribute::Backend> collective_installed_backend;

std::shared_ptr<distribute::Backend> collective_backend_or_throw(std::string_view op) {
  std::shared_ptr<distribute::Backend> backend = distribute::current_backend();
  if (!backend) {
    throw FailedPreconditionError(
        std::string(op) +
        ": no distribute context: create ag::distribute::Context first (ag_distribute, run under "
        "mpirun; docs/distributed.md)");
  }
  return backend;
}

distribute::ReduceOp collective_reduce_op(const Attrs& attrs) {
  return distribute::ReduceOp(attrs.ints[0]);
}

int64_t collective_ranks(const Attrs& attrs) {
  return attrs.ints[1];
}

Attrs collective_attrs(distribute::ReduceOp op, int64_t ranks, int root = 0) {
  Attrs attrs;
  attrs.ints = {int64_t(op), ranks};
  attrs.axis = root;
  return attrs;
}

void collective_require_numeric(const InferContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  if (dtype == DType::bool_) {
    throw InvalidArgumentError(std::string(ctx.op_name) +
                               ": unsupported dtype bool; it takes float32, float64, int32 or "
                               "int64 (cast bool to int32 first)");
  }
  const distribute::ReduceOp op = collective_reduce_op(ctx.attrs);
  if (op == distribute::ReduceOp::Mean && !is_floating(dtype)) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": a mean of " +
                               std::string(dtype_name(dtype)) +
                               " values; mean takes float32 or float64 (cast first, or use sum)");
  }
}

void collective_require_rank_one(const InferContext& ctx) {
  const Shape& shape = ctx.inputs[0].shape;
  if (shape.has_unknown_rank() || shape.rank() == 0) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": input of shape " + shape.to_string() +
                               " has no axis 0 to gather or scatter along; give it rank 1 or more");
  }
}

void collective_run(const KernelContext& ctx, distribute::Collective collective) {
  std::shared_ptr<distribute::Backend> backend = collective_backend_or_throw(ctx.op_name);
  const int64_t traced_ranks = collective_ranks(*ctx.attrs);
  if (backend->size() != traced_ranks) {
    throw FailedPreconditionError(std::string(ctx.op_name) + ": traced for " +
                                  std::to_string(traced_ranks) + " ranks, run with " +
                                  std::to_string(backend->size()) +
                                  "; trace the function again under the current context");
  }
  distribute::CollectiveCall call;
  call.collective = collective;
  call.op = collective_reduce_op(*ctx.attrs);
  call.root = int(ctx.attrs->axis);
  call.dtype = ctx.out_dtype;
  call.input_shape = *ctx.inputs[0].shape;
  call.input = ctx.inputs[0].data;
  call.input_elements = call.input_shape.num_elements();
  call.output = ctx.out;
  call.output_elements = ctx.out_shape->num_elements();
  backend->run(call);
}

}  // namespace

ValueType infer_all_reduce(const InferContext& ctx) {
  collective_require_numeric(ctx);
  return ctx.inputs[0];
}

ValueType infer_broadcast(const InferContext& ctx) {
  collective_require_numeric(ctx);
  const int64_t root = ctx.attrs.axis, ranks = collective_ranks(ctx.attrs);
  if (root < 0 || root >= ranks) {
    throw InvalidArgumentError("broadcast: root " + std::to_string(root) +
                               " is not a rank; the ranks are 0 to " + std::to_string(ranks - 1));
  }
  return ctx.inputs[0];
}

ValueType infer_all_gather(const InferContext& ctx) {
  collective_require_numeric(ctx);
  collective_require_rank_one(ctx);
  ValueType out = ctx.inputs[0];
  if (out.shape[0] != kUnknownDim) out.shape.set_dim(0, out.shape[0] * collective_ranks(ctx.attrs));
  return out;
}

ValueType infer_reduce_scatter(const InferContext& ctx) {
  collective_require_numeric(ctx);
  collective_require_rank_one(ctx);
  const distribute::ReduceOp op = collective_reduce_op(ctx.attrs);
  if (op != distribute::ReduceOp::Sum && op != distribute::ReduceOp::Mean) {
    throw InvalidArgumentError("reduce_scatter: op " + std::string(distribute::reduce_op_name(op)) +
                               " is not supported; use sum or mean");
  }
  ValueType out = ctx.inputs[0];
  const int64_t ranks = collective_ranks(ctx.attrs);
  if (out.shape[0] != kUnknownDim) {
    if (out.shape[0] % ranks != 0) {
      throw InvalidArgumentError("reduce_scatter: axis 0 of the input (shape " +
                                 out.shape.to_string() + ") does not divide into " +
                                 std::to_string(ranks) + " equal parts, one per rank; pad it to " +
                                 "a multiple of " + std::to_string(ranks));
    }
    out.shape.set_dim(0, out.shape[0] / ranks);
  }
  return out;
}

void kernel_all_reduce(const KernelContext& ctx) {
  collective_run(ctx, distribute::Collective::AllReduce);
}

void kernel_broadcast(const KernelContext& ctx) {
  collective_run(ctx, distribute::Collective::Broadcast);
}

void kernel_all_gather(const KernelContext& ctx) {
  collective_run(ctx, distribute::Collective::AllGather);
}

void kernel_reduce_scatter(const KernelContext& ctx) {
  collective_run(ctx, distribute::Collective::ReduceScatter);
}

// The total loss is the sum of the ranks' losses, so an input's gradient
// gathers every rank's output gradient.
std::vector<Tensor> grad_all_reduce(const GradContext& c) {
  using distribute::ReduceOp;
  const ReduceOp op = collective_reduce_op(c.attrs);
  if (op == ReduceOp::Sum || op == ReduceOp::Mean)
    return {distribute::all_reduce(c.grad, op, c.site)};
  // max, min: to the ranks holding the extremum, split between ties.
  const Tensor holds = api::cast(api::equal(c.inputs[0], c.output, c.site), c.grad.dtype(), c.site);
  const Tensor holders = distribute::all_reduce(holds, ReduceOp::Sum, c.site);
  const Tensor total = distribute::all_reduce(c.grad, ReduceOp::Sum, c.site);
  return {api::div(api::mul(total, holds, c.site), holders, c.site)};
}

std::vector<Tensor> grad_broadcast(const GradContext& c) {
  const Tensor total = distribute::all_reduce(c.grad, distribute::ReduceOp::Sum, c.site);
  if (distribute::rank() == int(c.attrs.axis)) return {total};
  return {api::zeros_like(total, c.site)};
}

std::vector<Tensor> grad_all_gather(const GradContext& c) {
  return {distribute::reduce_scatter(c.grad, distribute::ReduceOp::Sum, c.site)};
}

std::vector<Tensor> grad_reduce_scatter(const GradContext& c) {
  const Tensor gathered = distribute::all_gather(c.grad, c.site);
  if (collective_reduce_op(c.attrs) == distribute::ReduceOp::Sum) return {gathered};
  return {api::div(gathered, double(collective_ranks(c.attrs)), c.site)};
}

}  // namespace ag::ops

namespace ag::distribute {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Mean:
      return "mean";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
  }
  return "?";
}

std::string_view collective_name(Collective collective) {
  switch (collective) {
    case Collective::AllReduce:
      return "all_reduce";
    case Collective::Broadcast:
      return "broadcast";
    case Collective::AllGather:
      return "all_gather";
    case Collective::ReduceScatter:
      return "reduce_scatter";
  }
  return "?";
}

std::shared_ptr<Backend> set_backend(std::shared_ptr<Backend> backend) {
  std::lock_guard lock(ops::collective_backend_mutex);
  std::swap(backend, ops::collective_installed_backend);
  return backend;
}

std::shared_ptr<Backend> current_backend() {
  std::lock_guard lock(ops::collective_backend_mutex);
  return ops::collective_installed_backend;
}

int rank() {
  return ops::collective_backend_or_throw("rank")->rank();
}

int size() {
  return ops::collective_backend_or_throw("size")->size();
}

Tensor all_reduce(const Tensor& x, ReduceOp op, CallSite site) {
  const int64_t ranks = ops::collective_backend_or_throw("all_reduce")->size();
  return ops::apply(ops::OpId::AllReduce, {x}, ops::collective_attrs(op, ranks), site);
}

Tensor broadcast(const Tensor& x, int root, CallSite site) {
  const int64_t ranks = ops::collective_backend_or_throw("broadcast")->size();
  return ops::apply(ops::OpId::Broadcast, {x}, ops::collective_attrs(ReduceOp::Sum, ranks, root),
                    site);
}

Tensor all_gather(const Tensor& x, CallSite site) {
  const int64_t ranks = ops::collective_backend_or_throw("all_gather")->size();
  return ops::apply(ops::OpId::AllGather, {x}, ops::collective_attrs(ReduceOp::Sum, ranks), site);
}

Tensor reduce_scatter(const Tensor& x, ReduceOp op, CallSite site) {
  const int64_t ranks = ops::collective_backend_or_throw("reduce_scatter")->size();
  return ops::apply(ops::OpId::ReduceScatter, {x}, ops::collective_attrs(op, ranks), site);
}

}  // namespace ag::distribute
