// Runs ONNX backend conformance tests (a folder per test: model.onnx and
// test_data_set_N/{input,output}_K.pb) through ag::onnx::load and compares
// the outputs at ONNX's tolerances (rtol 1e-3, atol 1e-7).
//
// usage: onnx_conformance --suite DIR [--known-failures FILE] [--report FILE.md]
//                         [--filter TEXT] [--verbose]
//
// Each test passes, fails, or is unsupported (an op type, dtype or attribute
// we do not map: the UnimplementedError of the loader). Exit status 1 when a
// test fails that the known-failures file does not list, or one it lists
// passes (so that the list stays true); the file has a test name per line,
// then '#' and why.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "ag/onnx.h"
#include "importer.h"
#include "tensor_proto.h"

namespace fs = std::filesystem;

namespace {

enum class Status { Passed, Failed, Unsupported };

struct Result {
  std::string test;
  Status status;
  std::string detail;
  std::set<std::string> op_types;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void collect_op_types(const onnx::GraphProto& graph, std::set<std::string>& out) {
  for (const auto& node : graph.node()) {
    out.insert(node.domain().empty() || node.domain() == "ai.onnx"
                   ? node.op_type()
                   : node.domain() + "." + node.op_type());
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) collect_op_types(attr.g(), out);
      for (const auto& g : attr.graphs()) collect_op_types(g, out);
    }
  }
}

// The first difference between `got` and `want`, or "" when they match.
std::string compare(const ag::Tensor& got, const ag::Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + got.spec().to_string() + ", expected " + want.spec().to_string();
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  const bool exact = !ag::is_floating(want.dtype());
  for (size_t i = 0; i < w.size(); ++i) {
    bool same =
        exact ? g[i] == w[i]
              : (std::isnan(w[i])
                     ? std::isnan(g[i])
                     : (g[i] == w[i] || std::abs(g[i] - w[i]) <= 1e-7 + 1e-3 * std::abs(w[i])));
    if (!same) {
      std::ostringstream s;
      s.precision(9);
      s << "element " << i << ": got " << g[i] << ", expected " << w[i];
      return s.str();
    }
  }
  return "";
}

ag::Tensor read_tensor(const fs::path& path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file(path)))
    throw ag::UnimplementedError(path.filename().string() + " is not a TensorProto");
  return ag::onnx_io::tensor_from_proto(proto, path.filename().string());
}

// ONNX's test data holds BFLOAT16 values as UINT16 tensors of their bits
// (NumPy has no bfloat16): a value the graph declares BFLOAT16 is read so.
std::vector<bool> declared_bfloat16(
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
    const onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  std::vector<bool> out;
  for (const auto& v : values) {
    if (initializers.count(v.name())) continue;
    out.push_back(v.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16);
  }
  return out;
}

ag::Tensor as_declared(const ag::Tensor& t, const std::vector<bool>& bfloat16, size_t k) {
  if (k >= bfloat16.size() || !bfloat16[k] || t.dtype() != ag::uint16) return t;
  ag::Tensor bits = ag::empty(t.shape(), ag::bfloat16);
  std::memcpy(bits.raw_mutable_data(), t.raw_data(), size_t(t.num_elements()) * 2);
  return bits;
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0; fs::exists(dir / (prefix + std::to_string(k) + ".pb")); ++k)
    files.push_back(dir / (prefix + std::to_string(k) + ".pb"));
  return files;
}

Result run_test(const fs::path& dir) {
  Result r{dir.filename().string(), Status::Passed, "", {}};
  const std::string bytes = read_file(dir / "model.onnx");
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes))
    return {r.test, Status::Failed, "model.onnx does not parse", {}};
  collect_op_types(proto.graph(), r.op_types);
  for (const std::string& op : r.op_types) {
    if (!ag::onnx_io::find_importer(op))
      return {r.test, Status::Unsupported, "op " + op, r.op_types};
  }
  try {
    ag::onnx::Model model = ag::onnx::load_from_bytes(bytes, r.test);
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(entry.path());
    std::sort(sets.begin(), sets.end());
    const std::vector<bool> bf16_in = declared_bfloat16(proto.graph().input(), proto.graph());
    const std::vector<bool> bf16_out = declared_bfloat16(proto.graph().output(), proto.graph());
    for (const fs::path& set : sets) {
      std::vector<ag::Tensor> inputs;
      for (const fs::path& p : numbered(set, "input_"))
        inputs.push_back(as_declared(read_tensor(p), bf16_in, inputs.size()));
      std::vector<ag::Tensor> outputs = model(inputs);
      std::vector<fs::path> expected = numbered(set, "output_");
      if (expected.size() != outputs.size()) {
        return {r.test, Status::Failed,
                std::to_string(outputs.size()) + " outputs, expected " +
                    std::to_string(expected.size()),
                r.op_types};
      }
      for (size_t k = 0; k < expected.size(); ++k) {
        std::string diff = compare(outputs[k], as_declared(read_tensor(expected[k]), bf16_out, k));
        if (!diff.empty()) {
          return {r.test, Status::Failed,
                  set.filename().string() + " output " + std::to_string(k) + ": " + diff,
                  r.op_types};
        }
      }
    }
  } catch (const ag::UnimplementedError& e) {
    return {r.test, Status::Unsupported, e.message(), r.op_types};
  } catch (const std::exception& e) {
    return {r.test, Status::Failed, e.what(), r.op_types};
  }
  return r;
}

