// The main() of a program that tests/fuzz/gen.py generates: it calls each
// generated function with its inputs and prints every result exactly, in
// sections that fuzz.py compares between the eager and the staged build.
//
// Output, per function:
//   == NAME
//   #CALL DTYPE SHAPE VALUE...      (values as hexfloats of their float64 cast;
//                                    zeros unsigned: graphs may simplify x + 0 to
//                                    x, as Grappler does, which keeps a -0)
//   #CALL error: WHAT               (an exception)
//   traces: N, expected M           (staged build only, when they differ)
//   #CALL dims DTYPE SHAPE VALUE... (unknown_dims: the staged build calls it
//                                    from a trace with x's dims unknown)
//   #CALL grad DTYPE SHAPE VALUE... (FZ_GRADIENTS, floating calls: d sum(f) / dx)
//   == end
// Arguments name functions to skip (fuzz.py skips one that crashed).
#pragma once

#include <ag/ag.h>

#include <array>
#include <cstring>
#include <exception>
#include <iomanip>
#include <iostream>
#include <tuple>
#include <utility>
#include <vector>

struct FzCall {
  ag::DType dtype;
  ag::Shape shape;
  std::vector<int> x;
  int n;
  int m;
};

// The call's x: its values repeated, as a cycle, to fill its shape (a
// multi_block call lists one cycle, not every element).
inline ag::Tensor fz_input(const FzCall& in) {
  std::vector<int> values(size_t(in.shape.num_elements()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = in.x[i % in.x.size()];
  return ag::cast(ag::constant(values, in.shape), in.dtype);
}

struct FzCase {
  const char* name;
  ag::Tensor (*fn)(ag::Tensor, ag::Tensor, int);
  int expected_traces;  // distinct (dtype, shape, m) among the calls; -1: not counted
  std::vector<FzCall> calls;
  bool unknown_dims = false;  // also call it with x's dims unknown while tracing
};

inline void fz_print(int call, const ag::Tensor& t, const char* tag = "") {
  std::cout << "#" << call << " " << tag << ag::dtype_name(t.dtype()) << " " << t.shape();
  std::cout << std::hexfloat;
  for (double v : ag::cast(t, ag::float64).to_vector<double>())
    std::cout << " " << (v == 0 ? 0.0 : v);
  std::cout << std::defaultfloat << "\n";
}

#ifdef FZ_GRADIENTS
// d sum(f(x)) / dx by a tape around the call: eagerly in the eager build; in
// the staged build with the tape inside a traced function, so that the
// staged ifs and whiles are differentiated in the graph.
inline ag::Tensor fz_gradient(const FzCase& c, const ag::Tensor& x, const ag::Tensor& n, int m) {
  auto gradient = [fn = c.fn, m](const ag::Tensor& x, const ag::Tensor& n) {
    ag::GradientTape tape;
    tape.watch(x);
    ag::Tensor y = fn(x, n, m);
    return tape.gradient(ag::reduce_sum(y), x, ag::UnconnectedGradients::Zero);
  };
#ifdef FZ_STAGED
  return ag::function(gradient)(x, n);
#else
  return gradient(x, n);
#endif
}

// To 6 significant digits: the graph may sum in another order.
inline void fz_print_gradient(int call, const ag::Tensor& g) {
  std::cout << "#" << call << " grad " << ag::dtype_name(g.dtype()) << " " << g.shape()
            << std::setprecision(6);
  for (double v : ag::cast(g, ag::float64).to_vector<double>())
    std::cout << " " << (v == 0 ? 0 : v);
  std::cout << "\n";
}

inline void fz_run_gradients(const FzCase& c) {
  int call = 0;
  for (const FzCall& in : c.calls) {
    if (in.dtype == ag::float32 || in.dtype == ag::float64) {
      try {
        ag::Tensor x = fz_input(in);
        fz_print_gradient(call, fz_gradient(c, x, ag::Tensor(in.n), in.m));
      } catch (const std::exception& e) {
        std::cout << "#" << call << " grad error: " << e.what() << "\n";
      }
    }
    ++call;
  }
}
#endif

// The call from an ag::function whose input_signature has x's rank and
// dtype but none of its dims, in the staged build (the marked function runs
// inline in that trace); the plain call in the eager build.
inline ag::Tensor fz_call_with_unknown_dims(const FzCase& c, const ag::Tensor& x,
                                            const ag::Tensor& n, int m) {
#ifdef FZ_STAGED
  const std::vector<int64_t> dims(size_t(x.rank()), ag::kUnknownDim);
  auto traced =
      ag::function([fn = c.fn, m](const ag::Tensor& x, const ag::Tensor& n) { return fn(x, n, m); },
                   {.input_signature = std::vector{ag::TensorSpec(ag::Shape(dims), x.dtype()),
                                                   ag::TensorSpec(ag::Shape{}, n.dtype())}});
  return traced(x, n);
#else
  return c.fn(x, n, m);
#endif
}

inline void fz_run_with_unknown_dims(const FzCase& c) {
  int call = 0;
  for (const FzCall& in : c.calls) {
    try {
      ag::Tensor x = fz_input(in);
      fz_print(call, fz_call_with_unknown_dims(c, x, ag::Tensor(in.n), in.m), "dims ");
    } catch (const std::exception& e) {
      std::cout << "#" << call << " dims error: " << e.what() << "\n";
    }
    ++call;
  }
}

inline void fz_run_case(const FzCase& c) {
  std::cout << "== " << c.name << std::endl;
  int call = 0;
  for (const FzCall& in : c.calls) {
    try {
      ag::Tensor x = fz_input(in);
      fz_print(call, c.fn(x, ag::Tensor(in.n), in.m));
    } catch (const std::exception& e) {
      std::cout << "#" << call << " error: " << e.what() << "\n";
    }
    ++call;
  }
#ifdef FZ_STAGED
  // Each distinct signature traces once; a repeated one hits the cache.
  int traces = ag::function_of(c.fn).tracing_count();
  if (c.expected_traces >= 0 && traces != c.expected_traces)
    std::cout << "traces: " << traces << ", expected " << c.expected_traces << "\n";
#endif
  if (c.unknown_dims) fz_run_with_unknown_dims(c);
#ifdef FZ_GRADIENTS
  fz_run_gradients(c);
#endif
  std::cout << "== end" << std::endl;
}

template <size_t N>
int fz_run(const FzCase (&cases)[N], int argc, char** argv) {
  for (const FzCase& c : cases) {
    bool skip = false;
    for (int i = 1; i < argc; ++i) skip = skip || std::strcmp(argv[i], c.name) == 0;
    if (!skip) fz_run_case(c);
  }
  return 0;
}
