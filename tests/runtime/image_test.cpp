// Resizing and the block rearrangements (ag/image.h): values against the
// interpolation formulas, TensorFlow's nearest-neighbour and corner rules,
// depth_to_space against its index formula and as space_to_depth's
// inverse, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <ag/ag.h>

namespace {

using ag::Tensor;
namespace image = ag::image;

std::vector<double> values(const Tensor& t) {
  return ag::cast(t, ag::float64).to_vector<double>();
}

Tensor row(const std::vector<double>& v) {
  return ag::cast(ag::constant(v, {int64_t(v.size())}), ag::float64);
}

Tensor resized_row(const std::vector<double>& v, int64_t size, image::ResizeOptions options) {
  return image::resize_axes(row(v), {{0, size}}, options);
}

TEST(Resize, LinearHalfPixelInterpolatesBetweenCentresAndClampsAtTheEdges) {
  // 2 -> 4: sources -0.25, 0.25, 0.75, 1.25.
  const std::vector<double> y = values(resized_row({10, 20}, 4, {}));
  EXPECT_EQ(y, (std::vector<double>{10, 12.5, 17.5, 20}));
}

TEST(Resize, AlignCornersKeepsTheCorners) {
  image::ResizeOptions o;
  o.coordinates = image::CoordinateMode::kAlignCorners;
  const std::vector<double> y = values(resized_row({0, 3, 9}, 5, o));
  EXPECT_EQ(y, (std::vector<double>{0, 1.5, 3, 6, 9}));
}

TEST(Resize, NearestRoundingModes) {
  image::ResizeOptions o;
  o.interpolation = image::Interpolation::kNearest;
  o.coordinates = image::CoordinateMode::kAsymmetric;
  // 4 -> 8 asymmetric: sources 0, 0.5, 1, 1.5, ...
  EXPECT_EQ(values(resized_row({1, 2, 3, 4}, 8, o)), (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  o.rounding = image::NearestRounding::kRoundPreferCeil;
  EXPECT_EQ(values(resized_row({1, 2, 3, 4}, 8, o)), (std::vector<double>{1, 2, 2, 3, 3, 4, 4, 4}));
}

TEST(Resize, CubicReproducesALinearRamp) {
  // Keys's cubic reproduces polynomials up to degree 2 away from the edges.
  image::ResizeOptions o;
  o.interpolation = image::Interpolation::kCubic;
  o.coordinates = image::CoordinateMode::kAlignCorners;
  o.cubic_coeff_a = -0.5;
  const std::vector<double> y = values(resized_row({0, 1, 2, 3, 4, 5, 6, 7}, 15, o));
  for (size_t i = 3; i + 3 < y.size(); ++i) EXPECT_NEAR(y[i], 0.5 * double(i), 1e-12) << i;
}

TEST(Resize, ExcludeOutsideRenormalisesTheTapsInside) {
  image::ResizeOptions o;
  o.interpolation = image::Interpolation::kCubic;
  o.exclude_outside = true;
  const std::vector<double> y = values(resized_row({4, 4, 4}, 7, o));
  for (double v : y) EXPECT_NEAR(v, 4, 1e-12);
}

TEST(Resize, TensorFlowResizeOfAnImageBatch) {
  // One 2x2 image with 2 channels to 4x4: bilinear interpolates each
  // channel; nearest repeats each pixel twice in each direction.
  const Tensor images =
      ag::cast(ag::constant(std::vector<double>{0, 100, 4, 100, 8, 100, 12, 100}, {1, 2, 2, 2}),
               ag::float64);
  const Tensor bilinear = image::resize(images, {4, 4});
  EXPECT_EQ(bilinear.shape(), ag::Shape({1, 4, 4, 2}));
  const std::vector<double> b = values(bilinear);
  EXPECT_EQ(b[(0 * 4 + 0) * 2], 0);
  EXPECT_EQ(b[(1 * 4 + 1) * 2], 3);  // sources (0.25, 0.25): 0.75^2*0 + ... = 3
  EXPECT_EQ(b[(1 * 4 + 1) * 2 + 1], 100);
  const std::vector<double> n = values(image::resize(images, {4, 4}, "nearest"));
  EXPECT_EQ(n[(1 * 4 + 2) * 2], 4);
  EXPECT_EQ(n[(3 * 4 + 3) * 2], 12);
}

TEST(Resize, Errors) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const ag::InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] {
              image::resize(ag::zeros({1, 2, 2, 1}), {4, 4}, "area");
            }).find("unknown method 'area'; use bilinear, nearest or bicubic"),
            std::string::npos);
  EXPECT_NE(message([] {
              image::resize(ag::zeros({2, 2}), {4, 4});
            }).find("images must be [batch, height, width, channels]"),
            std::string::npos);
  EXPECT_NE(message([] {
              image::resize(ag::zeros({1, 2, 2, 1}, ag::int32), {4, 4});
            }).find("needs a floating tensor, not int32"),
            std::string::npos);
}

TEST(DepthToSpace, MovesChannelsIntoBlocksInTensorFlowsOrder) {
  const int64_t b = 2, h = 2, w = 3, depth = 2, c = depth * b * b;
  std::vector<double> v(size_t(h * w * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  const Tensor x = ag::cast(ag::constant(v, {1, h, w, c}), ag::float64);
  const std::vector<double> y = values(ag::depth_to_space(x, b));
  for (int64_t i = 0; i < h * b; ++i) {
    for (int64_t j = 0; j < w * b; ++j) {
      for (int64_t k = 0; k < depth; ++k) {
        const int64_t channel = ((i % b) * b + j % b) * depth + k;
        EXPECT_EQ(y[size_t((i * w * b + j) * depth + k)],
                  v[size_t(((i / b) * w + j / b) * c + channel)]);
      }
    }
  }
  EXPECT_EQ(values(ag::space_to_depth(ag::depth_to_space(x, b), b)), v);
  const Tensor nchw = ag::transpose(x, {0, 3, 1, 2});
  EXPECT_EQ(values(ag::transpose(ag::depth_to_space(nchw, b, "NCHW"), {0, 2, 3, 1})), y);
  EXPECT_EQ(values(ag::space_to_depth(ag::depth_to_space(nchw, b, "NCHW"), b, "NCHW")),
            values(nchw));
}

}  // namespace
