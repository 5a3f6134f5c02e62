#include "graph/graph_text.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "ag/strings.h"
#include "core/tensor_impl.h"
#include "graph/variable_state.h"
#include "ops/cast_storage.h"

namespace ag::graph {

std::string_view subgraph_role(NodeKind kind, size_t k) {
  if (kind == NodeKind::If && k < 2) return k == 0 ? "then" : "else";
  if (kind == NodeKind::While && k < 2) return k == 0 ? "cond" : "body";
  if (kind == NodeKind::Fused && k == 0) return "members";
  return "subgraph";
}

namespace {

// The words of the node kinds that are not registry ops.
constexpr std::pair<std::string_view, NodeKind> kKindWords[] = {
    {"Placeholder", NodeKind::Placeholder},
    {"Const", NodeKind::Const},
    {"ReadVariableOp", NodeKind::ReadVariable},
    {"AssignVariableOp", NodeKind::AssignVariable},
    {"AssignAddVariableOp", NodeKind::AssignAddVariable},
    {"AssignSubVariableOp", NodeKind::AssignSubVariable},
    {"Effect", NodeKind::Effect},
    {"If", NodeKind::If},
    {"While", NodeKind::While},
    {"Fused", NodeKind::Fused},
};

// An Effect node's op_name() is its own name; the text says what it is.
std::string kind_word(const Node& n) {
  return n.kind == NodeKind::Effect ? "Effect" : n.op_name();
}

bool is_bare_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// The word characters of the lexer: a bare name's, and a number's signs.
bool is_word_char(char c) {
  return is_bare_char(c) || c == '-' || c == '+';
}

bool is_bare(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_bare_char);
}

// ---- Printing

void write_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}

void write_name(std::string& out, std::string_view name) {
  if (is_bare(name)) {
    out += name;
  } else {
    write_quoted(out, name);
  }
}

void write_ref(std::string& out, const Body& body, ValueRef v) {
  write_name(out, body.nodes[size_t(v.node)].name);
  if (v.output != 0) out += ":" + std::to_string(v.output);
}

// The shortest decimal that reads back to the same value.
template <class T>
std::string format_number(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
    return std::string(buffer, result.ptr);
  }
}

void write_type(std::string& out, const ops::ValueType& type) {
  out += dtype_name(type.dtype);
  out += '[';
  if (type.shape.has_unknown_rank()) out += '*';
  for (int i = 0; i < type.shape.rank(); ++i) {
    if (i) out += ", ";
    out += type.shape[i] == kUnknownDim ? "?" : std::to_string(type.shape[i]);
  }
  out += ']';
}

void write_types(std::string& out, const SmallVector<ops::ValueType, 1>& types) {
  if (types.empty()) out += "()";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) out += ", ";
    write_type(out, types[i]);
  }
}

// The fields that differ from ops::Attrs{} (bit for bit: -0.0 is not 0.0).
void write_attrs(std::string& out, const ops::Attrs& attrs) {
  const ops::Attrs defaults;
  std::vector<std::string> fields;
  if (attrs.ints != defaults.ints) {
    std::string ints = "ints=[";
    for (size_t i = 0; i < attrs.ints.size(); ++i)
      ints += (i ? ", " : "") + std::to_string(attrs.ints[i]);
    fields.push_back(ints + "]");
  }
  if (attrs.axis != defaults.axis) fields.push_back("axis=" + std::to_string(attrs.axis));
  if (attrs.keepdims != defaults.keepdims) fields.push_back("keepdims=true");
  if (attrs.dtype != defaults.dtype)
    fields.push_back("dtype=" + std::string(dtype_name(attrs.dtype)));
  if (std::bit_cast<uint64_t>(attrs.lo) != std::bit_cast<uint64_t>(defaults.lo))
    fields.push_back("lo=" + format_number(attrs.lo));
  if (std::bit_cast<uint64_t>(attrs.hi) != std::bit_cast<uint64_t>(defaults.hi))
    fields.push_back("hi=" + format_number(attrs.hi));
  if (attrs.seed != defaults.seed) fields.push_back("seed=" + std::to_string(attrs.seed));
  if (fields.empty()) return;
  out += " {";
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? ", " : "") + fields[i];
  out += '}';
}

