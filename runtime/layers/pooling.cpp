// Keras's MaxPool2D, AveragePooling2D and GlobalAveragePooling2D.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

namespace {

void check_pool_options(const std::string& layer, const PoolOptions& options) {
  if (options.padding != "valid" && options.padding != "same")
    throw InvalidArgumentError(layer + ": padding is '" + options.padding +
                               "'; expected 'valid' or 'same'");
  if (options.data_format != "channels_last" && options.data_format != "channels_first")
    throw InvalidArgumentError(layer + ": data_format is '" + options.data_format +
                               "'; expected 'channels_last' or 'channels_first'");
}

}  // namespace

MaxPool2D::MaxPool2D(Dims2 pool_size, PoolOptions options)
    : MaxPool2D("max_pooling2d", pool_size, std::move(options), false) {}

MaxPool2D::MaxPool2D(std::string_view default_name, Dims2 pool_size, PoolOptions options,
                     bool average)
    : Layer(default_name, options.name),
      pool_size_(pool_size),
      options_(std::move(options)),
      average_(average) {
  check_pool_options(average ? "AveragePooling2D" : "MaxPool2D", options_);
  if (pool_size.h <= 0 || pool_size.w <= 0)
    throw InvalidArgumentError(std::string(average ? "AveragePooling2D" : "MaxPool2D") +
                               ": pool_size must be positive");
}

Tensor MaxPool2D::call(const Tensor& inputs, bool, CallSite site) {
  Dims2 strides = options_.strides.value_or(pool_size_);
  std::string padding = options_.padding == "same" ? "SAME" : "VALID";
  std::string format = options_.data_format == "channels_first" ? "NCHW" : "NHWC";
  std::vector<int64_t> ksize = {pool_size_.h, pool_size_.w};
  std::vector<int64_t> stride = {strides.h, strides.w};
  return average_ ? avg_pool(inputs, ksize, stride, padding, format, site)
                  : max_pool(inputs, ksize, stride, padding, format, site);
}

AveragePooling2D::AveragePooling2D(Dims2 pool_size, PoolOptions options)
    : MaxPool2D("average_pooling2d", pool_size, std::move(options), true) {}

GlobalAveragePooling2D::GlobalAveragePooling2D(GlobalPoolOptions options)
    : Layer("global_average_pooling2d", options.name), options_(std::move(options)) {
  check_pool_options("GlobalAveragePooling2D", {.data_format = options_.data_format});
}

Tensor GlobalAveragePooling2D::call(const Tensor& inputs, bool, CallSite site) {
  std::vector<int64_t> axes = options_.data_format == "channels_first" ? std::vector<int64_t>{2, 3}
                                                                       : std::vector<int64_t>{1, 2};
  return reduce_mean(inputs, axes, options_.keepdims, site);
}

}  // namespace ag::layers
