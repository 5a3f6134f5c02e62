// Loads the models torch_models.py exports (a folder per model: model.onnx
// and test_data_set_0/{input,output}_K.pb, PyTorch's outputs) with
// ag::onnx::load, runs each on its inputs and compares with PyTorch's
// outputs: integers and bools exactly, floats within 1e-3 of the output's
// scale (|ours - torch| <= 1e-3 * max |torch|, the largest magnitude of that
// output: random weights leave some nets' logits around 0.1, others' around
// 10, and float32's rounding grows with them).
//
// usage: onnx_torch_models --dir DIR --known-failures FILE
//
// One line per model: it agrees (with its largest error and times), or why
// not: the loader's error, which names the op type and the node. The
// known-failures file lists the models that fail today, a line each:
//
//   name  text its error contains  # why
//
// Exit status 1 when a model not listed fails, a listed one loads and
// agrees, fails with an error that does not contain its text, or has no
// folder in DIR: so the list stays true.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ag/onnx.h"
#include "tensor_proto.h"

namespace fs = std::filesystem;

namespace {

constexpr double kTolerance = 1e-3;

struct Known {
  std::string text;  // what the model's error must contain
  std::string why;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

std::map<std::string, Known> read_known_failures(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::map<std::string, Known> known;
  std::string line;
  while (std::getline(in, line)) {
    const size_t hash = line.find('#');
    const std::string entry = trim(line.substr(0, hash));
    if (entry.empty()) continue;
    const size_t space = entry.find_first_of(" \t");
    const std::string text = space == std::string::npos ? "" : trim(entry.substr(space));
    if (text.empty())
      throw std::runtime_error(path.string() + ": '" + entry + "' has no error text");
    known[entry.substr(0, space)] = {text,
                                     hash == std::string::npos ? "" : trim(line.substr(hash + 1))};
  }
  return known;
}

ag::Tensor read_tensor(const fs::path& path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file(path)))
    throw std::runtime_error(path.string() + " is not a TensorProto");
  return ag::onnx_io::tensor_from_proto(proto, path.filename().string());
}

std::vector<ag::Tensor> read_tensors(const fs::path& dir, const std::string& prefix) {
  std::vector<ag::Tensor> tensors;
  for (int k = 0;; ++k) {
    const fs::path path = dir / (prefix + std::to_string(k) + ".pb");
    if (!fs::exists(path)) return tensors;
    tensors.push_back(read_tensor(path));
  }
}

struct Difference {
  double absolute = 0;  // the largest |ours - torch|
  double relative = 0;  // the same divided by the output's largest |torch|
};

// Throws when `got` differs from `want`; returns the largest difference.
Difference max_error(const ag::Tensor& got, const ag::Tensor& want, size_t k) {
  const std::string which = "output " + std::to_string(k) + ": ";
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    throw std::runtime_error(which + "got " + got.spec().to_string() + ", expected " +
                             want.spec().to_string());
  }
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  const bool exact = !ag::is_floating(want.dtype());
  double scale = 0;
  Difference worst;
  for (double v : w)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < w.size(); ++i) {
    const double error = std::abs(g[i] - w[i]);
    const bool same = std::isnan(w[i]) ? std::isnan(g[i])
                      : exact          ? g[i] == w[i]
                                       : g[i] == w[i] || error <= kTolerance * scale;
    if (!same) {
      std::ostringstream s;
      s.precision(9);
      s << which << "element " << i << ": got " << g[i] << ", expected " << w[i]
        << " (the output's largest magnitude is " << scale << ")";
      throw std::runtime_error(s.str());
    }
    if (std::isfinite(w[i])) {
      worst.absolute = std::max(worst.absolute, error);
      if (scale > 0) worst.relative = std::max(worst.relative, error / scale);
    }
  }
  return worst;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// "" when the model loads and agrees with PyTorch, else why not; `summary`
