// What the examples that train on 8x8 digits share: scikit-learn's digits,
// read from the digits.csv.gz that Debian's python3-sklearn ships (1797
// images, 64 pixels from 0 to 16 and a label per row), or a synthetic set of
// noisy class templates where it is missing. Link ZLIB::ZLIB.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <ag/ag.h>

namespace example {

inline constexpr const char* kSklearnDigits =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

struct Digits {
  ag::Tensor images;  // float32 [n, 8, 8, 1], pixels scaled to [0, 1]
  ag::Tensor labels;  // int32 [n]
};

// The rows of scikit-learn's digits.csv.gz, or nothing when the file cannot
// be read.
inline std::optional<Digits> read_digits(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return std::nullopt;
  std::vector<float> pixels;
  std::vector<int32_t> labels;
  std::string text;
  char buffer[1 << 14];
  for (int n; (n = gzread(file, buffer, sizeof buffer)) > 0;) text.append(buffer, size_t(n));
  gzclose(file);
  size_t at = 0;
  while (at < text.size()) {
    for (int column = 0; column < 65; ++column) {
      size_t end = text.find_first_of(",\n", at);
      if (end == std::string::npos) end = text.size();
      const int value = std::stoi(text.substr(at, end - at));
      if (column < 64)
        pixels.push_back(float(value) / 16.0f);
      else
        labels.push_back(value);
      at = end + 1;
    }
  }
  const auto n = int64_t(labels.size());
  return Digits{ag::constant(pixels, {n, 8, 8, 1}), ag::constant(labels, {n})};
}

// Ten random 8x8 templates, each image one of them plus noise.
inline Digits synthetic_digits(int64_t n) {
  const ag::Tensor templates = ag::random_uniform({10, 8, 8, 1}, 0.0, 1.0, ag::float32, 1);
  const ag::Tensor labels = ag::cast(ag::random_uniform({n}, 0.0, 10.0, ag::float32, 2), ag::int32);
  const ag::Tensor noise = ag::random_normal({n, 8, 8, 1}, 0.0, 0.3, ag::float32, 3);
  return {ag::gather(templates, labels) + noise, labels};
}

// The digits at `path`, or the synthetic set (of as many) with `synthetic`
// or when the file cannot be read. Says which on `out`, with a note when the
// file is missing.
inline Digits load_digits(const std::string& path, bool synthetic, std::ostream& out) {
  std::optional<Digits> data = synthetic ? std::nullopt : read_digits(path);
  if (data) {
    out << "data: " << data->labels.shape()[0] << " 8x8 digits from scikit-learn\n";
    return *data;
  }
  if (!synthetic) out << "note: " << path << " is missing (apt-get install python3-sklearn)\n";
  out << "data: 1797 synthetic 8x8 images of 10 noisy templates\n";
  return synthetic_digits(1797);
}

// The first `n` examples and the rest.
inline std::pair<Digits, Digits> split_digits(const Digits& data, int64_t n) {
  const int64_t total = data.labels.shape()[0];
  return {{ag::slice(data.images, {0, 0, 0, 0}, {n, 8, 8, 1}), ag::slice(data.labels, {0}, {n})},
          {ag::slice(data.images, {n, 0, 0, 0}, {total - n, 8, 8, 1}),
           ag::slice(data.labels, {n}, {total - n})}};
}

}  // namespace example
