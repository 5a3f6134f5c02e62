// A stand-in for the runtime's <ag/ag.h>, for the transpiler's golden tests
// only: it declares the types and the statement forms of
// docs/codegen-contract.md, so that inputs parse and generated code can be
// checked with -fsyntax-only before the runtime exists. Not a runtime.
#pragma once

#include <ag/annotate.h>
#include <ag/dtype.h>

#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>

namespace ag {

class Tensor {
 public:
  Tensor() = default;
  Tensor(int value);
  Tensor(float value);
  Tensor(double value);
  Tensor(bool value);
  explicit operator bool() const;
  Tensor operator[](int index) const;

  // Iteration over the first axis, so that eager code can loop over a tensor.
  struct Iterator {
    const Tensor* tensor;
    int index;
    Tensor operator*() const;
    Iterator& operator++();
    bool operator!=(const Iterator& other) const;
  };
  Iterator begin() const;
  Iterator end() const;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);

Tensor constant(double value);
Tensor constant(bool value);
Tensor range(const Tensor& stop);
Tensor range(const Tensor& start, const Tensor& stop, const Tensor& step = 1);
Tensor reduce_sum(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor matmul(const Tensor& a, const Tensor& b);
template <typename... Args>
void print(const Args&... args);

class TensorArray {
 public:
  explicit TensorArray(DType dtype, int64_t size = 0, bool dynamic_size = false);
  TensorArray& write(const Tensor& index, const Tensor& value);
  Tensor stack() const;
};

class Variable {
 public:
  explicit Variable(const Tensor& initial);
  Tensor read() const;
  void assign(const Tensor& value);
};

class Module {
 public:
  Module();
};

// --- Control flow (contract signatures) -------------------------------------
template <typename... Vars>
struct State {
  std::tuple<Vars&...> vars;
};
template <typename... Vars>
State<Vars...> state(std::initializer_list<const char*>, Vars&... vars) {
  return {std::tie(vars...)};
}
inline State<> state() {
  return {};
}

template <typename Cond, typename Then, typename Else, typename... Vars>
void if_stmt(const Cond&, Then&& then_fn, Else&& else_fn, State<Vars...>) {
  then_fn();
  else_fn();
}
template <typename Test, typename Body, typename... Vars>
void while_stmt(Test&& test, Body&& body, State<Vars...>) {
  (void)test();
  body();
}
struct NoExtraTest {};
inline constexpr NoExtraTest no_extra_test{};
template <typename Iterable, typename ExtraTest, typename Body, typename... Vars>
void for_stmt(const Iterable&, ExtraTest&&, Body&& body, State<Vars...>) {
  body(Tensor());
}

template <typename A, typename B>
Tensor and_(const A&, B&& b) {
  (void)b();
  return {};
}
template <typename A, typename B>
Tensor or_(const A&, B&& b) {
  (void)b();
  return {};
}
Tensor not_(const Tensor& a);
bool not_(bool a);
template <typename C, typename A, typename B>
auto if_exp(const C&, A&& a, B&& b) -> decltype(a()) {
  (void)b();
  return a();
}

// --- Marked functions -------------------------------------------------------
template <auto Impl>
class MarkedFunction {
 public:
  template <typename F>
  MarkedFunction(F*, const char*, std::initializer_list<const char*>) {}
  template <typename... Args>
  auto operator()(Args&&... args) -> decltype(Impl(static_cast<Args&&>(args)...)) {
    return Impl(static_cast<Args&&>(args)...);
  }
};

template <auto Impl, typename Self, typename... Args>
auto call_method(Self* self, const char*, std::initializer_list<const char*>, Args&&... args)
    -> decltype((self->*Impl)(static_cast<Args&&>(args)...)) {
  return (self->*Impl)(static_cast<Args&&>(args)...);
}

}  // namespace ag