void write_elements(std::string& out, const Tensor& value, int64_t max_elements) {
  const int64_t count = value.num_elements();
  const int64_t shown = max_elements >= 0 && count > max_elements ? max_elements : count;
  out += '[';
  if (value.dtype() == DType::string) {  // quoted, as names are
    const std::vector<std::string> texts = strings::to_vector(value);
    for (int64_t i = 0; i < shown; ++i) {
      out += i ? ", " : "";
      write_quoted(out, texts[size_t(i)]);
    }
    if (shown < count) out += (shown ? ", " : "") + ("...(" + std::to_string(count) + " elements)");
    out += ']';
    return;
  }
  // A storage dtype's elements are written as their compute dtype's.
  const DType wide = compute_dtype(value.dtype());
  std::vector<char> widened;
  const void* elements = value.raw_data();
  if (wide != value.dtype()) {
    widened.resize(size_t(shown) * dtype_size(wide));
    ops::cast_storage(elements, value.dtype(), widened.data(), wide, shown);
    elements = widened.data();
  }
  visit_dtype(wide, [&](auto zero) {
    using T = decltype(zero);
    const T* data = static_cast<const T*>(elements);
    for (int64_t i = 0; i < shown; ++i) out += (i ? ", " : "") + format_number(data[i]);
  });
  if (shown < count) {
    out += shown ? ", " : "";
    out += "...(" + std::to_string(count) + " elements)";
  }
  out += ']';
}

void write_constant(std::string& out, const Node& n, const TextOptions& options) {
  if (!n.value.defined()) {
    out += " undefined";
    return;
  }
  const ops::ValueType own{n.value.dtype(), n.value.shape()};
  if (n.outputs.size() != 1 || n.outputs[0].dtype != own.dtype || n.outputs[0].shape != own.shape) {
    out += ' ';
    write_type(out, own);
  }
  out += ' ';
  write_elements(out, n.value, options.max_constant_elements);
}

void write_variable(std::string& out, const detail::VariableState& v) {
  out += " variable{id=" + std::to_string(v.id) + ", name=";
  write_quoted(out, v.name);
  out += ", type=";
  write_type(out, {v.dtype, v.shape});
  out += v.trainable ? ", trainable=true}" : ", trainable=false}";
}

void write_body(std::string& out, const Body& body, const std::string& indent,
                const TextOptions& options);

void write_subgraphs(std::string& out, const Node& n, const std::string& indent,
                     const TextOptions& options) {
  out += " {\n";
  for (size_t k = 0; k < n.subgraphs.size(); ++k) {
    out += indent + "  " + std::string(subgraph_role(n.kind, k)) + " {\n";
    write_body(out, *n.subgraphs[k], indent + "    ", options);
    out += indent + "  }\n";
  }
  out += indent + "}";
}

void write_node(std::string& out, const Body& body, const Node& n, const std::string& indent,
                const TextOptions& options) {
  out += indent;
  write_name(out, n.name);
  out += " = " + kind_word(n);
  if (!n.inputs.empty()) {
    out += '(';
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (i) out += ", ";
      write_ref(out, body, n.inputs[i]);
    }
    out += ')';
  }
  write_attrs(out, n.attrs);
  if (n.kind == NodeKind::Const) write_constant(out, n, options);
  if (n.variable) write_variable(out, *n.variable);
  out += " : ";
  write_types(out, n.outputs);
  if (!n.subgraphs.empty()) write_subgraphs(out, n, indent, options);
  out += '\n';
}

void write_body(std::string& out, const Body& body, const std::string& indent,
                const TextOptions& options) {
  for (const Node& n : body.nodes) write_node(out, body, n, indent, options);
  out += indent + "inputs (";
  for (size_t i = 0; i < body.placeholders.size(); ++i) {
    if (i) out += ", ";
    write_name(out, body.nodes[size_t(body.placeholders[i])].name);
  }
  out += ")\n" + indent + "outputs (";
  for (size_t i = 0; i < body.outputs.size(); ++i) {
    if (i) out += ", ";
    write_ref(out, body, body.outputs[i]);
  }
  out += ")\n";
}

// ---- Lexing

