// Convolutions gain little from a graph (intro to graphs guide, "Seeing the
// speed-up"): a Keras-style Conv2D(100, 3) on a [1, 200, 200, 100] image,
// called eagerly and through a marked function.
//
// conv_fn is marked: agc makes it an ag::function whose graph holds the
// layer's one convolution and bias add. Its first call (the trace) is the
// layer's first call too, so the layer makes its kernel and bias then,
// eagerly, from the image's shape. Both ways run the same oneDNN kernel, so
// the timings (on stderr, since they vary from run to run) are about the
// same: a graph saves the per-op dispatch, and here there are two ops. The
// image is random (seeded) rather than the guide's zeros, so that the
// comparison of the two results means something.
#include <chrono>
#include <iostream>

#include <ag/ag.h>

ag::layers::Conv2D conv_layer(100, 3, {.kernel_initializer = {"glorot_uniform", 1}});

AG_FUNCTION ag::Tensor conv_fn(ag::Tensor image) {
  return conv_layer(image);
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
  constexpr int kCalls = 10;
  ag::Tensor image = ag::random_uniform({1, 200, 200, 100}, 0.0, 1.0, ag::float32, /*seed=*/2);
  std::cout << "conv_layer = ag::layers::Conv2D(100, 3) on an image of shape "
            << image.shape().to_string() << "\n";
  std::cout << "built before its first call: " << (conv_layer.built() ? "yes" : "no") << "\n";

  // Warm up: the first conv_fn call traces it and builds the layer.
  ag::Tensor traced = conv_fn(image);
  ag::Tensor eager = conv_layer(image);
  for (const auto& [path, variable] : conv_layer.named_variables())
    std::cout << "  " << path << ": shape " << variable.shape().to_string() << "\n";
  std::cout << "output shape: " << eager.shape().to_string() << "\n";
  std::cout << "eager result == traced result: "
            << (eager.to_vector<float>() == traced.to_vector<float>() ? "yes" : "no") << "\n";

  double eager_s = seconds_for(kCalls, [&] { conv_layer(image); });
  double function_s = seconds_for(kCalls, [&] { conv_fn(image); });
  std::cout << "traces of conv_fn: " << ag::function_of(&conv_fn).tracing_count() << "\n";
  std::cout << kCalls << " calls each eagerly and through the function (timings on stderr)\n";
  std::cerr << "Eager conv: " << eager_s << " seconds\n"
            << "Function conv: " << function_s << " seconds\n"
            << "Note how there's not much difference in performance for convolutions\n";
}
