// The base of the layers: Keras's names, build on the first call, the input
// checks (Keras's InputSpec), the variables' paths, initializers and
// activations.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>

#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"
#include "ag/rnn.h"

namespace ag::layers {

namespace {

// Keras's unique names: "dense", "dense_1", "dense_2", ...
std::string unique_name(std::string_view base) {
  static std::mutex mu;
  static std::map<std::string, int, std::less<>> counts;
  std::lock_guard lock(mu);
  int n = counts[std::string(base)]++;
  return n == 0 ? std::string(base) : std::string(base) + "_" + std::to_string(n);
}

// A seed for an initializer without one: each layer gets other values, and a
// program that makes its layers in the same order gets the same ones.
uint64_t next_default_seed() {
  static std::atomic<uint64_t> next{1337};
  return next.fetch_add(1);
}

// splitmix64: a small, portable generator, so that the initial values are
// the same on every platform and standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // In [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double normal() {
    double u1 = 1.0 - uniform();  // in (0, 1]: the log is finite
    double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  // A normal truncated to two standard deviations, as Keras's TruncatedNormal.
  double truncated_normal() {
    for (;;) {
      double z = normal();
      if (std::abs(z) <= 2.0) return z;
    }
  }

 private:
  uint64_t state_;
};

struct Fans {
  double in, out;
};

// Keras's _compute_fans: [in, out] for a matrix, [receptive..., in, out]
// for a kernel.
Fans fans_of(const Shape& shape) {
  if (shape.rank() < 1) return {1, 1};
  if (shape.rank() == 1) return {double(shape[0]), double(shape[0])};
  double receptive = 1;
  for (int i = 0; i + 2 < shape.rank(); ++i) receptive *= double(shape[i]);
  return {double(shape.dim(-2)) * receptive, double(shape.dim(-1)) * receptive};
}

// Keras's VarianceScaling: uniform in [-limit, limit] or a truncated normal,
// of variance scale / fan.
std::vector<double> variance_scaling(Random& random, int64_t n, double scale, double fan,
                                     bool uniform) {
  std::vector<double> values(static_cast<size_t>(n));
  if (uniform) {
    double limit = std::sqrt(3.0 * scale / fan);
    for (double& v : values) v = (2.0 * random.uniform() - 1.0) * limit;
  } else {
    // 0.8796...: the standard deviation of a unit normal truncated at 2.
    double stddev = std::sqrt(scale / fan) / 0.87962566103423978;
    for (double& v : values) v = random.truncated_normal() * stddev;
  }
  return values;
}

// Keras's Orthogonal: the kernel as a matrix [product of the leading dims,
// last dim] with orthonormal columns (or rows, when it is wider than tall),
// from a normal matrix orthonormalised by Gram-Schmidt.
std::vector<double> orthogonal(Random& random, const Shape& shape) {
  const int64_t cols = shape.rank() == 0 ? 1 : shape.dim(-1);
  const int64_t rows = cols == 0 ? 0 : shape.num_elements() / cols;
  const int64_t tall = std::max(rows, cols), wide = std::min(rows, cols);
  std::vector<double> q(static_cast<size_t>(tall * wide));  // [tall, wide]
  for (double& v : q) v = random.normal();
  auto at = [&](int64_t i, int64_t j) -> double& { return q[size_t(i * wide + j)]; };
  for (int64_t j = 0; j < wide; ++j) {
    for (int64_t k = 0; k < j; ++k) {
      double dot = 0;
      for (int64_t i = 0; i < tall; ++i) dot += at(i, j) * at(i, k);
      for (int64_t i = 0; i < tall; ++i) at(i, j) -= dot * at(i, k);
    }
    double norm = 0;
    for (int64_t i = 0; i < tall; ++i) norm += at(i, j) * at(i, j);
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < tall; ++i) at(i, j) /= norm;
  }
  if (rows >= cols) return q;
  std::vector<double> t(q.size());  // [rows, cols] = q^T
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[size_t(i * cols + j)] = at(j, i);
  return t;
}

}  // namespace