// gets the largest error and the times.
std::string check(const fs::path& dir, std::string& summary) {
  try {
    auto start = std::chrono::steady_clock::now();
    const ag::onnx::Model model = ag::onnx::load((dir / "model.onnx").string());
    const double load_ms = ms_since(start);
    const fs::path data = dir / "test_data_set_0";
    const std::vector<ag::Tensor> inputs = read_tensors(data, "input_");
    const std::vector<ag::Tensor> expected = read_tensors(data, "output_");
    start = std::chrono::steady_clock::now();
    const std::vector<ag::Tensor> outputs = model(inputs);
    const double run_ms = ms_since(start);
    if (outputs.size() != expected.size()) {
      return std::to_string(outputs.size()) + " outputs, expected " +
             std::to_string(expected.size());
    }
    Difference worst;
    for (size_t k = 0; k < expected.size(); ++k) {
      const Difference e = max_error(outputs[k], expected[k], k);
      worst.absolute = std::max(worst.absolute, e.absolute);
      worst.relative = std::max(worst.relative, e.relative);
    }
    std::ostringstream s;
    s.precision(2);
    s << "max |error| " << worst.absolute << ", " << worst.relative
      << " of the largest |output|; load " << std::fixed << load_ms << " ms, run " << run_ms
      << " ms";
    summary = s.str();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir, known_path;
  for (int i = 1; i < argc; i += 2) {
    const std::string arg = argv[i];
    if (i + 1 == argc) {
      std::cerr << "onnx_torch_models: " << arg << " needs a value\n";
      return 2;
    } else if (arg == "--dir") {
      dir = argv[i + 1];
    } else if (arg == "--known-failures") {
      known_path = argv[i + 1];
    } else {
      std::cerr << "onnx_torch_models: unknown argument '" << arg << "'\n";
      return 2;
    }
  }
  if (dir.empty() || known_path.empty() || !fs::is_directory(dir)) {
    std::cerr << "usage: onnx_torch_models --dir DIR --known-failures FILE (DIR: the folder "
                 "torch_models.py wrote)\n";
    return 2;
  }
  std::map<std::string, Known> known;
  try {
    known = read_known_failures(known_path);
  } catch (const std::exception& e) {
    std::cerr << "onnx_torch_models: " << e.what() << "\n";
    return 2;
  }

  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(dir))
    if (fs::exists(entry.path() / "model.onnx")) models.push_back(entry.path());
  std::sort(models.begin(), models.end());

  int passed = 0, failed = 0, unexpected = 0;
  for (const fs::path& model : models) {
    const std::string name = model.filename().string();
    std::string summary;
    const std::string error = check(model, summary);
    const auto it = known.find(name);
    if (error.empty()) {
      ++passed;
      if (it != known.end()) {
        ++unexpected;
        std::cout << "PASS " << name << " (" << summary
                  << "), listed as a known failure: remove it from " << known_path.string() << "\n";
      } else {
        std::cout << "pass " << name << " (" << summary << ")\n";
      }
      continue;
    }
    ++failed;
    if (it == known.end()) {
      ++unexpected;
      std::cout << "FAIL " << name << ": " << error << "\n";
    } else if (error.find(it->second.text) == std::string::npos) {
      ++unexpected;
      std::cout << "FAIL " << name << ": " << error << "\n  the known failure list expects '"
                << it->second.text << "' (" << it->second.why << ")\n";
    } else {
      std::cout << "known failure " << name << ": " << error << "\n";
    }
  }
  for (const auto& [name, entry] : known) {
    if (!fs::exists(dir / name / "model.onnx")) {
      ++unexpected;
      std::cout << "FAIL " << name << ": listed as a known failure, but there is no such model\n";
    }
  }
  std::cout << "torch models: " << passed << " passed, " << failed << " failed; " << unexpected
            << " unexpected\n";
  return unexpected == 0 ? 0 : 1;
}
