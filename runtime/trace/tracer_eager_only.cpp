// Tracing entry points before the tracer exists: nothing is ever traced.
#include "trace/tracer.h"

#include "core/tensor_impl.h"

namespace ag::trace {

bool is_tracing() {
  return false;
}

Tensor record_op(ops::OpId op, std::span<const Tensor>, const ops::Attrs&) {
  throw UnimplementedError(std::string(ops::op_def(op).name) + ": tracing is not implemented yet");
}

std::string symbolic_name(const detail::TensorImpl&) {
  return "?";
}

void throw_value_access(const detail::TensorImpl&, std::string_view what) {
  throw FailedPreconditionError("a symbolic tensor cannot be " + std::string(what));
}

}  // namespace ag::trace
