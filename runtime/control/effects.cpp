// ag::print, ag::assert_that and ag::host_function: run now when eager, or
// become Effect nodes, which the executor runs on every call in program order.
#include "ag/effects.h"

#include <iostream>
#include <mutex>

#include "autodiff/tape.h"
#include "trace/trace_state.h"

namespace ag {
namespace {

std::mutex g_print_mu;
std::ostream* g_print_stream = nullptr;

// Runs `effect` now, or records it as an Effect node named `name`.
std::vector<Tensor> run_or_record(const std::string& name, graph::EffectFn effect,
                                  const std::vector<Tensor>& inputs,
                                  const std::vector<TensorSpec>& output_specs, CallSite site) {
  trace::TraceState* state = trace::current();
  if (!state) return effect(inputs);
  graph::Node node;
  node.kind = graph::NodeKind::Effect;
  node.name = state->body->unique_name(name);
  node.site = site;
  for (const Tensor& t : inputs) node.inputs.push_back(trace::resolve(t));
  for (const TensorSpec& s : output_specs) node.outputs.push_back({s.dtype, s.shape});
  node.effect = std::make_shared<const graph::EffectFn>(std::move(effect));
  return trace::add_node(std::move(node));
}

}  // namespace

namespace api {
void set_print_stream(std::ostream* os) {
  std::lock_guard lock(g_print_mu);
  g_print_stream = os;
}
}  // namespace api

namespace detail {

void print_pieces(std::vector<PrintPiece> pieces, std::vector<Tensor> tensors) {
  auto effect = [pieces =
                     std::move(pieces)](const std::vector<Tensor>& values) -> std::vector<Tensor> {
    std::string line;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (i) line += ' ';
      line += pieces[i].tensor >= 0 ? values[size_t(pieces[i].tensor)].values_string(3)
                                    : pieces[i].text;
    }
    line += '\n';
    std::lock_guard lock(g_print_mu);
    std::ostream& os = g_print_stream ? *g_print_stream : std::cout;
    os << line << std::flush;
    return {};
  };
  run_or_record("print", std::move(effect), tensors, {}, {});
}

}  // namespace detail

namespace api {

void assert_that(const Tensor& pred, const std::string& message, CallSite site) {
  if (!pred.defined() || pred.dtype() != DType::bool_ || pred.shape().rank() != 0) {
    throw InvalidArgumentError("assert_that: the predicate must be a scalar bool tensor");
  }
  auto effect = [message](const std::vector<Tensor>& values) -> std::vector<Tensor> {
    if (!values[0].item<bool>()) throw InvalidArgumentError("assertion failed: " + message);
    return {};
  };
  run_or_record("assert", std::move(effect), {pred}, {}, site);
}

std::vector<Tensor> host_function(HostFn fn, const std::vector<Tensor>& inputs,
                                  const std::vector<TensorSpec>& output_specs, std::string name,
                                  CallSite site) {
  auto effect = [fn = std::move(fn), output_specs, name](const std::vector<Tensor>& values) {
    std::vector<Tensor> results = fn(values);
    if (results.size() != output_specs.size()) {
      throw InvalidArgumentError(name + ": returned " + std::to_string(results.size()) +
                                 " tensors, but " + std::to_string(output_specs.size()) +
                                 " were declared");
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].defined() || !results[i].spec().is_compatible_with(output_specs[i])) {
        throw InvalidArgumentError(
            name + ": result " + std::to_string(i) + " is " +
            (results[i].defined() ? results[i].spec().to_string() : "undefined") +
            ", but was declared " + output_specs[i].to_string());
      }
    }
    return results;
  };
  std::vector<Tensor> results = run_or_record(name, std::move(effect), inputs, output_specs, site);
  // Its C++ is opaque to a tape: a gradient through it is an error, never a
  // silently missing term.
  if (autodiff::tape_active()) {
    std::string where = site.line() ? std::string(" (called at ") + site.file_name() + ":" +
                                          std::to_string(site.line()) + ")"
                                    : "";
    autodiff::on_staged_construct("the host function '" + name + "'" + where, inputs, results);
  }
  return results;
}

}  // namespace api
}  // namespace ag
