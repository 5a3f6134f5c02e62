// What the layers above autodiff tell the active gradient tapes about values
// that do not come from ops::apply (whose ops the tapes see through
// ops::OpObserver): variable reads and staged control flow. Internal to the
// runtime.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ag/gradients.h"
#include "ag/tensor.h"

namespace ag::autodiff {

// True when a gradient tape is alive on this thread and tapes are not paused.
bool tape_active();

// True when an active tape on this thread records ops on any of `inputs`
// (would need a gradient through a construct that takes them).
bool tapes_track_any(std::span<const Tensor> inputs);

// While alive, the tapes alive on this thread when it was made record
// nothing (tapes made since do). Staging traces the bodies of an If or While
// under it: the tapes see the node as one construct, and its gradient runs
// the bodies again.
class PauseTapes {
 public:
  PauseTapes();
  ~PauseTapes();
  PauseTapes(const PauseTapes&) = delete;
  PauseTapes& operator=(const PauseTapes&) = delete;

 private:
  size_t previous_;
};

// A read of variable `id` gave `value`. Returns the tensor the reader should
// use: `value` itself, or, when a tape records the read, a handle with its
// own identity, so that the tape tells this read from other uses of the
// same storage.
Tensor on_variable_read(uint64_t id, bool trainable, const Tensor& value);

// The gradient of a staged construct: the gradients of its inputs from those
// of its outputs (undefined where an output has none).
using StagedGradient = std::function<std::vector<Tensor>(std::span<const Tensor> output_gradients)>;

// A staged construct (an If or While node) or a host function took `inputs`
// and gave `outputs`.
// A tape that needs a gradient through it calls `gradient`; without one it
// throws an UnimplementedError that says `what` (the construct and where it
// is), never a zero gradient.
void on_staged_construct(const std::string& what, std::span<const Tensor> inputs,
                         std::span<const Tensor> outputs, StagedGradient gradient = nullptr);

// A variable a traced function reads: its id and whether it is trainable.
struct VariableUse {
  uint64_t id;
  bool trainable;
};

// How many tapes of this thread, recording now, track one of `inputs` or
// want to record a read of one of `variables`: the tapes a call of a traced
// function must show its ops to.
int tapes_recording(std::span<const Tensor> inputs, std::span<const VariableUse> variables);

// While alive, this thread's tapes are set aside and see no ops: the runtime
// traces a graph for itself (a function's gradient), which the user's tapes
// must not record.
class TapesSetAside {
 public:
  TapesSetAside();
  ~TapesSetAside();
  TapesSetAside(const TapesSetAside&) = delete;
  TapesSetAside& operator=(const TapesSetAside&) = delete;

 private:
  std::vector<detail::TapeImpl*> tapes_;
};

// What the runtime does with a tape of its own beyond the public API.
// Watches the reads of variable `id` from now on, trainable or not.
void watch_variable(GradientTape& tape, uint64_t id);
// The gradients of several targets at once, target k seeded by seeds[k] (of
// its shape), with respect to `sources` (undefined for an unconnected one).
std::vector<Tensor> gradient_of_targets(GradientTape& tape, std::span<const Tensor> targets,
                                        std::span<const Tensor> seeds,
                                        const std::vector<detail::GradientSource>& sources);

}  // namespace ag::autodiff
