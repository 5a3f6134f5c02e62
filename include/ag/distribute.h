// Data-parallel training across processes, as Horovod does it: every process
// (a rank) runs the same program on its share of the data, and collectives
// combine tensors across the ranks. Start one process per rank with mpirun:
//
//   ag::distribute::Context context;                 // MPI_Init (hvd.init())
//   ag::distribute::broadcast_variables(variables);  // everyone starts from rank 0's weights
//   ag::distribute::DistributedOptimizer opt(adam);  // gradients averaged over the ranks
//   ... opt.apply_gradients(tape.gradient(loss, variables), variables);
//
// The collectives (all_reduce, broadcast, all_gather, reduce_scatter) are ops
// of ag/ops.def: they run eagerly, trace into an ag::function's graph, have
// gradients and never fold, merge or disappear in the optimiser. They live
// in ag_runtime and call the Backend that is installed; ag_distribute's
// Context installs the one on Open MPI (non-blocking MPI calls with a
// deadline, so that a failed rank never hangs the others). docs/distributed.md
// has the whole story: running across machines, tolerances, faults.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ag/dtype.h"
#include "ag/gradients.h"
#include "ag/optimizers.h"
#include "ag/shape.h"
#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag::distribute {

// How all_reduce and reduce_scatter combine the ranks' tensors (Horovod's
// hvd.Sum, hvd.Average, hvd.Max, hvd.Min). Mean is for floating dtypes.
enum class ReduceOp : int64_t { Sum = 0, Mean = 1, Max = 2, Min = 3 };
// "sum", "mean", "max", "min"
std::string_view reduce_op_name(ReduceOp op);

// ---- Collectives (ag_runtime) --------------------------------------------------------
// Every rank must call the same collectives in the same order, with the same
// dtype and shape (and the same op and root); a rank that does not is an
// error on every rank that names the ranks and what each called.

// The elementwise sum (mean, max, min) of x over the ranks, on every rank.
// Gradient: for a total loss that sums the ranks' losses, sum: the all_reduce
// sum of the output's gradients; mean: their mean; max and min: that sum,
// on the ranks whose element is the extremum, split between ties.
Tensor all_reduce(const Tensor& x, ReduceOp op = ReduceOp::Sum,
                  CallSite site = CallSite::current());
// Rank `root`'s x, on every rank. Gradient: the sum of the ranks' output
// gradients on the root, zeros elsewhere.
Tensor broadcast(const Tensor& x, int root = 0, CallSite site = CallSite::current());
// The ranks' x concatenated along axis 0, in rank order (dim 0 times
// size()). Gradient: reduce_scatter(sum) of the output's gradient.
Tensor all_gather(const Tensor& x, CallSite site = CallSite::current());
// x reduced over the ranks (sum or mean), then cut along axis 0 into size()
// equal parts; rank r gets part r. Dim 0 must divide by size(). Gradient:
// all_gather of the output's gradient (divided by size() for mean).
Tensor reduce_scatter(const Tensor& x, ReduceOp op = ReduceOp::Sum,
                      CallSite site = CallSite::current());

// This process's rank and the number of ranks, of the installed backend
// (an error when there is none).
int rank();
int size();

// ---- The transport behind the collectives ----------------------------------------------

enum class Collective { AllReduce, Broadcast, AllGather, ReduceScatter };
// "all_reduce", "broadcast", "all_gather", "reduce_scatter"
std::string_view collective_name(Collective collective);

// One collective call as a backend gets it: contiguous input and output
// buffers of `dtype`; the output has input_elements (all_reduce, broadcast),
// input_elements * size (all_gather) or input_elements / size
// (reduce_scatter) elements. Mean arrives as Mean: the backend divides.
struct CollectiveCall {
  Collective collective;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
  DType dtype = DType::float32;
  Shape input_shape;
  const void* input = nullptr;
  int64_t input_elements = 0;
  void* output = nullptr;
  int64_t output_elements = 0;
};

// A transport: ag_distribute's Context installs the one on MPI. Collective
// kernels call run() in program order, one at a time.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void run(const CollectiveCall& call) = 0;
  // Whether run() may be called from a thread other than the one that made
  // the backend (one call at a time): DistributedOptimizer overlaps only
  // then, and otherwise runs the same collectives after the backward.
  virtual bool runs_on_any_thread() const { return true; }
};

