#include <ag/ag.h>

// The TensorFlow guide's recursive_fn: a tensor decides the depth, so tracing both
// branches never ends.
AG_FUNCTION ag::Tensor recursive_fn(ag::Tensor n) {
  if (n > 0) {
    return recursive_fn(n - 1);
  }
  return ag::constant(1);
}

// Mutual recursion through a helper that marked code converts.
ag::Tensor is_odd(ag::Tensor n, int depth);

ag::Tensor is_even(ag::Tensor n, int depth) {
  if (depth == 0) return n;
  return is_odd(n - 1, depth - 1);
}

ag::Tensor is_odd(ag::Tensor n, int depth) {
  if (depth == 0) return n;
  return is_even(n - 1, depth - 1);
}

AG_FUNCTION ag::Tensor parity(ag::Tensor n) {
  return is_even(n, 4);
}

// A cycle of three, through a method.
class Tree : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor visit(ag::Tensor x) { return left(x) + 1; }
  ag::Tensor left(ag::Tensor x) { return right(x * 2); }
  ag::Tensor right(ag::Tensor x) { return visit(x - 1); }
};

int main() {
  recursive_fn(ag::constant(5));
  parity(ag::constant(3));
  Tree tree;
  tree.visit(ag::constant(1));
}
