// Declarations agc cannot repeat or call at run time: each is an error at the
// user's line that says what to write instead.
#include <ag/ag.h>

#include <type_traits>
#include <vector>

// A constant expression cannot trace.
AG_FUNCTION constexpr int doubled(int x) {
  return x > 0 ? 2 * x : x;
}

template <typename T>
AG_FUNCTION consteval T tripled(T x) {
  return 3 * x;
}

// agc repeats the declaration: a directive in it would be repeated half.
#define AG_TEST_WIDE 1
AG_FUNCTION ag::Tensor widened(ag::Tensor x,
#if AG_TEST_WIDE
                               double by
#else
                               float by
#endif
) {
  if (x > 0) x = x * by;
  return x;
}

// The default argument of a template parameter that a macro writes.
#define AG_TEST_ENABLE_IF(...) std::enable_if_t<(__VA_ARGS__), int> = 0
template <typename T, AG_TEST_ENABLE_IF(std::is_arithmetic_v<T>)>
AG_FUNCTION ag::Tensor scaled(ag::Tensor x, T by) {
  if (x > 0) x = x * by;
  return x;
}

// A result that is a reference, as written or once instantiated.
AG_FUNCTION const ag::Tensor& first(const std::vector<ag::Tensor>& xs) {
  return xs[0];
}

template <typename T>
AG_FUNCTION decltype(auto) picked(T& xs) {
  return xs[0];
}
ag::Tensor pick_first(std::vector<ag::Tensor>& xs) {
  return picked(xs);
}

// A parameter whose type has a trace type for no instantiation the file makes.
template <typename Char>
struct Buffer {
  Char data[4];
};

template <typename Char>
AG_FUNCTION ag::Tensor sized(ag::Tensor x, const Buffer<Char>& buffer) {
  if (x > 0) x = x * static_cast<double>(sizeof(buffer.data));
  return x;
}
ag::Tensor sized_chars(ag::Tensor x) {
  return sized(x, Buffer<char>{});
}

// A marked explicit specialization: its primary template is a plain one.
template <typename T>
ag::Tensor negated(ag::Tensor x, T) {
  return -x;
}

template <>
AG_FUNCTION ag::Tensor negated<int>(ag::Tensor x, int) {
  if (x > 0) x = -x;
  return x;
}

// Functions with no call of their own to wrap, or no arguments to forward.
struct Scaler : ag::Module {
  AG_FUNCTION explicit Scaler(double by) : by_(by) {}
  AG_FUNCTION explicit operator bool() const { return by_ != 0; }
  double by_;
};

AG_FUNCTION ag::Tensor summed(ag::Tensor x, ...) {
  if (x > 0) x = x + 1;
  return x;
}
