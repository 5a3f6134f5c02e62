// The quickstart demo: one screen that shows what autograph-cpp does.
//
// user_function.cpp holds two functions marked AG_FUNCTION. The build runs agc
// on that file (autograph_transpile in CMakeLists.txt) and compiles the
// generated file in its place. This program prints, in order: the user's
// function, what agc generated for it, the traced signatures, the graph (and a
// DOT file), the optimised graph and its plan, eager vs graph results, and the
// speed-up of graph execution.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "user_function.h"

namespace {

namespace fs = std::filesystem;

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.empty()) lines.push_back("(could not read " + path.string() + ")");
  return lines;
}

// The lines from the first one containing `first` to the next one containing
// `last` (or to the end if `last` is empty), without #line markers.
void print_range(const std::vector<std::string>& lines, const std::string& first,
                 const std::string& last) {
  bool on = false;
  for (const std::string& line : lines) {
    if (!on && line.find(first) != std::string::npos) on = true;
    if (!on || line.starts_with("#line")) continue;
    std::cout << "    " << line << "\n";
    if (!last.empty() && line.find(last) != std::string::npos) return;
  }
}

std::string shown_path(const fs::path& path) {
  return fs::proximate(path).string();
}

void print_indented(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) std::cout << "    " << line << "\n";
  }
}

void heading(int n, const std::string& title) {
  std::cout << "\n" << n << ". " << title << "\n";
}

bool same(const ag::Tensor& a, const ag::Tensor& b) {
  return a.spec() == b.spec() && a.values_string() == b.values_string();
}

// The best of 5 timings of `calls` calls (the machine may be busy).
template <class F>
double seconds_for(int calls, F&& f) {
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  std::cout << "autograph-cpp quickstart: C++ functions traced into graphs, as tf.function\n";

  heading(1, "Your functions, marked AG_FUNCTION (" + shown_path(AG_QUICKSTART_SOURCE) + ")");
  print_range(read_lines(AG_QUICKSTART_SOURCE), "AG_FUNCTION", "");

  heading(2, "What agc generated for tanh_loop (" + shown_path(AG_QUICKSTART_GENERATED) + ")");
  print_range(read_lines(AG_QUICKSTART_GENERATED), "agc_impl_tanh_loop(", "agc_fn_tanh_loop(x); }");
  std::cout << "  The while on a tensor became ag::while_stmt; power() has no tensor\n"
               "  control flow, so its body is kept and only wrapped the same way.\n";

  heading(3,
          "Traced signatures after one call on a float32 vector of 3\n"
          "   (ag::function_of(&tanh_loop).pretty_printed_concrete_signatures())");
  ag::Tensor x = ag::constant({1.0, 2.0, 3.0});
  ag::Tensor graph_result = tanh_loop(x);
  print_indented(ag::function_of(&tanh_loop).pretty_printed_concrete_signatures());

  // Calling a marked function while tracing inlines it, so wrapping it in
  // ag::function gives access to its concrete function and graph.
  auto traced = ag::function(tanh_loop, {.name = "tanh_loop", .arg_names = {"x"}});
  ag::Graph graph = traced.get_concrete_function(ag::TensorSpec({3}, ag::float32)).graph();
  fs::path dot_path = fs::weakly_canonical(fs::path(argv[0])).parent_path() / "tanh_loop.dot";
  std::ofstream(dot_path) << graph.to_dot();
  heading(4, "The graph (get_concrete_function(spec).graph().to_string()): inputs -> op");
  print_indented(graph.to_string());
  std::cout << "  DOT file: " << shown_path(dot_path) << "  (view: dot -Tpng -O "
            << shown_path(dot_path) << ")\n";

  heading(5,
          "The graph that runs, after the optimisation passes (optimized_graph()),\n"
          "   and what the executor compiled it into (plan_stats())");
  auto traced_mse = ag::function(mean_squared_error, {.name = "mse", .arg_names = {"a", "b"}});
  auto mse = traced_mse.get_concrete_function(ag::TensorSpec({1000000}, ag::float32),
                                              ag::TensorSpec({1000000}, ag::float32));
  std::cout << "  mean_squared_error on two float32 vectors of 1e6, as traced:\n";
  print_indented(mse.graph().to_string());
  std::cout << "  optimised: one loop over a and b, no intermediate buffer\n";
  print_indented(mse.optimized_graph().to_string());
  std::cout << "  plan: " << mse.plan_stats().to_string() << "\n";
  auto concrete = traced.get_concrete_function(ag::TensorSpec({3}, ag::float32));
  fs::path optimized_dot_path = dot_path.parent_path() / "tanh_loop.optimized.dot";
  std::ofstream(optimized_dot_path) << concrete.optimized_graph().to_dot();
  std::cout << "  tanh_loop's plan: " << concrete.plan_stats().to_string() << "\n"
            << "  its optimised graph with the loop's condition and body: "
            << shown_path(optimized_dot_path) << "\n";

  heading(6, "Eager (plain C++, ag::run_functions_eagerly(true)) vs graph");
  ag::run_functions_eagerly(true);
  ag::Tensor eager_result = tanh_loop(x);
  ag::Tensor m = ag::random_uniform({10, 10}, -1, 2, ag::int32, /*seed=*/42);
  ag::Tensor eager_power = power(m, 100);
  ag::run_functions_eagerly(false);
  ag::Tensor graph_power = power(m, 100);
  std::cout << "  tanh_loop(" << x.values_string() << ") = " << graph_result.values_string()
            << "\n";
  bool equal = same(eager_result, graph_result) && same(eager_power, graph_power);
  std::cout << (equal ? "  eager == graph" : "  eager != graph: MISMATCH")
            << " for tanh_loop and power(x, 100)\n";

  heading(7, "Speed-up of power(x, 100) on a 10x10 int32 matrix (best of 5 x 200 calls)");
  constexpr int kCalls = 200;
  auto traced_power = ag::function(power, {.name = "power", .arg_names = {"x", "y"}});
  ag::Graph power_graph =
      traced_power.get_concrete_function(ag::TensorSpec({10, 10}, ag::int32), 100).graph();
  std::cout << "  The int loop unrolls into one graph of " << power_graph.num_nodes()
            << " nodes, run without per-op C++ dispatch.\n";
  ag::run_functions_eagerly(true);
  double eager_s = seconds_for(kCalls, [&] { power(m, 100); });
  ag::run_functions_eagerly(false);
  double graph_s = seconds_for(kCalls, [&] { power(m, 100); });
  std::ostringstream line;
  line.setf(std::ios::fixed);
  line.precision(1);
  line << "  eager " << eager_s * 1e3 << " ms, graph " << graph_s * 1e3 << " ms: graph is "
       << eager_s / graph_s << "x faster\n";
  std::cout << line.str();
  return equal ? 0 : 1;
}