std::map<std::string, std::string> read_known_failures(const std::string& path) {
  std::map<std::string, std::string> known;
  if (path.empty()) return known;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t hash = line.find('#');
    std::string name = line.substr(0, hash);
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) continue;
    known[name] = hash == std::string::npos ? "" : line.substr(hash + 1);
  }
  return known;
}

void write_report(const std::string& path, const std::string& suite,
                  const std::vector<Result>& results) {
  struct Counts {
    int passed = 0, failed = 0, unsupported = 0;
  };
  std::map<std::string, Counts> by_op;
  Counts total;
  for (const Result& r : results) {
    for (const std::string& op : r.op_types) {
      Counts& c = by_op[op];
      (r.status == Status::Passed   ? c.passed
       : r.status == Status::Failed ? c.failed
                                    : c.unsupported)++;
    }
    (r.status == Status::Passed   ? total.passed
     : r.status == Status::Failed ? total.failed
                                  : total.unsupported)++;
  }
  std::ofstream out(path);
  out << "| op type | passed | failed | unsupported |\n| --- | ---: | ---: | ---: |\n";
  for (const auto& [op, c] : by_op)
    out << "| " << op << " | " << c.passed << " | " << c.failed << " | " << c.unsupported << " |\n";
  out << "| **all tests of " << suite << "** | **" << total.passed << "** | **" << total.failed
      << "** | **" << total.unsupported << "** |\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string suite, known_path, report, filter;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "onnx_conformance: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--suite")
      suite = value();
    else if (arg == "--known-failures")
      known_path = value();
    else if (arg == "--report")
      report = value();
    else if (arg == "--filter")
      filter = value();
    else if (arg == "--verbose")
      verbose = true;
    else {
      std::cerr << "onnx_conformance: unknown argument '" << arg << "'\n";
      return 2;
    }
  }
  if (suite.empty() || !fs::is_directory(suite)) {
    std::cerr
        << "onnx_conformance: --suite must name a folder of ONNX tests (got '" << suite
        << "'); Debian's libonnx-testdata installs them under /usr/share/libonnx-testdata/data\n";
    return 2;
  }
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(suite))
    if (fs::exists(entry.path() / "model.onnx") &&
        entry.path().filename().string().find(filter) != std::string::npos)
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());

  std::map<std::string, std::string> known = read_known_failures(known_path);
  std::vector<Result> results;
  int passed = 0, failed = 0, unsupported = 0, unexpected = 0;
  for (const fs::path& dir : dirs) {
    Result r = run_test(dir);
    const bool is_known = known.count(r.test) > 0;
    if (r.status == Status::Passed) {
      ++passed;
      if (is_known) {
        ++unexpected;
        std::cout << "PASS (listed as a known failure; remove it from the list) " << r.test << "\n";
      } else if (verbose) {
        std::cout << "pass " << r.test << "\n";
      }
    } else if (r.status == Status::Failed) {
      ++failed;
      if (!is_known) ++unexpected;
      std::cout << (is_known ? "known failure " : "FAIL ") << r.test << ": " << r.detail << "\n";
    } else {
      ++unsupported;
      if (verbose) std::cout << "unsupported " << r.test << ": " << r.detail << "\n";
    }
    results.push_back(std::move(r));
  }
  std::cout << fs::path(suite).filename().string() << ": " << passed << " passed, " << failed
            << " failed, " << unsupported << " unsupported of " << results.size() << " tests\n";
  if (!report.empty()) write_report(report, fs::path(suite).filename().string(), results);
  return unexpected == 0 ? 0 : 1;
}
