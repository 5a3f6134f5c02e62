// ONNX's LSTM as onnx/import_rnn.cpp imports it, on models built here:
// against ONNX's equations written with loops over doubles (ONNX's weight
// layout and gate order i, o, f, c), with what ONNX's node tests leave out:
// both directions, per-sequence lengths, clip, input_forget, layout 1 and
// activations with alpha and beta. The loaded model saves (its loops as
// ONNX Loops) and loads again with the same values. A plain LSTM (ONNX's
// default activations, full sequences) is one op per direction, saved as
// an LSTM; a GRU and an RNN made by ag::rnn save as their nodes and load as
// the same ops. Wrong weights and an unknown activation are errors naming
// the node.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "ag/onnx.h"

namespace {

using ag::Tensor;
using onnx::TensorProto;
using Vec = std::vector<double>;
using Fn = std::function<double(double)>;

constexpr int64_t kTime = 3, kBatch = 2, kInput = 2, kHidden = 3;

Vec wavy_values(int64_t n, double scale, double phase) {
  Vec v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(1.3 * double(i) + phase);
  return v;
}

Tensor f64(const Vec& v, const ag::Shape& shape) {
  Tensor t = ag::empty(shape, ag::float64);
  std::copy(v.begin(), v.end(), t.mutable_data<double>());
  return t;
}

// An LSTM node's inputs and attributes, in ONNX's layout 0.
struct Lstm {
  int64_t directions = 2;
  Vec x = wavy_values(kTime * kBatch * kInput, 1.0, 0.1);
  Vec w = wavy_values(directions * 4 * kHidden * kInput, 0.6, 0.2);
  Vec r = wavy_values(directions * 4 * kHidden * kHidden, 0.5, 0.3);
  Vec b = wavy_values(directions * 8 * kHidden, 0.3, 0.4);
  Vec p = wavy_values(directions * 3 * kHidden, 0.4, 0.5);
  Vec h0 = wavy_values(directions * kBatch * kHidden, 0.5, 0.6);
  Vec c0 = wavy_values(directions * kBatch * kHidden, 0.8, 0.7);
  std::vector<int32_t> lengths = {3, 1};
  // Without the inputs sequence_lens and P: every sequence is kTime long
  // (set lengths so) and there are no peepholes (set p to zeros).
  bool without_lengths_and_peepholes = false;
  double clip = 0;  // none
  bool input_forget = false;
  // ONNX's activations per direction, their names and the functions.
  std::vector<std::string> names;
  std::vector<float> alpha, beta;
  std::vector<Fn> f, g, h;
};

double sigmoid(double v) {
  return 1 / (1 + std::exp(-v));
}

struct Outputs {
  Vec y, y_h, y_c;  // [time, directions, batch, hidden], [directions, batch, hidden] twice
};

// ONNX's LSTM equations, direction 1 in reverse, each sequence for its length.
Outputs reference(const Lstm& m) {
  const int64_t H = kHidden, D = m.directions;
  Outputs out{Vec(size_t(kTime * D * kBatch * H), 0.0), {}, {}};
  auto clipped = [&](double v) { return m.clip > 0 ? std::clamp(v, -m.clip, m.clip) : v; };
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t bi = 0; bi < kBatch; ++bi) {
      Vec h(m.h0.begin() + (d * kBatch + bi) * H, m.h0.begin() + (d * kBatch + bi + 1) * H);
      Vec c(m.c0.begin() + (d * kBatch + bi) * H, m.c0.begin() + (d * kBatch + bi + 1) * H);
      const int64_t length = m.lengths[size_t(bi)];
      for (int64_t s = 0; s < length; ++s) {
        const int64_t t = d == 1 ? length - 1 - s : s;
        // Gate k (0 i, 1 o, 2 f, 3 c) of unit u, before its activation.
        auto pre = [&](int64_t k, int64_t u) {
          const int64_t row = k * H + u;
          double v = m.b[size_t(d * 8 * H + row)] + m.b[size_t(d * 8 * H + 4 * H + row)];
          for (int64_t i = 0; i < kInput; ++i)
            v += m.x[size_t((t * kBatch + bi) * kInput + i)] *
                 m.w[size_t((d * 4 * H + row) * kInput + i)];
          for (int64_t j = 0; j < H; ++j)
            v += h[size_t(j)] * m.r[size_t((d * 4 * H + row) * H + j)];
          return v;
        };
        auto peephole = [&](int64_t k, int64_t u) { return m.p[size_t(d * 3 * H + k * H + u)]; };
        Vec h_new(size_t(H), 0.0), c_new(size_t(H), 0.0);
        for (int64_t u = 0; u < H; ++u) {
          const double cu = c[size_t(u)];
          const double i = m.f[size_t(d)](clipped(pre(0, u) + peephole(0, u) * cu));
          const double f =
              m.input_forget ? 1 - i : m.f[size_t(d)](clipped(pre(2, u) + peephole(2, u) * cu));
          c_new[size_t(u)] = f * cu + i * m.g[size_t(d)](clipped(pre(3, u)));
          const double o = m.f[size_t(d)](clipped(pre(1, u) + peephole(1, u) * c_new[size_t(u)]));
          h_new[size_t(u)] = o * m.h[size_t(d)](c_new[size_t(u)]);
        }
        h = h_new;
        c = c_new;
        std::copy(h.begin(), h.end(), out.y.begin() + ((t * D + d) * kBatch + bi) * H);
      }
      out.y_h.insert(out.y_h.end(), h.begin(), h.end());
      out.y_c.insert(out.y_c.end(), c.begin(), c.end());
    }
  }
  return out;
}

