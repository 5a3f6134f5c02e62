// Running an op: eagerly on data, or by recording a node while tracing.
// Internal to the runtime.
#pragma once

#include <initializer_list>
#include <span>

#include "ag/tensor.h"
#include "ops/op_registry.h"

namespace ag::ops {

// Records a node when an input is symbolic (or, for stateful ops, whenever
// this thread is tracing); otherwise runs the kernel now. `site` is where the
// user's code called the op; a recorded node keeps it for its errors.
Tensor apply(OpId op, std::span<const Tensor> inputs, const Attrs& attrs = {}, CallSite site = {});
inline Tensor apply(OpId op, std::initializer_list<Tensor> inputs, const Attrs& attrs = {},
                    CallSite site = {}) {
  return apply(op, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs, site);
}
// The zeros op: zeros of a static shape that a trace records as a node, not
// as a constant it keeps (ops.def). For the zeros the runtime itself makes,
// such as a TensorArray's initial rows.
Tensor zeros_op(const Shape& shape, DType dtype, CallSite site = {});
// Runs the kernel on eager inputs (used by constant folding as well). Its
// errors name the op.
Tensor run_eager(OpId op, std::span<const Tensor> inputs, const Attrs& attrs, RandomState* rng);
// Runs the kernel of a kShapeOnly op on inputs known only by their types,
// whose shapes must be fully defined: constant folding's shape, size, rank.
Tensor run_on_shapes(OpId op, std::span<const ValueType> inputs, const Attrs& attrs);

// Tracing sits above ops (layers: runtime/CMakeLists.txt): the trace layer
// installs these hooks when its first trace starts, before any symbolic
// tensor can exist. Until then nothing is traced.
struct TraceHooks {
  // True while this thread is tracing a function.
  bool (*is_tracing)();
  // Adds a node for `op` to the current trace; returns its symbolic output.
  Tensor (*record_op)(OpId op, std::span<const Tensor> inputs, const Attrs& attrs, CallSite site);
};
// `hooks` must outlive every later apply().
void install_trace_hooks(const TraceHooks* hooks);

// Gradient tapes sit above ops (runtime/autodiff): while one is alive on a
// thread it installs an observer that sees every op apply() runs there,
// eager or traced, with its output. With no tape, apply() pays one
// thread-local load.
class OpObserver {
 public:
  virtual void on_op(OpId op, std::span<const Tensor> inputs, const Attrs& attrs, CallSite site,
                     const Tensor& output) = 0;

 protected:
  ~OpObserver() = default;
};
// Sets this thread's observer (null: none).
void set_op_observer(OpObserver* observer);

}  // namespace ag::ops