struct Token {
  enum class Kind { kWord, kString, kPunct, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // a string's text without quotes and escapes
  int line = 0;
  int column = 0;

  // A word or punctuation (never a string) spelt `s`.
  bool is(std::string_view s) const {
    return (kind == Kind::kWord || kind == Kind::kPunct) && text == s;
  }
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::kEnd:
      return "the end of the text";
    case Token::Kind::kString:
      return "the string \"" + t.text + "\"";
    default:
      return "'" + t.text + "'";
  }
}

std::string position(const Token& t) {
  return std::to_string(t.line) + ":" + std::to_string(t.column);
}

// "graph text:3:14: <message>", then line 3 and a caret under column 14.
[[noreturn]] void fail_at(std::string_view text, int line, int column, const std::string& message) {
  size_t start = 0;
  for (int l = 1; l < line && start != std::string_view::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  std::string_view line_text = start == std::string_view::npos ? "" : text.substr(start);
  line_text = line_text.substr(0, line_text.find('\n'));
  throw InvalidArgumentError("graph text:" + std::to_string(line) + ":" + std::to_string(column) +
                             ": " + message + "\n  " + std::string(line_text) + "\n  " +
                             std::string(size_t(std::max(column - 1, 0)), ' ') + "^");
}

constexpr std::string_view kPunctuation = "()[]{},:=?*";

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> tokens;
    for (;;) {
      skip_space_and_comments();
      Token t;
      t.line = line_;
      t.column = column();
      if (at_ >= text_.size()) {
        tokens.push_back(std::move(t));
        return tokens;
      }
      read_token(t);
      tokens.push_back(std::move(t));
    }
  }

 private:
  int column() const { return int(at_ - line_start_) + 1; }

  void skip_space_and_comments() {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '\n') {
        ++line_;
        line_start_ = ++at_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++at_;
      } else if (text_.substr(at_, 2) == "//") {
        while (at_ < text_.size() && text_[at_] != '\n') ++at_;
      } else {
        return;
      }
    }
  }

  void read_token(Token& t) {
    const char c = text_[at_];
    if (kPunctuation.find(c) != std::string_view::npos) {
      t.kind = Token::Kind::kPunct;
      t.text = std::string(1, c);
      ++at_;
    } else if (is_word_char(c)) {
      const size_t start = at_;
      while (at_ < text_.size() && is_word_char(text_[at_])) ++at_;
      t.kind = Token::Kind::kWord;
      t.text = std::string(text_.substr(start, at_ - start));
    } else if (c == '"') {
      read_string(t);
    } else {
      fail_at(text_, line_, column(),
              "unexpected character '" + std::string(1, c) +
                  "': expected a name, a number, a string or one of ( ) [ ] { } , : = ? *");
    }
  }

  void read_string(Token& t) {
    t.kind = Token::Kind::kString;
    ++at_;
    for (;;) {
      if (at_ >= text_.size() || text_[at_] == '\n')
        fail_at(text_, t.line, t.column, "a string is not closed on its line: expected '\"'");
      const char c = text_[at_++];
      if (c == '"') return;
      if (c != '\\') {
        t.text += c;
        continue;
      }
      const char escaped = at_ < text_.size() ? text_[at_++] : '\0';
      if (escaped == 'n') {
        t.text += '\n';
      } else if (escaped == '"' || escaped == '\\') {
        t.text += escaped;
      } else {
        fail_at(text_, line_, column() - 1,
                "unknown escape in a string: expected \\n, \\\" or \\\\");
      }
    }
  }

  std::string_view text_;
  size_t at_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

// ---- Parsing