void set_type(onnx::ValueInfoProto* info, const std::string& name, int elem,
              const std::vector<int64_t>& dims) {
  info->set_name(name);
  auto* t = info->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::AttributeProto* attribute(onnx::NodeProto* node, const std::string& name,
                                onnx::AttributeProto::AttributeType type) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

// The model of one LSTM node on graph inputs X, W, R, B, sequence_lens,
// initial_h, initial_c and P (float64), with outputs Y, Y_h and Y_c.
std::string lstm_model(const Lstm& m, int64_t layout, const std::vector<int64_t>& w_dims = {}) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("lstm_graph");
  const int64_t D = m.directions, H = kHidden;
  const bool bm = layout == 1;
  const std::vector<int64_t> state =
      bm ? std::vector<int64_t>{kBatch, D, H} : std::vector<int64_t>{D, kBatch, H};
  set_type(g.add_input(), "X", TensorProto::DOUBLE,
           bm ? std::vector<int64_t>{kBatch, kTime, kInput}
              : std::vector<int64_t>{kTime, kBatch, kInput});
  set_type(g.add_input(), "W", TensorProto::DOUBLE,
           w_dims.empty() ? std::vector<int64_t>{D, 4 * H, kInput} : w_dims);
  set_type(g.add_input(), "R", TensorProto::DOUBLE, {D, 4 * H, H});
  set_type(g.add_input(), "B", TensorProto::DOUBLE, {D, 8 * H});
  const bool all = !m.without_lengths_and_peepholes;
  if (all) set_type(g.add_input(), "sequence_lens", TensorProto::INT32, {kBatch});
  set_type(g.add_input(), "initial_h", TensorProto::DOUBLE, state);
  set_type(g.add_input(), "initial_c", TensorProto::DOUBLE, state);
  if (all) set_type(g.add_input(), "P", TensorProto::DOUBLE, {D, 3 * H});
  set_type(
      g.add_output(), "Y", TensorProto::DOUBLE,
      bm ? std::vector<int64_t>{kBatch, kTime, D, H} : std::vector<int64_t>{kTime, D, kBatch, H});
  set_type(g.add_output(), "Y_h", TensorProto::DOUBLE, state);
  set_type(g.add_output(), "Y_c", TensorProto::DOUBLE, state);
  onnx::NodeProto* node = g.add_node();
  node->set_op_type("LSTM");
  node->set_name("lstm");
  for (const char* in : {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"}) {
    const bool left_out = !all && (in == std::string("sequence_lens") || in == std::string("P"));
    node->add_input(left_out ? "" : in);
  }
  for (const char* out : {"Y", "Y_h", "Y_c"}) node->add_output(out);
  attribute(node, "hidden_size", onnx::AttributeProto::INT)->set_i(H);
  attribute(node, "layout", onnx::AttributeProto::INT)->set_i(layout);
  attribute(node, "input_forget", onnx::AttributeProto::INT)->set_i(m.input_forget ? 1 : 0);
  attribute(node, "direction", onnx::AttributeProto::STRING)
      ->set_s(D == 2 ? "bidirectional" : "forward");
  if (m.clip > 0) attribute(node, "clip", onnx::AttributeProto::FLOAT)->set_f(float(m.clip));
  if (!m.names.empty()) {
    auto* a = attribute(node, "activations", onnx::AttributeProto::STRINGS);
    for (const std::string& n : m.names) a->add_strings(n);
  }
  if (!m.alpha.empty()) {
    auto* a = attribute(node, "activation_alpha", onnx::AttributeProto::FLOATS);
    for (float v : m.alpha) a->add_floats(v);
  }
  if (!m.beta.empty()) {
    auto* a = attribute(node, "activation_beta", onnx::AttributeProto::FLOATS);
    for (float v : m.beta) a->add_floats(v);
  }
  return model.SerializeAsString();
}

std::vector<Tensor> inputs(const Lstm& m) {
  const int64_t D = m.directions, H = kHidden;
  if (m.without_lengths_and_peepholes) {
    return {f64(m.x, {kTime, kBatch, kInput}), f64(m.w, {D, 4 * H, kInput}),
            f64(m.r, {D, 4 * H, H}),           f64(m.b, {D, 8 * H}),
            f64(m.h0, {D, kBatch, H}),         f64(m.c0, {D, kBatch, H})};
  }
  return {f64(m.x, {kTime, kBatch, kInput}), f64(m.w, {D, 4 * H, kInput}),
          f64(m.r, {D, 4 * H, H}),           f64(m.b, {D, 8 * H}),
          ag::constant(m.lengths, {kBatch}), f64(m.h0, {D, kBatch, H}),
          f64(m.c0, {D, kBatch, H}),         f64(m.p, {D, 3 * H})};
}

void expect_near(const Tensor& actual, const Vec& expected, const std::string& what) {
  const Vec a = actual.to_vector<double>();
  ASSERT_EQ(a.size(), expected.size()) << what;
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_NEAR(a[k], expected[k], 1e-6 * (1 + std::abs(expected[k]))) << what << ", element " << k;
}

Lstm bidirectional_with_activations() {
  Lstm m;
  m.clip = 0.4;
  // Direction 0: HardSigmoid(alpha 0.3, beta 0.4), Tanh, Relu; direction 1:
  // Sigmoid, LeakyRelu(alpha 0.1), ScaledTanh(alpha 0.7, beta 1.2).
  m.names = {"HardSigmoid", "Tanh", "Relu", "Sigmoid", "LeakyRelu", "ScaledTanh"};
  m.alpha = {0.3f, 0.1f, 0.7f};
  m.beta = {0.4f, 1.2f};
  const double a0 = double(0.3f), b0 = double(0.4f), a1 = double(0.1f), a2 = double(0.7f),
               b2 = double(1.2f);
  m.f = {[=](double v) { return std::clamp(a0 * v + b0, 0.0, 1.0); }, sigmoid};
  m.g = {[](double v) { return std::tanh(v); }, [=](double v) { return v < 0 ? a1 * v : v; }};
  m.h = {[](double v) { return std::max(v, 0.0); },
         [=](double v) { return a2 * std::tanh(b2 * v); }};
  return m;
}

TEST(OnnxRnnImport, BidirectionalLstmFollowsOnnxsEquations) {
  const Lstm m = bidirectional_with_activations();
  const Outputs want = reference(m);
  const ag::onnx::Model model = ag::onnx::load_from_bytes(lstm_model(m, 0), "lstm.onnx");
  const std::vector<Tensor> got = model(inputs(m));
  ASSERT_EQ(got.size(), 3u);
  expect_near(got[0], want.y, "Y");
  expect_near(got[1], want.y_h, "Y_h");
  expect_near(got[2], want.y_c, "Y_c");
  const std::vector<std::string> ops = model.graph().ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "While"), 2) << "a loop per direction";
}