// Installs `backend` for the whole process (null: none), returning the one
// it replaces. The collectives hold the backend while they run.
std::shared_ptr<Backend> set_backend(std::shared_ptr<Backend> backend);
// The installed backend, or null.
std::shared_ptr<Backend> current_backend();

// ---- Context (ag_distribute, on MPI) ---------------------------------------------------

struct ContextOptions {
  // How long a rank waits in a collective for the others before it fails
  // (a rank that threw, exited or calls something else never comes).
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
};

// Initialises MPI (or joins the MPI the program already initialised, which
// it then leaves to the program to finalise), installs the MPI backend, and
// on destruction uninstalls it and finalises MPI. After a collective timed
// out, the destructor ends every rank with MPI_Abort instead: a collective
// left half done cannot be finalised. One Context at a time.
class Context {
 public:
  explicit Context(ContextOptions options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int rank() const;
  int size() const;
  const ContextOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// ---- Horovod-style training (ag_distribute) --------------------------------------------

struct DistributedOptions {
  // How the ranks' gradients combine (Horovod's op=hvd.Average).
  ReduceOp op = ReduceOp::Mean;
  // Gradients smaller than this (in bytes) are flattened into shared
  // buffers of at most this size, one all_reduce per buffer (Horovod's
  // HOROVOD_FUSION_THRESHOLD); larger ones get their own. 0: no fusion.
  // 1 MiB, not Horovod's 64 MiB: on CPUs, copying a large gradient into and
  // out of a buffer costs more than the collective call it saves (an MLP's
  // data-parallel step: 6.5 ms against 8.7 with 64 MiB; docs/distributed.md).
  int64_t fusion_threshold_bytes = int64_t{1} << 20;
  // gradient() and minimize(): each fusion buffer is all_reduced as soon as
  // the backward has completed its gradients, on a communication thread
  // while the backward goes on (Horovod's overlap). false: the same buffers
  // after the backward, on the calling thread, with the same results bit
  // for bit. Eager steps only: a traced step records the same all_reduces,
  // in the same order, and its graph runs them in turn. Also false in effect
  // where the backend cannot run collectives on another thread (MPI
  // initialised by the program with less than MPI_THREAD_SERIALIZED).
  bool overlap = true;
};

// Wraps an optimizer (Horovod's hvd.DistributedOptimizer): apply_gradients
// averages the gradients over the ranks, then applies them with the wrapped
// optimizer, which must outlive this one. Eager or traced, as the wrapped
// optimizer. Every rank must pass gradients of the same dtypes and shapes;
// an undefined gradient must be undefined on every rank. The collectives
// it adds are the caller's: a traced step's errors in them name the line of
// the call.
class DistributedOptimizer {
 public:
  explicit DistributedOptimizer(optimizers::Optimizer& optimizer, DistributedOptions options = {});

  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& variables,
                       CallSite site = CallSite::current());
  void apply_gradients(const std::vector<std::pair<Tensor, Variable>>& grads_and_vars,
                       CallSite site = CallSite::current());
  // The gradients combined over the ranks (what apply_gradients applies).
  std::vector<Tensor> reduce_gradients(const std::vector<Tensor>& grads,
                                       CallSite site = CallSite::current()) const;

  // tape.gradient(loss, variables) combined over the ranks, each gradient
  // sent as soon as the backward has completed it (GradientTape::
  // on_gradient_ready): fusion buffers are filled in that order (the same on
  // every rank), so they may differ from reduce_gradients' (the order of
  // `grads`). With options().overlap their all_reduces run while the
  // backward goes on.
  std::vector<Tensor> gradient(GradientTape& tape, const Tensor& loss,
                               const std::vector<Variable>& variables,
                               CallSite site = CallSite::current()) const;
  // gradient(), then the wrapped optimizer applies the combined gradients.
  void minimize(GradientTape& tape, const Tensor& loss, const std::vector<Variable>& variables,
                CallSite site = CallSite::current());

  optimizers::Optimizer& optimizer() const { return optimizer_; }
  const DistributedOptions& options() const { return options_; }

 private:
  optimizers::Optimizer& optimizer_;
  DistributedOptions options_;
};

// Sets every variable to its value on rank `root` (Horovod's
// broadcast_variables), so that all ranks start from the same weights.
void broadcast_variables(const std::vector<Variable>& variables, int root = 0,
                         CallSite site = CallSite::current());

}  // namespace ag::distribute
