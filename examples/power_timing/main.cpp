// Seeing the speed-up (intro to graphs guide, "Seeing the speed-up").
//
// power() multiplies a 10x10 int32 matrix y times. Its loop is over a C++ int,
// so tracing unrolls it: the graph holds y matmul nodes and runs without
// per-op C++ dispatch. The checked output is the structure and the results
// (eager == graph); the timings go to stderr, since they vary from run to run.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor power(ag::Tensor x, int y) {
  ag::Tensor result = ag::eye(10, ag::int32);
  for (int i = 0; i < y; ++i) {
    result = ag::matmul(x, result);
  }
  return result;
}

namespace {

// Seconds for `calls` calls of f.
template <class F>
double seconds_for(int calls, F&& f) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
  ag::Tensor x = ag::random_uniform({10, 10}, -1, 2, ag::int32, /*seed=*/3);
  constexpr int kCalls = 1000;

  ag::run_functions_eagerly(true);
  ag::Tensor eager_result = power(x, 100);
  double eager_s = seconds_for(kCalls, [&] { power(x, 100); });
  ag::run_functions_eagerly(false);
  ag::Tensor graph_result = power(x, 100);
  double graph_s = seconds_for(kCalls, [&] { power(x, 100); });

  std::cerr << "Eager execution: " << eager_s << " seconds\n"
            << "Graph execution: " << graph_s << " seconds\n";

  auto power_as_graph = ag::function(power, {.name = "power", .arg_names = {"x", "y"}});
  ag::Graph graph =
      power_as_graph.get_concrete_function(ag::TensorSpec({10, 10}, ag::int32), 100).graph();
  std::vector<std::string> ops = graph.ops();
  std::cout << "power(x, 100): " << kCalls << " calls eagerly and " << kCalls
            << " as a graph (timings on stderr)\n";
  std::cout << "The graph has " << std::count(ops.begin(), ops.end(), "matmul")
            << " matmul nodes: the C++ loop was unrolled while tracing\n";
  std::cout << "traces of power: " << ag::function_of(&power).tracing_count() << "\n";
  std::cout << "eager result == graph result: "
            << (eager_result.values_string() == graph_result.values_string() ? "yes" : "no")
            << "\n";
  std::cout << "power(x, 3) =\n" << power(x, 3) << "\n";
}
