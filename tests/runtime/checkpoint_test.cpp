// ag::train::Checkpoint (ag/checkpoint.h): values come back bit for bit, a
// training run restored from a checkpoint continues as if it had not
// stopped (Adam and SGD with momentum, eager and traced train steps), and a
// missing, damaged or mismatching file is a clear error that leaves every
// variable as it was.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/checkpoint.h>

#include "error_test_util.h"
#include "temp_dir_test.h"

namespace {

using ag::Tensor;
using ag::Variable;
using ag::train::Checkpoint;
using ag_test::error_of;

class CheckpointTest : public ag_test::TempDirTest {};

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(),
                     size_t(a.num_elements()) * ag::dtype_size(a.dtype())) == 0;
}

TEST_F(CheckpointTest, ValuesComeBackBitForBit) {
  Variable w(ag::random_normal({2, 3}, 0.0, 1.0, ag::float32, 1), "w");
  Variable steps(Tensor(int64_t{7}), "steps");
  Variable mask(ag::constant({true, false}), "mask");
  Checkpoint ckpt;
  ckpt.track("model", std::vector<Variable>{w, mask}).track("steps", steps);
  const Tensor w0 = w.read(), mask0 = mask.read();

  EXPECT_EQ(ckpt.save(path("ckpt")), path("ckpt-1"));
  EXPECT_EQ(ckpt.save(path("ckpt")), path("ckpt-2"));
  EXPECT_EQ(ckpt.save_counter(), 2);
  w.assign(ag::zeros({2, 3}));
  steps.assign(int64_t{0});
  mask.assign(ag::constant({false, true}));

  Checkpoint fresh;
  fresh.track("model", std::vector<Variable>{w, mask}).track("steps", steps);
  fresh.restore(path("ckpt-1"));
  EXPECT_TRUE(same_bits(w.read(), w0));
  EXPECT_TRUE(same_bits(mask.read(), mask0));
  EXPECT_EQ(steps.read().item<int64_t>(), 7);
  EXPECT_EQ(fresh.save_counter(), 1);  // as it was when ckpt-1 was written
  EXPECT_EQ(fresh.save(path("ckpt")), path("ckpt-2"));
}

// A 2-8-1 regression model and its training step.
struct Model {
  Variable w1, b1, w2;
  std::vector<Variable> variables() const { return {w1, b1, w2}; }
  Tensor loss(const Tensor& x, const Tensor& y) const {
    Tensor h = ag::tanh(ag::matmul(x, w1.read()) + b1.read());
    return ag::reduce_mean(ag::square(ag::matmul(h, w2.read()) - y));
  }
};

Model make_model(uint64_t seed) {
  return {Variable(ag::random_normal({2, 8}, 0.0, 1.0, ag::float32, seed), "w1"),
          Variable(ag::random_normal({8}, 0.0, 1.0, ag::float32, seed + 1), "b1"),
          Variable(ag::random_normal({8, 1}, 0.0, 1.0, ag::float32, seed + 2), "w2")};
}

Tensor train_step(Model& m, ag::optimizers::Optimizer& opt, const Tensor& x, const Tensor& y) {
  ag::GradientTape tape;
  Tensor loss = m.loss(x, y);
  opt.apply_gradients(tape.gradient(loss, m.variables()), m.variables());
  return loss;
}

using MakeOptimizer = std::unique_ptr<ag::optimizers::Optimizer> (*)();

std::unique_ptr<ag::optimizers::Optimizer> adam() {
  return std::make_unique<ag::optimizers::Adam>(ag::optimizers::AdamOptions{.learning_rate = 0.05});
}
std::unique_ptr<ag::optimizers::Optimizer> sgd_momentum() {
  return std::make_unique<ag::optimizers::SGD>(
      ag::optimizers::SGDOptions{.learning_rate = 0.1, .momentum = 0.9});
}

