// The public functions of ag/strings.h that are ops: attrs, then one
// ops::apply call each (the kernels are in kernels_strings.cpp).
#include <string>

#include "ag/strings.h"
#include "ops/dispatch.h"

namespace ag::strings {

using ops::Attrs;
using ops::OpId;

Tensor join(const std::vector<Tensor>& inputs, std::string_view separator, CallSite site) {
  if (inputs.empty()) throw InvalidArgumentError("ag::strings::join needs at least one input");
  const Tensor sep = constant(std::vector<std::string>{std::string(separator)}, Shape{});
  Tensor out = inputs.front();
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (!separator.empty()) out = ops::apply(OpId::StringJoin, {out, sep}, {}, site);
    out = ops::apply(OpId::StringJoin, {out, inputs[i]}, {}, site);
  }
  // One input: still a string op, so that numbers are rejected here too.
  if (inputs.size() == 1) out = ops::apply(OpId::StringJoin, {out, constant("")}, {}, site);
  return out;
}

Tensor length(const Tensor& input, CallSite site) {
  return ops::apply(OpId::StringLength, {input}, {}, site);
}

Tensor substr(const Tensor& input, int64_t pos, int64_t len, CallSite site) {
  return substr(input, Tensor(pos), Tensor(len), site);
}

Tensor substr(const Tensor& input, const Tensor& pos, const Tensor& len, CallSite site) {
  return ops::apply(OpId::Substr, {input, pos, len}, {}, site);
}

Tensor as_string(const Tensor& input, CallSite site) {
  return ops::apply(OpId::AsString, {input}, {}, site);
}

Tensor to_number(const Tensor& input, DType out_type, CallSite site) {
  Attrs attrs;
  attrs.dtype = out_type;
  return ops::apply(OpId::StringToNumber, {input}, attrs, site);
}

Tensor split(const Tensor& input, std::string_view sep, CallSite site) {
  const Tensor separator = constant(std::vector<std::string>{std::string(sep)}, Shape{});
  return ops::apply(OpId::StringSplit, {input, separator}, {}, site);
}

Tensor reduce_join(const Tensor& input, std::vector<int64_t> axes, bool keepdims,
                   std::string_view separator, CallSite site) {
  Attrs attrs;
  attrs.ints = std::move(axes);
  attrs.keepdims = keepdims;
  const Tensor sep = constant(std::vector<std::string>{std::string(separator)}, Shape{});
  return ops::apply(OpId::ReduceJoin, {input, sep}, attrs, site);
}

}  // namespace ag::strings
