// ag::saved_model: a model with two signatures that share variables, saved,
// loaded without its functions and called through both signatures; its
// variables restored and assignable; each file a model ONNX's checker
// passes; and the errors for what cannot be saved or read.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "ag/saved_model.h"

namespace {

using ag::Tensor;
using ag::Variable;

class SavedModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ag_saved_model_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

// A dense layer and its embedding: two functions of the same variables, one
// traced for a batch of any size.
struct Dense {
  Variable kernel{ag::constant({{0.5f, -1.0f}, {2.0f, 0.25f}, {1.0f, 1.0f}}), "dense/kernel"};
  Variable bias{ag::constant({0.1f, -0.2f}), "dense/bias"};
  Tensor serve(const Tensor& x) const {
    return ag::relu(ag::matmul(x, kernel.read()) + bias.read());
  }
  Tensor embed(const Tensor& x) const { return ag::matmul(x, kernel.read()); }
};

std::vector<ag::saved_model::Signature> signatures_of(const Dense& d) {
  auto serve = ag::function(
      [&d](const Tensor& x) { return d.serve(x); },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim, 3}, ag::float32)}});
  auto embed = ag::function([&d](const Tensor& x) { return d.embed(x); });
  return {{"serve",
           serve.get_concrete_function(ag::TensorSpec({ag::kUnknownDim, 3}, ag::float32)).graph()},
          {"embed", embed.get_concrete_function(ag::TensorSpec({1, 3}, ag::float32)).graph()}};
}

TEST_F(SavedModelTest, TwoSignaturesRunWithoutTheirFunctions) {
  const Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.5f, 2.0f}});
  std::vector<float> want_serve, want_embed;
  {
    Dense d;
    ag::saved_model::save(dir(), signatures_of(d));
    want_serve = d.serve(x).to_vector<float>();
    want_embed = d.embed(ag::constant({{1.0f, 0.0f, 2.0f}})).to_vector<float>();
  }  // the functions and variables are gone

  ag::saved_model::SavedModel m = ag::saved_model::load(dir());
  EXPECT_EQ(m.signature_names(), (std::vector<std::string>{"serve", "embed"}));
  EXPECT_EQ(m.signature("serve")({x})[0].to_vector<float>(), want_serve);
  EXPECT_EQ(m.signature("embed")({ag::constant({{1.0f, 0.0f, 2.0f}})})[0].to_vector<float>(),
            want_embed);
  // Any batch size: the serving signature was traced with a None dim.
  EXPECT_EQ(m.signature("serve")({ag::zeros({5, 3})})[0].shape(), ag::Shape({5, 2}));
  ASSERT_EQ(m.variables().size(), 2u);
  std::set<std::string> names = {m.variables()[0].first, m.variables()[1].first};
  EXPECT_EQ(names, (std::set<std::string>{"dense/kernel", "dense/bias"}));
}

TEST_F(SavedModelTest, AssignedVariablesChangeEverySignature) {
  {
    Dense d;
    ag::saved_model::save(dir(), signatures_of(d));
  }
  ag::saved_model::SavedModel m = ag::saved_model::load(dir());
  Variable kernel = m.variable("dense/kernel");
  EXPECT_EQ(kernel.read().to_vector<float>(),
            (std::vector<float>{0.5f, -1.0f, 2.0f, 0.25f, 1.0f, 1.0f}));
  kernel.assign(ag::ones({3, 2}));
  m.variable("dense/bias").assign(ag::constant({1.0f, 2.0f}));
  const Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}});
  EXPECT_EQ(m.signature("serve")({x})[0].to_vector<float>(), (std::vector<float>{7.0f, 8.0f}));
  EXPECT_EQ(m.signature("embed")({x})[0].to_vector<float>(), (std::vector<float>{6.0f, 6.0f}));
}

TEST_F(SavedModelTest, EachSignatureIsAValidOnnxModelHoldingTheValues) {
  Dense d;
  ag::saved_model::save(dir(), signatures_of(d));
  for (const char* name : {"serve", "embed"}) {
    ::onnx::ModelProto model;
    std::ifstream in(dir() + "/" + name + ".onnx", std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in)) << name;
    EXPECT_NO_THROW(::onnx::checker::check_model(model)) << name;
    // Loaded as a plain ONNX model, it computes with the values saved.
    const ag::onnx::Model plain = ag::onnx::load(dir() + "/" + name + ".onnx");
    const Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}});
    const Tensor want = std::string(name) == "serve" ? d.serve(x) : d.embed(x);
    EXPECT_EQ(plain({x})[0].to_vector<float>(), want.to_vector<float>()) << name;
  }
  std::ifstream manifest(dir() + "/saved_model.txt");
  std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  // The variables in the order the signatures read them.
  EXPECT_EQ(text,
            "autograph-cpp saved model 1\nsignature serve\nsignature embed\n"
            "variable dense/bias\nvariable dense/kernel\n");
}

