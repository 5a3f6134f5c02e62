// Effects that run on every call of a traced function, in program order,
// also inside staged loops and branches: what `std::cout`, `assert` and
// arbitrary C++ calls cannot do, since those run only while tracing.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ag/tensor.h"

namespace ag {

namespace detail {
// A piece of a print: literal text, or the index of a tensor argument.
struct PrintPiece {
  std::string text;
  int tensor = -1;
};
void print_pieces(std::vector<PrintPiece> pieces, std::vector<Tensor> tensors);

template <class T>
void add_print_piece(std::vector<PrintPiece>& pieces, std::vector<Tensor>& tensors, const T& v) {
  if constexpr (std::is_same_v<T, Tensor>) {
    pieces.push_back({{}, int(tensors.size())});
    tensors.push_back(v);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    pieces.push_back({std::string(std::string_view(v)), -1});
  } else if constexpr (std::is_arithmetic_v<T>) {
    pieces.push_back({Tensor(v).values_string(), -1});
  } else {
    static_assert(std::is_same_v<T, Tensor>, "ag::print takes tensors, strings and C++ scalars");
  }
}
}  // namespace detail

namespace api {

// Prints its arguments separated by spaces and a newline, as tf.print does:
// tensors show their values ("[0.5 0.25 ... 0.125]", summarised to 3 items
// at each edge of each axis). Runs on every call.
template <class... Args>
void print(const Args&... args) {
  std::vector<detail::PrintPiece> pieces;
  std::vector<Tensor> tensors;
  (detail::add_print_piece(pieces, tensors, args), ...);
  detail::print_pieces(std::move(pieces), std::move(tensors));
}
// Where ag::print writes; stdout unless set.
void set_print_stream(std::ostream* os);

// Fails with an InvalidArgumentError carrying `message` when `pred` (a scalar
// bool) is false, on every call.
void assert_that(const Tensor& pred, const std::string& message,
                 CallSite site = CallSite::current());

// The escape hatch, like tf.py_function: `fn` runs as C++ on every call, at
// execution time, on eager tensors. `output_specs` declares its results'
// types (None dims allowed); the results are checked against them.
using HostFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::vector<Tensor> host_function(HostFn fn, const std::vector<Tensor>& inputs,
                                  const std::vector<TensorSpec>& output_specs,
                                  std::string name = "host_function",
                                  CallSite site = CallSite::current());

}  // namespace api
}  // namespace ag
