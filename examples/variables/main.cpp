// Variables (tf.function guide, "Creating tf.Variables", "Depending on Python
// global and free variables", "Depending on Python objects").
//
// A traced function may create an ag::Variable only on its first trace (it is
// then created once, eagerly); creating one on a later trace is a ValueError.
// The create-once pattern keeps the variable in an ag::Module and creates it
// when it is still missing. A C++ global or object field read by a function is
// frozen into the graph when it is traced; an ag::Variable is read on every
// call, so updates through assign are seen without retracing.
#include <iostream>
#include <optional>

#include <ag/ag.h>

#include "example_util.h"

class Count : public ag::Module {
 public:
  std::optional<ag::Variable> count;

  AG_FUNCTION ag::Tensor call() {
    if (!count) count.emplace(0);
    return count->assign_add(1);
  }
};

int foo = 1;

AG_FUNCTION ag::Tensor buggy_add() {
  return ag::Tensor(1 + foo);  // NOLINT(ag-frozen-value): frozen, on purpose
}

AG_FUNCTION ag::Tensor recommended_add(int foo) {
  return ag::Tensor(1 + foo);
}

class SimpleModel : public ag::Module {
 public:
  // These values are *not* ag::Variables.
  float bias = 0.0f;
  float weight = 2.0f;
};

AG_FUNCTION ag::Tensor evaluate(SimpleModel* model, ag::Tensor x) {
  return model->weight * x + model->bias;
}

class BetterModel : public ag::Module {
 public:
  ag::Variable bias{0.0f};
  ag::Variable weight{2.0f};
};

AG_FUNCTION ag::Tensor evaluate_better(BetterModel* model, ag::Tensor x) {
  return model->weight.read() * x + model->bias.read();
}

int main() {
  std::cout << "Creating a variable on every trace:\n";
  auto f = ag::function(
      [](ag::Tensor x) AG_FUNCTION {
        ag::Variable v(1.0);  // NOLINT(ag-variable-creation): the error shown below
        return v.read() + x;
      },
      {.name = "f", .arg_names = {"x"}});
  std::cout << f(ag::constant(1.0)) << "  (first trace: v is created once)\n";
  example::assert_raises<ag::ValueError>([&] { f(ag::constant(1)); });

  std::cout << "\nThe create-once pattern:\n";
  Count c;
  std::cout << c.call() << "\n";
  std::cout << c.call() << "\n";

  std::cout << "\nDepending on C++ globals:\n";
  std::cout << "Buggy: " << buggy_add() << "\n";
  std::cout << "Correct: " << recommended_add(foo) << "\n";
  std::cout << "Updating the value of `foo` to 100!\n";
  foo = 100;
  std::cout << "Buggy: " << buggy_add() << "\n";  // Did not change!
  std::cout << "Correct: " << recommended_add(foo) << "\n";

  ag::Variable foo_variable(1);
  auto variable_add = ag::function([&]() AG_FUNCTION { return 1 + foo_variable.read(); });
  std::cout << "Variable: " << variable_add() << "\n";
  std::cout << "Updating the value of `foo` to 100!\n";
  foo_variable.assign(100);
  std::cout << "Variable: " << variable_add() << "\n";

  std::cout << "\nDepending on C++ objects:\n";
  SimpleModel simple_model;
  ag::Tensor x = ag::constant(10.0);
  std::cout << evaluate(&simple_model, x) << "\n";
  std::cout << "Adding bias!\n";
  simple_model.bias += 5.0f;
  std::cout << evaluate(&simple_model, x) << "  (didn't change: traced by identity)\n";

  BetterModel better_model;
  std::cout << evaluate_better(&better_model, x) << "\n";
  std::cout << "Adding bias!\n";
  better_model.bias.assign_add(5.0);  // instead of better_model.bias += 5
  std::cout << evaluate_better(&better_model, x) << "  (this works!)\n";
}