// ONNX's default LSTM over full sequences: one lstm_sequence op per
// direction and no loop; saved, an ONNX LSTM again, loaded with the same
// values.
TEST(OnnxRnnImport, APlainLstmIsOneOpPerDirectionAndSavesAsAnLstm) {
  Lstm m;
  m.without_lengths_and_peepholes = true;
  m.lengths = std::vector<int32_t>(kBatch, int32_t(kTime));
  m.p = Vec(m.p.size(), 0.0);
  m.f = {sigmoid, sigmoid};
  m.g = {[](double v) { return std::tanh(v); }, [](double v) { return std::tanh(v); }};
  m.h = m.g;
  const Outputs want = reference(m);
  const ag::onnx::Model model = ag::onnx::load_from_bytes(lstm_model(m, 0), "lstm.onnx");
  const std::vector<Tensor> got = model(inputs(m));
  ASSERT_EQ(got.size(), 3u);
  expect_near(got[0], want.y, "Y");
  expect_near(got[1], want.y_h, "Y_h");
  expect_near(got[2], want.y_c, "Y_c");
  const std::vector<std::string> ops = model.graph().ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "lstm_sequence"), 2) << "an op per direction";
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "While"), 0);
  const std::string saved = ag::onnx::save_to_bytes(model.graph());
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(saved));
  int lstms = 0;
  for (const onnx::NodeProto& node : proto.graph().node()) lstms += node.op_type() == "LSTM";
  EXPECT_EQ(lstms, 2);
  const std::vector<Tensor> again = ag::onnx::load_from_bytes(saved, "saved.onnx")(inputs(m));
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(again[k].to_vector<double>(), got[k].to_vector<double>()) << "output " << k;
}

