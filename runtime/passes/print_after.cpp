// AG_PRINT_AFTER: which pass's results the pipeline prints, and the printing.

#include "passes/print_after.h"

#include <cstdlib>
#include <iostream>
#include <mutex>

#include "ag/error.h"
#include "graph/graph_text.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

// The variable's value, read once, and where dumps go. One lock serves both:
// optimisations run concurrently, and the value is asked once per optimize().
struct Settings {
  std::mutex mu;
  bool read = false;  // whether `selection` and `error` reflect the value
  std::optional<std::string> value_for_testing;
  PrintAfter selection;
  std::string error;  // not empty: the value names no pass
  std::ostream* out = nullptr;
};

Settings& settings() {
  static Settings s;
  return s;
}

std::string unknown_pass_message(std::string_view value) {
  const std::string name(value);
  return "AG_PRINT_AFTER=" + name + ": no optimisation pass is named '" + name +
         "'. The environment variable names the pass after which the optimiser prints each "
         "body to stderr (runtime/passes/passes.def registers the passes). Known passes: " +
         registered_pass_names() + "; or 'all' for every pass. Set it to one of them, or unset it.";
}

void select(Settings& s, std::string_view value) {
  s.selection = {};
  s.error.clear();
  if (value.empty()) return;
  if (value == "all") {
    s.selection.all = true;
    return;
  }
  const std::span<const PassInfo> passes = registered_passes();
  for (size_t i = 0; i < passes.size(); ++i) {
    if (passes[i].name == value) {
      s.selection.pass = int(i);
      return;
    }
  }
  s.error = unknown_pass_message(value);
}

}  // namespace

PrintAfter print_after() {
  Settings& s = settings();
  std::lock_guard lock(s.mu);
  if (!s.read) {
    const char* env = std::getenv("AG_PRINT_AFTER");
    select(s, s.value_for_testing ? std::string_view(*s.value_for_testing)
              : env               ? std::string_view(env)
                                  : std::string_view());
    s.read = true;
  }
  if (!s.error.empty()) throw InvalidArgumentError(s.error);
  return s.selection;
}

std::string print_after_header(std::string_view pass, int round, const BodyLocation& where) {
  std::string header = "*** IR Dump After " + std::string(pass);
  if (round > 0) header += " (round " + std::to_string(round) + ")";
  header += " on ";
  if (!where.function.empty()) {
    header += "function '" + where.function + "'";
    if (!where.path.empty()) header += ", body '" + where.path + "'";
  } else {
    header += where.path.empty() ? "the top-level body" : "body '" + where.path + "'";
  }
  return header + " ***";
}

void print_body_after(std::string_view pass, int round, const BodyLocation& where,
                      const graph::Body& body) {
  graph::TextOptions options;
  options.max_constant_elements = kPrintedConstantElements;
  const std::string dump =
      print_after_header(pass, round, where) + "\n" + graph::to_text(body, options);
  Settings& s = settings();
  std::lock_guard lock(s.mu);
  std::ostream& out = s.out ? *s.out : std::cerr;
  out << dump << std::flush;
}

void set_print_after_for_testing(std::optional<std::string> value, std::ostream* out) {
  Settings& s = settings();
  std::lock_guard lock(s.mu);
  s.value_for_testing = std::move(value);
  s.out = out;
  s.read = false;
}

}  // namespace ag::passes