template <class T>
std::optional<T> to_number(std::string_view s) {
  T value{};
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<ops::OpId> op_named(std::string_view name) {
  for (size_t i = 0; i < size_t(ops::OpId::kCount); ++i) {
    if (ops::op_def(ops::OpId(i)).name == name) return ops::OpId(i);
  }
  return std::nullopt;
}

// What a parsed Effect node runs: the text does not hold the function.
std::shared_ptr<const EffectFn> parsed_effect(const std::string& name) {
  return std::make_shared<const EffectFn>([name](
                                              const std::vector<Tensor>&) -> std::vector<Tensor> {
    throw UnimplementedError("effect '" + name +
                             "' was parsed from graph text, which does not hold the function it "
                             "runs; trace the function to run it");
  });
}

// A constant's elements as written; converted once the node's type is read.
struct ConstantText {
  Token at;
  bool undefined = false;
  std::optional<ops::ValueType> type;
  std::vector<Token> elements;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(Lexer(text).tokens()) {}

  Body parse() {
    Body body;
    parse_body(body, nullptr);
    return body;
  }

 private:
  // The body being parsed and its nodes by name, defined so far.
  struct Scope {
    Body& body;
    std::unordered_map<std::string, int32_t> nodes;
    bool has_inputs = false;
    bool has_outputs = false;
  };

  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  const Token& next() {
    const Token& t = peek();
    if (at_ + 1 < tokens_.size()) ++at_;
    return t;
  }
  bool accept(std::string_view s) {
    if (!peek().is(s)) return false;
    next();
    return true;
  }
  // `expected` names what fits here: "expected ')' after ...".
  void expect(std::string_view s, const std::string& expected) {
    if (!accept(s)) fail(peek(), expected);
  }
  [[noreturn]] void fail(const Token& at, const std::string& expected) const {
    fail_at(text_, at.line, at.column, expected + ", got " + describe(at));
  }
  [[noreturn]] void fail_here(const Token& at, const std::string& message) const {
    fail_at(text_, at.line, at.column, message);
  }

  // A body's lines up to the '}' that closes `open`, or to the end of the
  // text for the outermost body (open null).
  void parse_body(Body& body, const Token* open) {
    Scope scope{body, {}};
    for (;;) {
      const Token& t = peek();
      if (open && t.is("}")) {
        next();
        return;
      }
      if (t.kind == Token::Kind::kEnd) {
        if (open) fail(t, "expected '}' closing the body opened at " + position(*open));
        return;
      }
      if (t.kind == Token::Kind::kWord && peek(1).is("(") && t.is("inputs")) {
        parse_inputs(scope);
      } else if (t.kind == Token::Kind::kWord && peek(1).is("(") && t.is("outputs")) {
        parse_outputs(scope);
      } else {
        parse_node(scope);
      }
    }
  }

  void parse_inputs(Scope& scope) {
    const Token& keyword = next();
    if (scope.has_inputs) fail_here(keyword, "the body lists its inputs twice");
    scope.has_inputs = true;
    next();  // '('
    if (accept(")")) return;
    do {
      const Token& at = peek();
      const ValueRef v = parse_ref(scope);
      if (v.output != 0) fail_here(at, "an input is a node, not an output of one");
      scope.body.placeholders.push_back(v.node);
    } while (accept(","));
    expect(")", "expected ',' or ')' after an input");
  }

  void parse_outputs(Scope& scope) {
    const Token& keyword = next();
    if (scope.has_outputs) fail_here(keyword, "the body lists its outputs twice");
    scope.has_outputs = true;
    next();  // '('
    if (accept(")")) return;
    do {
      scope.body.outputs.push_back(parse_ref(scope));
    } while (accept(","));
    expect(")", "expected ',' or ')' after an output");
  }

  std::string parse_name(const std::string& expected) {
    const Token& t = peek();
    if (t.kind != Token::Kind::kWord && t.kind != Token::Kind::kString) fail(t, expected);
    return next().text;
  }

  // "add" or "If:1": a node of this body defined before this point.
  ValueRef parse_ref(const Scope& scope) {
    const Token& at = peek();
    const std::string name = parse_name("expected a value (a node's name, then ':k' for output k)");
    const auto it = scope.nodes.find(name);
    if (it == scope.nodes.end()) {
      fail_here(at, "no node named '" + name +
                        "' is defined before this point in its body (a node reads earlier "
                        "nodes of its own body only)");
    }
    ValueRef v{it->second, 0};
    if (!accept(":")) return v;
    const Token& index = peek();
    const std::optional<int32_t> k = to_number<int32_t>(index.text);
    if (index.kind != Token::Kind::kWord || !k) fail(index, "expected an output index after ':'");
    next();
    const size_t count = scope.body.nodes[size_t(v.node)].outputs.size();
    if (*k < 0 || size_t(*k) >= count) {
      fail_here(index, "'" + name + "' has " + std::to_string(count) +
                           " outputs; there is no output " + std::to_string(*k));
    }
    v.output = *k;
    return v;
  }

  void parse_node(Scope& scope) {
    const Token& name_at = peek();
    Node node;
    node.name = parse_name("expected a node's name, 'inputs (' or 'outputs ('");
    if (scope.nodes.contains(node.name)) {
      fail_here(name_at, "a node named '" + node.name +
                             "' is defined already in this body; names are unique in a body");
    }
    expect("=", "expected '=' after the node's name");
    parse_kind(node);
    if (accept("(")) parse_node_inputs(scope, node);
    if (peek().is("{")) node.attrs = parse_attrs();
    std::optional<ConstantText> constant;
    if (node.kind == NodeKind::Const) constant = parse_constant_text();
    if (peek().is("variable")) node.variable = parse_variable();
    expect(":", "expected ':' and the node's output types");
    node.outputs = parse_types();
    if (constant) node.value = make_constant(*constant, node);
    if (node.kind == NodeKind::Effect) node.effect = parsed_effect(node.name);
    if (peek().is("{")) parse_subgraphs(node);
    // Registers the name with the body, so that unique_name continues from it.
    // (Unused so far, the name comes back unchanged.)
    node.name = scope.body.unique_name(node.name);
    const int32_t index = scope.body.add(std::move(node));
    scope.nodes.emplace(scope.body.nodes.back().name, index);
  }

  void parse_kind(Node& node) {
    const Token& t = peek();
    if (t.kind != Token::Kind::kWord) fail(t, "expected a node kind or an op name after '='");
    next();
    for (const auto& [word, kind] : kKindWords) {
      if (t.text == word) {
        node.kind = kind;
        return;
      }
    }
    const std::optional<ops::OpId> op = op_named(t.text);
    if (!op) {
      fail_here(t, "'" + t.text +
                       "' is neither a node kind (Placeholder, Const, Effect, If, While, Fused, "
                       "ReadVariableOp, Assign*VariableOp) nor an op of include/ag/ops.def");
    }
    node.kind = NodeKind::Op;
    node.op = *op;
  }

  void parse_node_inputs(const Scope& scope, Node& node) {
    if (accept(")")) return;
    do {
      node.inputs.push_back(parse_ref(scope));
    } while (accept(","));
    expect(")", "expected ',' or ')' after an input of the node");
  }

  ops::Attrs parse_attrs() {
    next();  // '{'
    ops::Attrs attrs;
    std::vector<std::string> seen;
    if (accept("}")) return attrs;
    do {
      const Token& key = peek();
      if (key.kind != Token::Kind::kWord)
        fail(key, "expected an attribute (ints, axis, keepdims, dtype, lo, hi or seed)");
      next();
      if (std::find(seen.begin(), seen.end(), key.text) != seen.end())
        fail_here(key, "the attribute '" + key.text + "' is given twice");
      seen.push_back(key.text);
      expect("=", "expected '=' after the attribute's name");
      parse_attr_value(key, attrs);
    } while (accept(","));
    expect("}", "expected ',' or '}' after an attribute");
    return attrs;
  }

  void parse_attr_value(const Token& key, ops::Attrs& attrs) {
    const std::string& k = key.text;
    if (k == "ints") {
      attrs.ints = parse_int_list();
    } else if (k == "axis") {
      attrs.axis = parse_number<int64_t>("an integer axis");
    } else if (k == "keepdims") {
      attrs.keepdims = parse_bool();
    } else if (k == "dtype") {
      attrs.dtype = parse_dtype();
    } else if (k == "lo" || k == "hi") {
      (k == "lo" ? attrs.lo : attrs.hi) = parse_number<double>("a number");
    } else if (k == "seed") {
      attrs.seed = parse_number<uint64_t>("an unsigned integer seed");
    } else {
      fail_here(key, "unknown attribute '" + k +
                         "': the attributes are ints, axis, keepdims, dtype, lo, hi and seed");
    }
  }

  template <class T>
  T parse_number(const std::string& what) {
    const Token& t = peek();
    const std::optional<T> value =
        t.kind == Token::Kind::kWord ? to_number<T>(t.text) : std::nullopt;
    if (!value) fail(t, "expected " + what);
    next();
    return *value;
  }

  bool parse_bool() {
    if (accept("true")) return true;
    if (accept("false")) return false;
    fail(peek(), "expected true or false");
  }

  std::vector<int64_t> parse_int_list() {
    expect("[", "expected '[' and a list of integers");
    std::vector<int64_t> ints;
    if (accept("]")) return ints;
    do {
      ints.push_back(parse_number<int64_t>("an integer"));
    } while (accept(","));
    expect("]", "expected ',' or ']' after an integer");
    return ints;
  }

  DType parse_dtype() {
    const Token& t = peek();
    for (DType d : kAllDTypes) {
      if (t.kind == Token::Kind::kWord && t.text == dtype_name(d)) {
        next();
        return d;
      }
    }
    if (t.kind == Token::Kind::kWord && t.text == dtype_name(DType::string)) {
      next();
      return DType::string;
    }
    fail(t, "expected a dtype (float32, float64, int32, int64 or bool)");
  }

  // dtype[2, ?], dtype[] (a scalar) or dtype[*] (an unknown rank).
  ops::ValueType parse_type() {
    ops::ValueType type;
    type.dtype = parse_dtype();
    expect("[", "expected '[' and the shape after the dtype");
    if (accept("*")) {
      type.shape = Shape::unknown_rank();
      expect("]", "expected ']' after '*' (an unknown rank)");
      return type;
    }
    if (accept("]")) return type;
    do {
      const Token& at = peek();
      if (type.shape.rank() == Shape::kMaxRank)
        fail_here(at, "a shape has at most " + std::to_string(Shape::kMaxRank) + " dims");
      const int64_t dim =
          accept("?") ? kUnknownDim : parse_number<int64_t>("a dim (a size, or '?' when unknown)");
      if (dim < kUnknownDim) fail_here(at, "a dim is a size, never negative");
      type.shape.push_back(dim);
    } while (accept(","));
    expect("]", "expected ',' or ']' after a dim");
    return type;
  }

  SmallVector<ops::ValueType, 1> parse_types() {
    SmallVector<ops::ValueType, 1> types;
    if (accept("(")) {
      expect(")", "expected ')': '()' stands for no outputs");
      return types;
    }
    do {
      types.push_back(parse_type());
    } while (accept(","));
    return types;
  }

  // `undefined`, or [type] [elements].
  ConstantText parse_constant_text() {
    ConstantText constant;
    constant.at = peek();
    if (accept("undefined")) {
      constant.undefined = true;
      return constant;
    }
    if (peek().kind == Token::Kind::kWord) constant.type = parse_type();
    expect("[", "expected the constant's elements in '[...]', or 'undefined'");
    if (accept("]")) return constant;
    do {
      const Token& element = peek();
      if (element.kind == Token::Kind::kWord && element.text.starts_with("...")) {
        fail_here(element,
                  "this constant's elements were elided when it was printed "
                  "(TextOptions::max_constant_elements); print it whole to parse it back");
      }
      if (element.kind != Token::Kind::kWord && element.kind != Token::Kind::kString)
        fail(element, "expected an element of the constant");
      constant.elements.push_back(next());
    } while (accept(","));
    expect("]", "expected ',' or ']' after an element");
    return constant;
  }

  Tensor make_constant(const ConstantText& constant, const Node& node) const {
    if (constant.undefined) return {};
    if (!constant.type && node.outputs.size() != 1) {
      fail_here(constant.at, "a constant with " + std::to_string(node.outputs.size()) +
                                 " output types needs its value's type before its elements");
    }
    const ops::ValueType type = constant.type ? *constant.type : node.outputs[0];
    if (!type.shape.is_fully_defined()) {
      fail_here(constant.at, "a constant's shape is fully defined; got " + type.shape.to_string());
    }
    if (int64_t(constant.elements.size()) != type.shape.num_elements()) {
      fail_here(constant.at, "a constant of shape " + type.shape.to_string() + " has " +
                                 std::to_string(type.shape.num_elements()) +
                                 " elements; the text lists " +
                                 std::to_string(constant.elements.size()));
    }
    if (type.dtype == DType::string) {
      std::vector<std::string> texts;
      for (const Token& t : constant.elements) {
        if (t.kind != Token::Kind::kString) fail(t, "expected a quoted string");
        texts.push_back(t.text);
      }
      return api::constant(texts, type.shape);
    }
    const DType wide = compute_dtype(type.dtype);
    Tensor value = detail::make_eager(wide, type.shape);
    visit_dtype(wide, [&](auto zero) {
      using T = decltype(zero);
      T* data = static_cast<T*>(value.raw_mutable_data());
      for (size_t i = 0; i < constant.elements.size(); ++i)
        data[i] = parse_element<T>(constant.elements[i]);
    });
    if (wide == type.dtype) return value;
    Tensor stored = detail::make_eager(type.dtype, type.shape);
    ops::cast_storage(value.raw_data(), wide, stored.raw_mutable_data(), type.dtype,
                      type.shape.num_elements());
    return stored;
  }

  template <class T>
  T parse_element(const Token& t) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (t.text == "true" || t.text == "false") return t.text == "true";
      fail(t, "expected a bool element (true or false)");
    } else {
      const std::optional<T> value = to_number<T>(t.text);
      if (!value) fail(t, "expected a " + std::string(dtype_name(dtype_v<T>)) + " element");
      return *value;
    }
  }

  // variable{id=3, name="v", type=float32[3], trainable=true}: one state per
  // id in the whole text, shared by the nodes (of any body) that name it.
  std::shared_ptr<detail::VariableState> parse_variable() {
    const Token& at = next();  // 'variable'
    expect("{", "expected '{' and the variable's id, name, type and trainable");
    auto state = std::make_shared<detail::VariableState>();
    expect("id", "expected 'id' first");
    expect("=", "expected '=' after 'id'");
    state->id = parse_number<uint64_t>("the variable's id, an unsigned integer");
    expect(",", "expected ',' and the variable's name");
    expect("name", "expected 'name'");
    expect("=", "expected '=' after 'name'");
    if (peek().kind != Token::Kind::kString) fail(peek(), "expected the variable's name, quoted");
    state->name = next().text;
    expect(",", "expected ',' and the variable's type");
    expect("type", "expected 'type'");
    expect("=", "expected '=' after 'type'");
    const ops::ValueType type = parse_type();
    state->dtype = type.dtype;
    state->shape = type.shape;
    expect(",", "expected ',' and whether the variable is trainable");
    expect("trainable", "expected 'trainable'");
    expect("=", "expected '=' after 'trainable'");
    state->trainable = parse_bool();
    expect("}", "expected '}' after the variable's fields");
    return shared_variable(at, std::move(state));
  }

  std::shared_ptr<detail::VariableState> shared_variable(
      const Token& at, std::shared_ptr<detail::VariableState> state) {
    const auto [it, added] = variables_.emplace(state->id, state);
    const detail::VariableState& known = *it->second;
    if (!added && (known.name != state->name || known.dtype != state->dtype ||
                   known.shape != state->shape || known.trainable != state->trainable)) {
      fail_here(at, "variable " + std::to_string(state->id) +
                        " is described differently than where it first appears");
    }
    return it->second;
  }

  void parse_subgraphs(Node& node) {
    next();  // '{'
    while (!accept("}")) {
      const size_t k = node.subgraphs.size();
      const std::string role(subgraph_role(node.kind, k));
      const Token& t = peek();
      if (!t.is(role)) {
        fail(t, "expected '" + role + "' (subgraph " + std::to_string(k) + " of " +
                    kind_word(node) + " '" + node.name + "') or '}'");
      }
      next();
      const Token& open = peek();
      expect("{", "expected '{' and the " + role + " body");
      auto subgraph = std::make_shared<Body>();
      parse_body(*subgraph, &open);
      node.subgraphs.push_back(std::move(subgraph));
    }
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t at_ = 0;
  std::unordered_map<uint64_t, std::shared_ptr<detail::VariableState>> variables_;
};

}  // namespace

std::string to_text(const Body& body, const TextOptions& options) {
  std::string out;
  write_body(out, body, "", options);
  return out;
}

Body parse_text(std::string_view text) {
  return Parser(text).parse();
}

}  // namespace ag::graph
