// What every benchmark binary in tools/bench shares: the result checks run
// before timing (a failed check exits with status 2, so run.sh reports it),
// and the console reporter that annotates each row with its ratios. The
// summary table with the targets is not here: tools/bench/summarize.py makes
// it from the JSON results of all binaries, in one place.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <ag/ag.h>

namespace ag_bench {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "result check failed: %s\n", what.c_str());
  std::exit(2);
}

// How far a floating-point result may be from the expected one:
// absolute + relative * |expected|. Integers must be equal.
struct Tolerance {
  double absolute;
  double relative;
};

// The first element of `actual` not within `tolerance` of `expected`, said
// as "differs at <index>: expected <e>, got <a>"; empty where all are.
template <class T>
std::string first_difference(const T* expected, const T* actual, int64_t n, Tolerance tolerance) {
  for (int64_t i = 0; i < n; ++i) {
    double e = double(expected[i]), a = double(actual[i]);
    double bound =
        std::is_floating_point_v<T> ? tolerance.absolute + tolerance.relative * std::abs(e) : 0.0;
    if (!(std::abs(e - a) <= bound) && !(std::isinf(e) && e == a)) {
      return "differs at " + std::to_string(i) + ": expected " + std::to_string(e) + ", got " +
             std::to_string(a);
    }
  }
  return "";
}

template <class T>
void check_close(const std::string& what, const T* expected, const T* actual, int64_t n,
                 Tolerance tolerance) {
  const std::string difference = first_difference(expected, actual, n, tolerance);
  if (!difference.empty()) fail(what + " " + difference);
}

template <class T>
void check_close(const std::string& what, const std::vector<T>& expected,
                 const std::vector<T>& actual, Tolerance tolerance) {
  if (expected.size() != actual.size()) fail(what + ": sizes differ");
  check_close(what, expected.data(), actual.data(), int64_t(expected.size()), tolerance);
}

// The float32 values of tensors[from...], for the checks.
inline std::vector<std::vector<float>> values_of(const std::vector<ag::Tensor>& tensors,
                                                 size_t from = 0) {
  std::vector<std::vector<float>> out;
  for (size_t i = from; i < tensors.size(); ++i) out.push_back(tensors[i].to_vector<float>());
  return out;
}

inline float largest_magnitude(const std::vector<float>& values) {
  float largest = 0;
  for (float v : values) largest = std::max(largest, std::abs(v));
  return largest;
}

// Results that sum in another order (another library, another loop): each
// vector within `relative` of (1 + its largest expected magnitude), so that
// the bound follows the results' scale and a vector near zero is held to
// `relative` itself.
inline void check_all_close(const std::string& what,
                            const std::vector<std::vector<float>>& expected,
                            const std::vector<std::vector<float>>& actual, double relative = 1e-3) {
  if (expected.size() != actual.size()) fail(what + ": counts differ");
  for (size_t i = 0; i < expected.size(); ++i) {
    check_close(what + " " + std::to_string(i), expected[i], actual[i],
                {relative * (1 + largest_magnitude(expected[i])), 0});
  }
}

// Graph and eager run the same kernels, so they must agree bit for bit.
inline void check_same(const std::string& what, const ag::Tensor& eager, const ag::Tensor& graph) {
  if (eager.dtype() != graph.dtype() || eager.shape() != graph.shape() ||
      std::memcmp(eager.raw_data(), graph.raw_data(),
                  size_t(eager.num_elements()) * ag::dtype_size(eager.dtype())) != 0) {
    fail(what + ": graph and eager results differ");
  }
}

// Rows are named <workload>/<variant>: hand variants start with "hand"
// (hand_loops, hand_eigen, ...), then eager and graph. Each row that is not
// a hand variant gets the counters x_hand (its median over the fastest hand
// variant's) and, unless it is eager, x_eager; a row with the counter
// `iters` (loop iterations per call) gets ns_per_iter. With repetitions,
// only the medians are annotated. The rows are printed when the binary
// ends, so that the ratios hold in any order (run.sh interleaves the
// repetitions of all rows at random).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(OO_None) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    runs_.insert(runs_.end(), runs.begin(), runs.end());
  }

  void Finalize() override {
    std::map<std::string, double> medians;    // ns, by full name
    std::map<std::string, double> best_hand;  // ns, by workload
    auto annotated = [](const Run& run) {
      return !(run.run_type == Run::RT_Iteration && run.repetitions > 1) &&
             !(run.run_type == Run::RT_Aggregate && run.aggregate_name != "median");
    };
    auto ns_of = [](const Run& run) {
      return run.GetAdjustedCPUTime() * 1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit);
    };
    for (const Run& run : runs_) {
      if (!annotated(run)) continue;
      const std::string name = run.run_name.function_name;
      const double ns = ns_of(run);
      medians[name] = ns;
      const size_t slash = name.find('/');
      if (slash != std::string::npos && name.compare(slash + 1, 4, "hand") == 0) {
        auto [it, inserted] = best_hand.try_emplace(name.substr(0, slash), ns);
        it->second = std::min(it->second, ns);
      }
    }
    for (Run& run : runs_) {
      if (!annotated(run)) continue;
      const std::string name = run.run_name.function_name;
      const size_t slash = name.find('/');
      const std::string workload = name.substr(0, slash);
      const std::string variant = slash == std::string::npos ? "" : name.substr(slash + 1);
      const double ns = ns_of(run);
      if (auto it = run.counters.find("iters"); it != run.counters.end() && it->second.value > 0) {
        run.counters["ns_per_iter"] = ns / it->second.value;
      }
      if (variant.rfind("hand", 0) == 0) continue;
      if (auto it = best_hand.find(workload); it != best_hand.end()) {
        run.counters["x_hand"] = ns / it->second;
      }
      if (auto it = medians.find(workload + "/eager"); variant != "eager" && it != medians.end()) {
        run.counters["x_eager"] = ns / it->second;
      }
    }
    ConsoleReporter::ReportRuns(runs_);
    ConsoleReporter::Finalize();
  }

 private:
  std::vector<Run> runs_;
};

