// The tracing entry points. core and ops, which sit below tracing, reach them
// through the hooks tracer.cpp installs. Internal to the runtime.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ag/tensor.h"
#include "ops/op_registry.h"

namespace ag::detail {
struct TensorImpl;
}

namespace ag::trace {

// True while this thread is tracing a function.
bool is_tracing();
// Adds a node for `op` to the graph this thread is tracing and returns its
// symbolic output. Eager inputs become constants. The node keeps `site`.
Tensor record_op(ops::OpId op, std::span<const Tensor> inputs, const ops::Attrs& attrs,
                 CallSite site);
// "add:0"
std::string symbolic_name(const detail::TensorImpl& impl);
// Throws the error for reading the value of a symbolic tensor; `what` says
// how it was read ("converted to bool", "item()").
[[noreturn]] void throw_value_access(const detail::TensorImpl& impl, std::string_view what);

}  // namespace ag::trace
