// Importer of ONNX's Scan, unrolled: the body runs once per element of the
// scan axis (its length must be static), each run taking the states the
// last one gave and one slice of each scan input, and the runs' scan
// outputs are stacked. Before opset 9 the inputs have a batch axis first,
// and each batch entry is scanned on its own.
#include <algorithm>
#include <string>
#include <vector>

#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {

struct ScanSpec {
  int64_t states = 0;
  std::vector<int64_t> input_axes, input_reversed, output_axes, output_reversed;
};

// An attribute of one value per input or output, or `fallback` for each.
std::vector<int64_t> per_value(NodeContext& ctx, std::string_view name, size_t count,
                               int64_t fallback) {
  if (!ctx.has_attr(name)) return std::vector<int64_t>(count, fallback);
  std::vector<int64_t> v = ctx.attr_ints(name);
  if (v.size() != count)
    ctx.invalid(std::string(name) + " has " + std::to_string(v.size()) + " values for " +
                std::to_string(count));
  return v;
}

// One scan of `states` and `scans`, the scan inputs' axes and directions,
// and the outputs' as `spec` gives them.
std::vector<Tensor> scan(NodeContext& ctx, const ScanSpec& spec, std::vector<Tensor> states,
                         const std::vector<Tensor>& scans) {
  const ::onnx::GraphProto& body = ctx.attr_graph("body");
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (size_t k = 0; k < scans.size(); ++k) {
    const int64_t axis = ctx.normalize_axis(spec.input_axes[k], scans[k].rank(), "scan axis");
    const int64_t n = scans[k].shape()[int(axis)];
    if (n == kUnknownDim) ctx.unsupported("a scan axis of unknown length");
    if (length >= 0 && n != length) ctx.invalid("the scan inputs' axes differ in length");
    length = n;
    axes.push_back(axis);
  }
  if (length < 1) ctx.unsupported("a scan of no elements");
  const size_t outputs = size_t(body.output_size()) - states.size();
  std::vector<std::vector<Tensor>> rows(outputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Tensor> in = states;
    for (size_t k = 0; k < scans.size(); ++k) {
      const int64_t at = spec.input_reversed[k] != 0 ? length - 1 - t : t;
      in.push_back(gather(scans[k], Tensor(at), axes[k]));
    }
    const std::vector<Tensor> out = run_graph(body, in, &ctx.scope(), ctx.opset());
    std::copy(out.begin(), out.begin() + std::ptrdiff_t(states.size()), states.begin());
    for (size_t k = 0; k < outputs; ++k) rows[k].push_back(out[states.size() + k]);
  }
  for (size_t k = 0; k < outputs; ++k) {
    if (spec.output_reversed[k] != 0) std::reverse(rows[k].begin(), rows[k].end());
    const int64_t axis =
        ctx.normalize_axis(spec.output_axes[k], rows[k][0].rank() + 1, "scan output axis");
    states.push_back(stack(rows[k], axis));
  }
  return states;
}

}  // namespace

std::vector<Tensor> import_scan(NodeContext& ctx) {
  const int64_t num_scans = ctx.attr_int("num_scan_inputs");
  const size_t first = ctx.opset() < 9 ? 1 : 0;  // opset 8's sequence_lens
  if (first == 1 && ctx.has_input(0)) ctx.unsupported("sequence_lens");
  const size_t inputs = ctx.num_inputs() - first;
  if (num_scans < 1 || size_t(num_scans) > inputs)
    ctx.invalid("num_scan_inputs must be between 1 and the number of inputs");
  ScanSpec spec;
  spec.states = int64_t(inputs) - num_scans;
  const size_t outputs = size_t(ctx.attr_graph("body").output_size()) - size_t(spec.states);
  if (ctx.opset() < 9) {
    spec.input_axes.assign(size_t(num_scans), 0);
    spec.input_reversed = per_value(ctx, "directions", size_t(num_scans), 0);
  } else {
    spec.input_axes = per_value(ctx, "scan_input_axes", size_t(num_scans), 0);
    spec.input_reversed = per_value(ctx, "scan_input_directions", size_t(num_scans), 0);
  }
  spec.output_axes = per_value(ctx, "scan_output_axes", outputs, 0);
  spec.output_reversed = per_value(ctx, "scan_output_directions", outputs, 0);
  std::vector<Tensor> states, scans;
  for (size_t k = first; k < ctx.num_inputs(); ++k)
    (k - first < size_t(spec.states) ? states : scans).push_back(ctx.input(k));
  if (ctx.opset() >= 9) return scan(ctx, spec, states, scans);
  // Opset 8: each batch entry on its own, the results stacked again.
  const int64_t batch = ctx.static_shape(first, "Scan's batch")[0];
  std::vector<std::vector<Tensor>> per_entry;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> s, x;
    for (const Tensor& t : states) s.push_back(gather(t, Tensor(b)));
    for (const Tensor& t : scans) x.push_back(gather(t, Tensor(b)));
    per_entry.push_back(scan(ctx, spec, s, x));
  }
  std::vector<Tensor> results;
  for (size_t k = 0; k < per_entry.at(0).size(); ++k) {
    std::vector<Tensor> column;
    for (const auto& entry : per_entry) column.push_back(entry[k]);
    results.push_back(stack(column, 0));
  }
  return results;
}

}  // namespace ag::onnx_io
