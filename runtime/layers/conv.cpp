// Keras's Conv1D and Conv2D, on ag::convolution.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

namespace {

bool channels_first(const std::string& layer, const std::string& data_format) {
  if (data_format != "channels_last" && data_format != "channels_first")
    throw InvalidArgumentError(layer + ": data_format is '" + data_format +
                               "'; expected 'channels_last' or 'channels_first'");
  return data_format == "channels_first";
}

std::string padding_mode(const std::string& layer, const std::string& padding) {
  if (padding != "valid" && padding != "same")
    throw InvalidArgumentError(layer + ": padding is '" + padding +
                               "'; expected 'valid' or 'same'");
  return padding == "same" ? "SAME" : "VALID";
}

}  // namespace

Conv2D::Conv2D(int64_t filters, Dims2 kernel_size, ConvOptions options)
    : Conv2D("conv2d", filters, kernel_size, std::move(options), 2) {}

Conv2D::Conv2D(std::string_view default_name, int64_t filters, Dims2 kernel_size,
               ConvOptions options, int64_t spatial_dims)
    : Layer(default_name, options.name),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(std::move(options)),
      spatial_dims_(spatial_dims) {
  std::string layer = spatial_dims == 1 ? "Conv1D" : "Conv2D";
  if (filters <= 0 || kernel_size.h <= 0 || kernel_size.w <= 0)
    throw InvalidArgumentError(layer + ": filters and kernel_size must be positive");
  channels_first(layer, options_.data_format);
  padding_mode(layer, options_.padding);
  check_activation(options_.activation);
}

int64_t Conv2D::fixed_axis() const {
  return options_.data_format == "channels_first" ? 1 : -1;
}

void Conv2D::build_weights(const Shape& input_shape, DType dtype, CallSite) {
  const int64_t in_channels = input_shape.dim(int(fixed_axis()));
  Shape kernel = spatial_dims_ == 1 ? Shape{kernel_size_.h, in_channels, filters_}
                                    : Shape{kernel_size_.h, kernel_size_.w, in_channels, filters_};
  add_weight("kernel", kernel, options_.kernel_initializer, dtype);
  if (options_.use_bias) add_weight("bias", Shape{filters_}, options_.bias_initializer, dtype);
}

Tensor Conv2D::call(const Tensor& inputs, bool, CallSite site) {
  const bool first = options_.data_format == "channels_first";
  std::vector<int64_t> strides = {options_.strides.h, options_.strides.w};
  std::vector<int64_t> dilations = {options_.dilation_rate.h, options_.dilation_rate.w};
  if (spatial_dims_ == 1) {
    strides.resize(1);
    dilations.resize(1);
  }
  std::string format = spatial_dims_ == 1 ? (first ? "NCW" : "NWC") : (first ? "NCHW" : "NHWC");
  Tensor y = convolution(inputs, weights_[0].second.read(), strides,
                         padding_mode(std::string(class_name()), options_.padding), format,
                         dilations, site);
  if (options_.use_bias) {
    Tensor bias = weights_[1].second.read();
    // channels_first: the bias broadcasts along axis 1, [filters, 1(, 1)].
    if (first)
      bias = reshape(bias,
                     spatial_dims_ == 1 ? std::vector<int64_t>{filters_, 1}
                                        : std::vector<int64_t>{filters_, 1, 1},
                     site);
    y = add(y, bias, site);
  }
  return activate(y, options_.activation, site);
}

Conv1D::Conv1D(int64_t filters, int64_t kernel_size, ConvOptions options)
    : Conv2D("conv1d", filters, kernel_size, std::move(options), 1) {}

}  // namespace ag::layers