// The hand-written MSE's loop: the sum of squared differences with 16
// partial sums, which break the add chain, so GCC vectorises it without
// -ffast-math.
inline float sum_of_squares(const float* a, const float* b, int64_t n) {
  constexpr int kLanes = 16;
  float partial[kLanes] = {};
  const int64_t body = n - n % kLanes;
  for (int64_t i = 0; i < body; i += kLanes) {
    for (int q = 0; q < kLanes; ++q) {
      float d = a[i + q] - b[i + q];
      partial[q] += d * d;
    }
  }
  float sum = 0;
  for (int64_t i = body; i < n; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  for (float p : partial) sum += p;
  return sum;
}

// The guide workloads by hand (control_bench.cpp describes them).
// collatz over a vector: the graph's algorithm, one fused pass per step: all
// elements advance together until the largest is 1. `x` is overwritten.
inline int32_t collatz_hand(int32_t* x, int64_t n) {
  int32_t steps = 0;
  int32_t max = 0;
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  while (max > 1) {
    max = 0;
    for (int64_t i = 0; i < n; ++i) {
      int32_t v = x[i];
      if (v > 1) v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      x[i] = v;
      max = std::max(max, v);
    }
    ++steps;
  }
  return steps;
}

// dynamic_rnn: input [batch, time, features] -> output [batch, time, features].
inline void dynamic_rnn_hand(const float* input, const float* init, float* out, int64_t batch,
                             int64_t time, int64_t features) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* s = init + b * features;
    for (int64_t t = 0; t < time; ++t) {
      const float* in = input + (b * time + t) * features;
      float* o = out + (b * time + t) * features;
      for (int64_t f = 0; f < features; ++f) o[f] = in[f] + s[f];
      s = o;
    }
  }
}

// ---- Workloads for the peer scripts ------------------------------------------------------
// run.sh names a folder in AG_BENCH_MODELS where ONNX Runtime or PyTorch is
// installed; the benchmarks write their workloads there for tools/bench/peers.py
// (ONNX models) and tools/bench/pytorch_peers.py (training steps).

// The folder, or "" when none is named.
inline std::string peer_folder() {
  const char* folder = std::getenv("AG_BENCH_MODELS");
  return folder ? folder : "";
}

// The values as raw float32, row-major.
inline void write_floats(const std::string& path, const ag::Tensor& t) {
  const std::vector<float> values = ag::cast(t, ag::float32).to_vector<float>();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
}

// "[64, 784]"
inline std::string shape_json(const ag::Tensor& t) {
  std::string json = "[";
  for (int d = 0; d < t.rank(); ++d) json += (d ? ", " : "") + std::to_string(t.shape()[d]);
  return json + "]";
}

// One training step for tools/bench/pytorch_peers.py, which runs the same
// step from the same tensors and checks it against this runtime's: each
// tensor (the batch, class labels, the initial weights, and this runtime's
// weights after one step, named "<weight>.updated") in <name>.<tensor>.f32,
// and <name>.json with the step's kind, learning rate, first loss and the
// tensors' shapes in order.
inline void write_training_step(const std::string& name, const std::string& kind,
                                float learning_rate, float loss,
                                const std::vector<std::pair<std::string, ag::Tensor>>& tensors) {
  const std::string folder = peer_folder();
  if (folder.empty()) return;
  const std::string base = folder + "/" + name;
  char numbers[64];
  std::snprintf(numbers, sizeof numbers, "%.9g, \"loss\": %.9g", learning_rate, loss);
  std::string json =
      "{\"kind\": \"" + kind + "\", \"learning_rate\": " + numbers + ", \"tensors\": [";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [tensor, value] = tensors[i];
    write_floats(base + "." + tensor + ".f32", value);
    json += std::string(i ? ", " : "") + "[\"" + tensor + "\", " + shape_json(value) + "]";
  }
  std::ofstream(base + ".json") << json << "]}\n";
}

}  // namespace ag_bench