TEST(OnnxRnnImport, BatchMajorLayoutWithInputForget) {
  Lstm m{.directions = 1};  // the weights sized for one direction
  m.input_forget = true;
  m.lengths = {2, 3};
  m.f = {sigmoid};
  m.g = {[](double v) { return std::tanh(v); }};
  m.h = m.g;
  const Outputs want = reference(m);
  std::vector<Tensor> in = inputs(m);
  in[0] = ag::transpose(in[0], {1, 0, 2});  // [batch, time, input]
  in[5] = ag::transpose(in[5], {1, 0, 2});  // [batch, directions, hidden]
  in[6] = ag::transpose(in[6], {1, 0, 2});
  const ag::onnx::Model model = ag::onnx::load_from_bytes(lstm_model(m, 1), "lstm.onnx");
  const std::vector<Tensor> got = model(in);
  // Y [batch, time, directions, hidden] back to layout 0's order.
  expect_near(ag::transpose(got[0], {1, 2, 0, 3}), want.y, "Y");
  expect_near(ag::transpose(got[1], {1, 0, 2}), want.y_h, "Y_h");
  expect_near(ag::transpose(got[2], {1, 0, 2}), want.y_c, "Y_c");
}

TEST(OnnxRnnImport, ALoadedLstmSavesAndLoadsAgain) {
  const Lstm m = bidirectional_with_activations();
  const ag::onnx::Model model = ag::onnx::load_from_bytes(lstm_model(m, 0), "lstm.onnx");
  const std::vector<Tensor> first = model(inputs(m));
  const ag::onnx::Model again =
      ag::onnx::load_from_bytes(ag::onnx::save_to_bytes(model.graph()), "saved.onnx");
  const std::vector<Tensor> second = again(inputs(m));
  ASSERT_EQ(second.size(), first.size());
  for (size_t k = 0; k < first.size(); ++k)
    expect_near(second[k], first[k].to_vector<double>(), "output " + std::to_string(k));
}