Tensor initial_value(const Initializer& init, const Shape& shape, DType dtype) {
  if (!shape.is_fully_defined())
    throw InvalidArgumentError("initializer '" + init.name + "': the shape " + shape.to_string() +
                               " has an unknown dim; weights need a known shape");
  if (dtype != DType::float32 && dtype != DType::float64)
    throw InvalidArgumentError("initializer '" + init.name + "': weights of dtype " +
                               std::string(dtype_name(dtype)) +
                               " are not supported; use float32 or float64");
  const int64_t n = shape.num_elements();
  Random random(init.seed ? *init.seed : next_default_seed());
  Fans fans = fans_of(shape);
  std::vector<double> values;
  const std::string& name = init.name;
  if (name == "zeros" || name == "ones") {
    values.assign(size_t(n), name == "ones" ? 1.0 : 0.0);
  } else if (name == "uniform") {
    values.resize(size_t(n));
    for (double& v : values) v = (random.uniform() * 2.0 - 1.0) * 0.05;
  } else if (name == "glorot_uniform" || name == "glorot_normal") {
    values = variance_scaling(random, n, 1.0, (fans.in + fans.out) / 2, name == "glorot_uniform");
  } else if (name == "he_uniform" || name == "he_normal") {
    values = variance_scaling(random, n, 2.0, fans.in, name == "he_uniform");
  } else if (name == "orthogonal") {
    values = orthogonal(random, shape);
  } else if (name == "lecun_uniform") {
    values = variance_scaling(random, n, 1.0, fans.in, true);
  } else {
    throw InvalidArgumentError("unknown initializer '" + name +
                               "'; expected one of glorot_uniform, glorot_normal, he_uniform, "
                               "he_normal, lecun_uniform, zeros, ones, uniform, orthogonal");
  }
  if (dtype == DType::float32)
    return constant(std::vector<float>(values.begin(), values.end()), shape);
  Tensor t = empty(shape, DType::float64);  // constant() would infer float32
  std::copy(values.begin(), values.end(), t.mutable_data<double>());
  return t;
}

void check_activation(const std::string& activation) {
  if (activation.empty() || activation == "linear" || activation == "softmax") return;
  rnn::activation(activation);  // throws for an unknown name
}

Tensor activate(const Tensor& x, const std::string& activation, CallSite site) {
  if (activation.empty() || activation == "linear") return x;
  if (activation == "softmax") return softmax(x, -1, site);
  return rnn::activation(activation)(x, site);
}

Layer::Layer(std::string_view default_name, std::string name)
    : name_(name.empty() ? unique_name(default_name) : std::move(name)) {}

std::string Layer::where(CallSite site) const {
  std::string file = site.file_name();
  if (size_t slash = file.find_last_of('/'); slash != std::string::npos) file.erase(0, slash + 1);
  return "layer '" + name_ + "' (" + std::string(class_name()) + ") called at " + file + ":" +
         std::to_string(site.line());
}

