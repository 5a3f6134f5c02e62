// ag::Variable: mutable state that lives outside any function. A traced
// function captures a variable by reference: the graph reads its current
// value and writes updates back on every call, and keeps the variable alive.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

namespace detail {
struct VariableState;
}

class Variable {
 public:
  // While a function is traced, a variable may be created only on that
  // function's first trace (per ag::Module instance for methods); it is then
  // created once, eagerly, like TensorFlow's init_scope.
  // A trainable variable read under an ag::GradientTape is watched by it
  // (tf.Variable's trainable).
  explicit Variable(const Tensor& initial_value, std::string name = "", bool trainable = true);
  template <Arithmetic T>
  explicit Variable(T initial_value, std::string name = "", bool trainable = true)
      : Variable(Tensor(initial_value), std::move(name), trainable) {}

  // The current value; a ReadVariable node while tracing.
  Tensor read() const;
  Tensor value() const { return read(); }
  operator Tensor() const { return read(); }

  // Updates return the new value. The dtype and shape never change.
  Tensor assign(const Tensor& value);
  Tensor assign_add(const Tensor& delta);
  Tensor assign_sub(const Tensor& delta);
  template <Arithmetic T>
  Tensor assign(T v) {
    return assign(scalar_like(v, dtype()));
  }
  template <Arithmetic T>
  Tensor assign_add(T v) {
    return assign_add(scalar_like(v, dtype()));
  }
  template <Arithmetic T>
  Tensor assign_sub(T v) {
    return assign_sub(scalar_like(v, dtype()));
  }

  DType dtype() const;
  const Shape& shape() const;
  const std::string& name() const;
  bool trainable() const;
  // Never reused by another variable.
  uint64_t id() const;
  // "ag::Variable('v', shape=(), dtype=int32, numpy=3)"
  std::string to_string() const;

  const std::shared_ptr<detail::VariableState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::VariableState> state_;
};

std::ostream& operator<<(std::ostream& os, const Variable& v);

}  // namespace ag