TEST_F(SavedModelTest, VariablesOfOneNameAreSavedApart) {
  Variable a(ag::constant(2.0f), "w"), b(ag::constant(3.0f), "w");
  auto f = ag::function([&](const Tensor& x) { return x * a.read() + b.read(); });
  ag::saved_model::save(dir(),
                        {{"f", f.get_concrete_function(ag::TensorSpec({}, ag::float32)).graph()}});
  ag::saved_model::SavedModel m = ag::saved_model::load(dir());
  // Two variables, whichever the graph reads first keeping the name.
  EXPECT_EQ(m.variable("w").read().item<float>() + m.variable("w_1").read().item<float>(), 5.0f);
  EXPECT_NE(m.variable("w").read().item<float>(), m.variable("w_1").read().item<float>());
  EXPECT_EQ(m.signature("f")({ag::constant(10.0f)})[0].item<float>(), 23.0f);
}

// A module with two methods over its variables, as tf.saved_model.save
// takes a tf.Module and its tf.functions.
struct TwoHeads : ag::Module {
  Variable w{ag::random_normal({3, 2}, 0.0, 1.0, ag::float32, /*seed=*/4), "w"};
  Variable b{ag::constant({0.5f, -0.25f}), "b"};
  Tensor hidden(const Tensor& x) const { return ag::relu(ag::matmul(x, w.read()) + b.read()); }
  Tensor predict(const Tensor& x) const { return ag::tanh(hidden(x)) * 2.0f; }
};

TEST_F(SavedModelTest, AModuleSavesItsSignaturesAndVariables) {
  const Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}, {-1.0f, 0.5f, 2.0f}, {0.0f, 0.0f, 1.0f}});
  const Tensor new_w = ag::constant({{1.0f, 0.0f}, {0.0f, -1.0f}, {0.5f, 0.5f}});
  std::vector<float> want_hidden, want_predict, want_assigned;
  {
    TwoHeads model;
    const ag::TensorSpec batch({ag::kUnknownDim, 3}, ag::float32);
    auto hidden = ag::function([&](const Tensor& x) { return model.hidden(x); },
                               {.input_signature = std::vector{batch}});
    auto predict = ag::function([&](const Tensor& x) { return model.predict(x); },
                                {.input_signature = std::vector{batch}});
    ag::saved_model::save(model, dir(), {{"hidden", hidden}, {"predict", predict}});
    want_hidden = hidden(x).to_vector<float>();
    want_predict = predict(x).to_vector<float>();
    EXPECT_EQ(want_hidden, model.hidden(x).to_vector<float>());  // traced == eager
    model.w.assign(new_w);
    want_assigned = model.predict(x).to_vector<float>();
  }  // the module and its functions are gone: only the public load API from here

  ag::saved_model::SavedModel m = ag::saved_model::load(dir());
  EXPECT_EQ(m.signature_names(), (std::vector<std::string>{"hidden", "predict"}));
  EXPECT_EQ(m.signature("hidden")({x})[0].to_vector<float>(), want_hidden);
  EXPECT_EQ(m.signature("predict")({x})[0].to_vector<float>(), want_predict);
  m.variable("w").assign(new_w);
  EXPECT_EQ(m.signature("predict")({x})[0].to_vector<float>(), want_assigned);
  EXPECT_NE(want_assigned, want_predict);
  EXPECT_EQ(m.variable("b").read().to_vector<float>(), (std::vector<float>{0.5f, -0.25f}));
}

TEST_F(SavedModelTest, OneFunctionIsTheServingDefaultSignature) {
  TwoHeads model;
  auto predict = ag::function(
      [&](const Tensor& x) { return model.predict(x); },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim, 3}, ag::float32)}});
  ag::saved_model::save(model, dir(), predict);
  ag::saved_model::SavedModel m = ag::saved_model::load(dir());
  EXPECT_EQ(m.signature_names(), std::vector<std::string>{"serving_default"});
  const Tensor x = ag::constant({{0.5f, 1.0f, -1.0f}});
  EXPECT_EQ(m.signature("serving_default")({x})[0].to_vector<float>(),
            model.predict(x).to_vector<float>());

  // Without an input_signature, there is no trace to save.
  auto unsigned_predict = ag::function([&](const Tensor& x) { return model.predict(x); });
  EXPECT_THROW(ag::saved_model::save(model, dir(), unsigned_predict), ag::ValueError);
}