void Layer::check_input(const Shape& shape, CallSite site) const {
  if (shape.has_unknown_rank())
    throw ValueError(where(site) +
                     ": the input's rank is unknown; layers need inputs of a known "
                     "rank (give the function an input_signature with one)");
  const int64_t rank = shape.rank();
  if (input_rank() > 0 && rank != input_rank())
    throw ValueError(where(site) + ": expected an input of rank " + std::to_string(input_rank()) +
                     ", but got one of shape " + shape.to_string() +
                     "; reshape it (ag::reshape, ag::expand_dims) to rank " +
                     std::to_string(input_rank()));
  if (rank < min_input_rank())
    throw ValueError(where(site) + ": expected an input of rank " +
                     std::to_string(min_input_rank()) + " or more, but got one of shape " +
                     shape.to_string() + "; reshape it (ag::reshape, ag::expand_dims) to add axes");
  const int64_t axis = fixed_axis();
  if (axis != 0 && (axis >= rank || axis < -rank))
    throw ValueError(where(site) + ": its axis " + std::to_string(axis) +
                     " is outside an input of shape " + shape.to_string() +
                     "; give the layer an axis in [-rank, rank) of its inputs");
  if (!built_) return;
  if (fixed_axis() != 0 && built_fixed_dim_ >= 0) {
    int64_t got = shape.dim(int(fixed_axis()));
    if (got != kUnknownDim && got != built_fixed_dim_)
      throw ValueError(
          where(site) + ": its weights were built for inputs with " +
          std::to_string(built_fixed_dim_) + " at axis " + std::to_string(fixed_axis()) +
          ", but got an input of shape " + shape.to_string() + "; pass inputs with " +
          std::to_string(built_fixed_dim_) + " there, or use a new layer for these inputs");
  }
}

void Layer::build(const Shape& input_shape, DType dtype, CallSite site) {
  check_input(input_shape, site);
  if (built_) return;
  build_weights_once(input_shape, dtype, site);
  build_layers(input_shape, dtype, site);
}

void Layer::build_weights_once(const Shape& input_shape, DType dtype, CallSite site) {
  if (fixed_axis() != 0 && input_shape.dim(int(fixed_axis())) == kUnknownDim)
    throw ValueError(where(site) + ": the input's axis " + std::to_string(fixed_axis()) +
                     " is unknown (shape " + input_shape.to_string() +
                     "), but the weights' shape depends on it; give it a known size");
  try {
    build_weights(input_shape, dtype, site);
  } catch (const ValueError& e) {
    // A build in a later trace of a function (the Variable constructor's
    // error) gets what to do with a layer.
    if (e.message().find("only supports Variables created on its first call") == std::string::npos)
      throw;
    weights_.clear();
    throw ValueError(where(site) + ": its weights are made on its first call, and this one " +
                     "happens while a function that was traced before is traced again, where " +
                     "no variable can be made. Call the layer once eagerly, or call build(" +
                     "input_shape), before the function's first call. (" + e.message() + ")");
  }
  built_ = true;
  if (fixed_axis() != 0) built_fixed_dim_ = input_shape.dim(int(fixed_axis()));
}

Tensor Layer::operator()(const Tensor& inputs, bool training, CallSite site) {
  if (!inputs.defined()) throw InvalidArgumentError(where(site) + ": the input is undefined");
  check_input(inputs.shape(), site);
  if (!built_)
    build_weights_once(inputs.shape(),
                       is_floating(inputs.dtype()) ? inputs.dtype() : DType::float32, site);
  return call(inputs, training, site);
}

void Layer::build_weights(const Shape&, DType, CallSite) {}

Variable Layer::add_weight(const std::string& name, const Shape& shape, const Initializer& init,
                           DType dtype, bool trainable) {
  Variable v(initial_value(init, shape, dtype), name_ + "/" + name, trainable);
  weights_.emplace_back(name_ + "/" + name, v);
  return v;
}

std::vector<std::pair<std::string, Variable>> Layer::named_variables() const {
  return weights_;
}

std::vector<Variable> Layer::variables() const {
  std::vector<Variable> out;
  for (const auto& [path, v] : named_variables()) out.push_back(v);
  return out;
}

std::vector<Variable> Layer::trainable_variables() const {
  std::vector<Variable> out;
  for (const auto& [path, v] : named_variables()) {
    if (v.trainable()) out.push_back(v);
  }
  return out;
}

std::vector<Variable> Layer::non_trainable_variables() const {
  std::vector<Variable> out;
  for (const auto& [path, v] : named_variables()) {
    if (!v.trainable()) out.push_back(v);
  }
  return out;
}

}  // namespace ag::layers