// A GRU (reset_after and not) and a relu RNN, as rnn::gru and simple_rnn
// make them: each one op, saved as ONNX's GRU and RNN nodes with their
// attributes, and loaded again as the same ops with the same values.
TEST(OnnxRnnImport, GruAndRnnSequenceOpsSaveAsTheirNodesAndLoadAgain) {
  auto wave = [](std::vector<int64_t> dims, double phase) {
    const ag::Shape shape(dims);
    Vec v(size_t(shape.num_elements()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 * std::sin(1.7 * double(i) + phase);
    return ag::constant(v, shape);
  };
  const Tensor x = wave({kBatch, kTime, kInput}, 0.1), h0 = wave({kBatch, kHidden}, 0.2);
  auto run = [&](const Tensor& in) {
    ag::rnn::GRUOptions reset_before;
    reset_before.reset_after = false;
    ag::rnn::RNNOptions reverse;
    reverse.reverse = true;
    ag::rnn::SimpleRNNOptions relu;
    relu.activation = ag::rnn::activation("relu");
    const ag::rnn::GRUWeights gru{wave({kInput, 3 * kHidden}, 0.3),
                                  wave({kHidden, 3 * kHidden}, 0.4), wave({2, 3 * kHidden}, 0.5)};
    const ag::rnn::SimpleRNNWeights rnn{wave({kInput, kHidden}, 0.6), wave({kHidden, kHidden}, 0.7),
                                        wave({kHidden}, 0.8)};
    return std::vector<Tensor>{ag::rnn::gru(in, {h0}, gru).outputs,
                               ag::rnn::gru(in, {h0}, gru, reset_before, reverse).states[0],
                               ag::rnn::simple_rnn(in, {h0}, rnn, relu).outputs};
  };
  auto traced = ag::function(run);
  const std::vector<Tensor> want = traced(x);
  const std::string saved = ag::onnx::save_to_bytes(traced.get_concrete_function(x).graph());
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(saved));
  std::vector<std::string> recurrent;
  for (const onnx::NodeProto& node : proto.graph().node()) {
    if (node.op_type() != "GRU" && node.op_type() != "RNN") continue;
    std::string form = node.op_type();
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "linear_before_reset") form += " lbr=" + std::to_string(a.i());
      if (a.name() == "direction") form += " " + a.s();
      if (a.name() == "activations") form += " " + a.strings(0);
    }
    recurrent.push_back(form);
  }
  EXPECT_EQ(recurrent, (std::vector<std::string>{"GRU lbr=1", "GRU reverse lbr=0", "RNN Relu"}));
  const ag::onnx::Model loaded = ag::onnx::load_from_bytes(saved, "saved.onnx");
  const std::vector<Tensor> again = loaded({x});
  ASSERT_EQ(again.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    expect_near(again[k], want[k].to_vector<double>(), "output " + std::to_string(k));
  const std::vector<std::string> ops = loaded.graph().ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "gru_sequence"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "simple_rnn_sequence"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "While"), 0);
}

TEST(OnnxRnnImport, WrongWeightsAndUnknownActivationsAreErrorsNamingTheNode) {
  Lstm m = bidirectional_with_activations();
  try {
    ag::onnx::load_from_bytes(lstm_model(m, 0, {2, 8, kInput}), "lstm.onnx");
    ADD_FAILURE() << "no error for W [2, 8, 2]";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "LSTM node 'lstm': input W must have shape [num_directions, 4 * hidden_size, "
                  "input_size] = [2, 12, 2], got [2, 8, 2]"),
              std::string::npos)
        << e.what();
  }
  m.names[4] = "Swish";
  try {
    ag::onnx::load_from_bytes(lstm_model(m, 0), "lstm.onnx");
    ADD_FAILURE() << "no error for activation Swish";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("LSTM node 'lstm': activation 'Swish' is not supported"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