// Trains `steps` steps, eagerly or through one traced train step.
void train(Model& m, ag::optimizers::Optimizer& opt, int steps, bool traced) {
  // The same batch on every call (a seeded random op gives a new sequence
  // per call of its line).
  static const Tensor x = ag::random_uniform({16, 2}, -1.0, 1.0, ag::float32, 40);
  static const Tensor y = ag::reduce_sum(ag::sin(x * 3.0f), 1, /*keepdims=*/true);
  opt.build(m.variables());  // slots before a trace (ag/optimizers.h)
  auto step =
      ag::function([&](const Tensor& x, const Tensor& y) { return train_step(m, opt, x, y); });
  for (int i = 0; i < steps; ++i) traced ? step(x, y) : train_step(m, opt, x, y);
}

TEST_F(CheckpointTest, RestoredTrainingContinuesBitForBit) {
  for (MakeOptimizer make : {&adam, &sgd_momentum}) {
    for (bool traced : {false, true}) {
      SCOPED_TRACE(std::string(traced ? "traced" : "eager") +
                   (make == &adam ? ", Adam" : ", SGD with momentum"));
      // Without a stop: 3 steps, a checkpoint, 4 more.
      Model a = make_model(10);
      auto opt_a = make();
      Checkpoint ckpt_a;
      ckpt_a.track("model", a.variables()).track("optimizer", *opt_a);
      train(a, *opt_a, 3, traced);
      const std::string saved = ckpt_a.save(path("run"));
      train(a, *opt_a, 4, traced);

      // Another model and optimizer from other values, restored, then 4 steps.
      Model b = make_model(20);
      auto opt_b = make();
      opt_b->set_learning_rate(1.0);
      Checkpoint ckpt_b;
      ckpt_b.track("model", b.variables()).track("optimizer", *opt_b);
      ckpt_b.restore(saved);
      EXPECT_EQ(opt_b->iterations().read().item<int64_t>(), 3);
      EXPECT_EQ(opt_b->learning_rate(), opt_a->learning_rate());
      train(b, *opt_b, 4, traced);

      for (size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(same_bits(a.variables()[i].read(), b.variables()[i].read())) << i;
      for (size_t i = 0; i < 3; ++i) {
        const std::vector<Variable> sa = opt_a->slot_variables(a.variables()[i]),
                                    sb = opt_b->slot_variables(b.variables()[i]);
        ASSERT_EQ(sa.size(), sb.size());
        for (size_t k = 0; k < sa.size(); ++k) EXPECT_TRUE(same_bits(sa[k].read(), sb[k].read()));
      }
      EXPECT_EQ(opt_b->iterations().read().item<int64_t>(), 7);
    }
  }
}

// Each bad file fails with its own error, and no variable changes.
class CheckpointErrorTest : public CheckpointTest {
 protected:
  void SetUp() override {
    CheckpointTest::SetUp();
    ckpt_.track("model", model_.variables()).track("optimizer", *opt_);
    train(model_, *opt_, 2, false);
    good_ = ckpt_.save(path("good"));
    train(model_, *opt_, 1, false);
    before_ = {model_.w1.read(), model_.b1.read(), model_.w2.read(), opt_->iterations().read()};
  }
  // The error of restoring `file` into the tracked model, which must not change.
  std::string restore_error(Checkpoint& ckpt, const std::string& file) {
    const std::string err = error_of([&] { ckpt.restore(file); });
    const std::vector<Tensor> after = {model_.w1.read(), model_.b1.read(), model_.w2.read(),
                                       opt_->iterations().read()};
    for (size_t i = 0; i < after.size(); ++i) EXPECT_TRUE(same_bits(before_[i], after[i])) << i;
    return err;
  }
  std::string damaged_copy(const std::string& name, size_t keep, int flip_at) {
    std::ifstream in(good_, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.resize(std::min(bytes.size(), keep));
    if (flip_at >= 0) bytes[size_t(flip_at)] ^= 0x20;
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  Model model_ = make_model(30);
  std::unique_ptr<ag::optimizers::Optimizer> opt_ = adam();
  Checkpoint ckpt_;
  std::string good_;
  std::vector<Tensor> before_;
};

TEST_F(CheckpointErrorTest, AMissingFileIsNotFound) {
  EXPECT_EQ(restore_error(ckpt_, path("nothing-1")),
            "NotFoundError: checkpoint: no file at '" + path("nothing-1") +
                "' (No such file or directory); save() returns the path of each checkpoint it "
                "writes");
}

TEST_F(CheckpointErrorTest, DamagedFilesAreDataLoss) {
  const std::string damaged = "DataLossError: checkpoint '";
  const std::string flipped = damaged_copy("flipped", size_t(-1), 200);
  EXPECT_EQ(restore_error(ckpt_, flipped),
            damaged + flipped +
                "' is damaged: its checksum does not match its contents (changed after it was "
                "written); it cannot be restored (write a new one, or restore an earlier one)");
  const std::string cut = damaged_copy("cut", 100, -1);
  EXPECT_CONTAINS(restore_error(ckpt_, cut), "' is damaged: it has 76 bytes of values where");
  std::ofstream(path("text")) << "not a checkpoint at all";
  EXPECT_CONTAINS(restore_error(ckpt_, path("text")),
                  "is damaged: it is not an autograph-cpp checkpoint (it does not start with "
                  "AGCKPT01)");
}

TEST_F(CheckpointErrorTest, AnotherModelOrOptimizerDoesNotFit) {
  Variable wide(ag::zeros({2, 9}), "w1");
  Variable extra(ag::zeros({3}), "b2");
  Checkpoint other;
  other.track("model", std::vector<Variable>{wide, model_.b1, extra}).track("optimizer", *opt_);
  const std::string err = restore_error(other, good_);
  EXPECT_CONTAINS(err, "' does not fit what this Checkpoint tracks; nothing was restored:");
  EXPECT_CONTAINS(err, "tracked here but not in the file:\n    'model/b2'");
  EXPECT_CONTAINS(err, "in the file but not tracked here:\n    'model/w2'");
  EXPECT_CONTAINS(err,
                  "of another type:\n    'model/w1' is float32 (2, 8) in the file, "
                  "float32 (2, 9) here");
  EXPECT_EQ(wide.read().to_vector<float>(), std::vector<float>(18, 0.0f));

  auto sgd = sgd_momentum();
  Checkpoint with_sgd;
  with_sgd.track("model", model_.variables()).track("optimizer", *sgd);
  EXPECT_CONTAINS(restore_error(with_sgd, good_),
                  "the slots of 'optimizer/slots/model/w1/' are m, v in the file, momentum here "
                  "(another optimizer?)");
}

TEST(CheckpointTrack, KeysAndNamesMustTellValuesApart) {
  Variable a(1.0f, "a"), unnamed(2.0f), also_unnamed(4.0f), also_a(3.0f, "a");
  Checkpoint ckpt;
  ckpt.track("a", a);
  EXPECT_EQ(error_of([&] { ckpt.track("a", also_a); }),
            "InvalidArgumentError: Checkpoint.track: the key 'a' is tracked already");
  EXPECT_CONTAINS(error_of([&] { ckpt.track("m/x", a); }), "the key 'm/x' cannot name");
  EXPECT_EQ(error_of([&] { ckpt.track("model", std::vector<Variable>{a, also_a}); }),
            "InvalidArgumentError: Checkpoint.track('model'): variable 1 is named 'a' as an "
            "earlier one is; a checkpoint saves variables by name, so give each a distinct one "
            "(ag::Variable(value, \"name\"))");
  // Unnamed variables are all named "Variable", as TensorFlow's.
  const std::string unnamed_twice =
      error_of([&] { ckpt.track("model", std::vector<Variable>{unnamed, also_unnamed}); });
  EXPECT_CONTAINS(unnamed_twice, "variable 1 is named 'Variable' as an earlier one is");
}

TEST_F(CheckpointTest, SavingInsideATracedFunctionIsAnError) {
  Variable v(1.0f, "v");
  Checkpoint ckpt;
  ckpt.track("v", v);
  auto f = ag::function([&](const Tensor& x) {
    ckpt.save(path("inside"));
    return x + v.read();
  });
  EXPECT_EQ(error_of([&] { f(ag::constant(1.0f)); }),
            "FailedPreconditionError: Checkpoint.save inside a traced function: checkpoints are "
            "written and read eagerly; call it outside the ag::function");
  EXPECT_FALSE(std::filesystem::exists(path("inside-1")));
}

}  // namespace