TEST_F(SavedModelTest, ALayerSavesEveryVariableByItsCheckpointPath) {
  ag::layers::Sequential net(
      {std::make_shared<ag::layers::Dense>(4, ag::layers::DenseOptions{.activation = "relu"}),
       std::make_shared<ag::layers::Dropout>(0.5), std::make_shared<ag::layers::Dense>(2)});
  const Tensor x = ag::constant({{1.0f, -2.0f, 0.5f}});
  net(x);  // built
  auto first = ag::function([&](const Tensor& x) { return (*net.layers()[0])(x); },
                            {.input_signature = std::vector{ag::TensorSpec({1, 3}, ag::float32)}});
  ag::saved_model::save(net, dir(), {{"first", first}});
  const std::vector<float> want = (*net.layers()[0])(x).to_vector<float>();

  ag::saved_model::SavedModel m = ag::saved_model::load(dir());
  std::vector<std::string> names;
  for (const auto& [name, v] : m.variables()) names.push_back(name);
  // The second Dense's variables too, which no signature reads.
  EXPECT_EQ(names,
            (std::vector<std::string>{"layer_with_weights-0/kernel", "layer_with_weights-0/bias",
                                      "layer_with_weights-1/kernel", "layer_with_weights-1/bias"}));
  EXPECT_EQ(m.variable("layer_with_weights-1/kernel").read().to_vector<float>(),
            net.layers()[2]->variables()[0].read().to_vector<float>());
  EXPECT_EQ(m.signature("first")({x})[0].to_vector<float>(), want);
  m.variable("layer_with_weights-0/bias").assign(ag::ones({4}) * 100.0f);
  EXPECT_EQ(m.signature("first")({x})[0].to_vector<float>()[0],
            100.0f + ag::matmul(x, net.layers()[0]->variables()[0].read()).to_vector<float>()[0]);

  // A signature that reads a variable the layer does not hold.
  Variable outside(ag::ones({1, 4}), "outside");
  auto reads_outside =
      ag::function([&](const Tensor& x) { return (*net.layers()[0])(x)*outside.read(); },
                   {.input_signature = std::vector{ag::TensorSpec({1, 3}, ag::float32)}});
  EXPECT_THROW(
      {
        try {
          ag::saved_model::save(net, dir() + "/other", {{"f", reads_outside}});
        } catch (const ag::InvalidArgumentError& e) {
          EXPECT_STREQ(e.what(),
                       "InvalidArgumentError: saved_model::save: signature 'f' reads the "
                       "variable 'outside', which the module does not hold; a SavedModel saves "
                       "its module's variables: save the layer that holds it, or read a variable "
                       "of this module");
          throw;
        }
      },
      ag::InvalidArgumentError);
}

TEST_F(SavedModelTest, ErrorsNameWhatIsWrong) {
  Dense d;
  std::vector<ag::saved_model::Signature> bad = signatures_of(d);
  bad[1].name = "serve";
  EXPECT_THROW(
      {
        try {
          ag::saved_model::save(dir(), bad);
        } catch (const ag::InvalidArgumentError& e) {
          EXPECT_STREQ(e.what(),
                       "InvalidArgumentError: saved_model::save: two signatures are named 'serve'");
          throw;
        }
      },
      ag::InvalidArgumentError);
  bad[1].name = "my model";
  EXPECT_THROW(ag::saved_model::save(dir(), bad), ag::InvalidArgumentError);

  // A function that assigns a variable has no ONNX form.
  auto step = ag::function([&](const Tensor& x) {
    d.bias.assign_add(ag::reduce_sum(x, 0));
    return x;
  });
  EXPECT_THROW(
      ag::saved_model::save(
          dir(),
          {{"step", step.get_concrete_function(ag::TensorSpec({1, 2}, ag::float32)).graph()}}),
      ag::UnimplementedError);

  EXPECT_THROW(ag::saved_model::load(dir() + "/none"), ag::NotFoundError);
  ag::saved_model::save(dir(), signatures_of(d));
  std::ofstream(dir() + "/saved_model.txt") << "something else\n";
  EXPECT_THROW(ag::saved_model::load(dir()), ag::DataLossError);
  std::ofstream(dir() + "/saved_model.txt") << "autograph-cpp saved model 1\nsignature gone\n";
  EXPECT_THROW(ag::saved_model::load(dir()), ag::NotFoundError);
  ag::saved_model::save(dir(), signatures_of(d));
  EXPECT_THROW(ag::saved_model::load(dir()).signature("train"), ag::InvalidArgumentError);
}

}  // namespace
