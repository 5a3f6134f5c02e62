// The executor. A Body is compiled once into a flat Plan: a list of steps,
// each a kernel pointer with the slots it reads and writes, plus a memory
// plan that lets values with disjoint lifetimes share buffers. Running a plan
// walks the steps only: no graph walking, no hashing, and no allocation
// beyond the buffers (which are kept between calls) and the returned tensors.
//
// Needs: a Body whose nodes are in topological (and program) order, with one
// placeholder per input and Identity or other nodes as outputs.
// Guarantees: outputs equal what eager execution of the same ops gives;
// stateful steps run in program order on every call; unknown dims are
// resolved from the actual inputs on each call.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "ag/tensor.h"
#include "graph/graph.h"
#include "ops/op_registry.h"

namespace ag::exec {

class Plan {
 public:
  explicit Plan(const graph::Body& body);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // `inputs` has one tensor per placeholder of the body; `outputs` receives
  // one tensor per output. Safe to call from several threads at once.
  void run(std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) const;

  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return outputs_.size(); }
  size_t num_steps() const;
  // How many buffers the memory plan uses for its intermediate values.
  size_t num_buffers() const { return num_buffers_; }

  struct Step;
  struct Arena;
  // Where a slot's value comes from.
  struct Source {
    enum Kind : uint8_t { Input, Constant, Step } kind;
    int32_t index;  // input number, constant number, or step number
  };

 private:
  std::unique_ptr<Arena> acquire_arena() const;
  void release_arena(std::unique_ptr<Arena> arena) const;
  Tensor materialize(Arena& arena, int32_t slot, std::span<const Tensor* const> inputs) const;

  std::vector<Step> steps_;
  std::vector<Source> sources_;     // per slot
  std::vector<DType> slot_dtypes_;  // per slot
  std::vector<Tensor> constants_;   // Const node values
  std::vector<int32_t> outputs_;    // slot of each output
  size_t num_inputs_ = 0;
  size_t num_buffers_ = 0;
  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<Arena>> pool_;
};

}  // namespace ag::exec
