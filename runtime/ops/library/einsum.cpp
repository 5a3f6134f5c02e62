// einsum (tf.einsum): sums of products of the operands' elements named by an
// equation of subscripts. Lowered to transpose, reshape, gather (a diagonal:
// a subscript repeated within one operand), reduce_sum (a subscript of one
// operand absent from the output), mul (no subscript contracted) and matmul
// (the contracted subscripts as its k, those in both operands and kept as its
// batch dims), two operands at a time from the left: so it runs on the GEMM
// library, differentiates and exports to ONNX through those ops.
//
// Subscripts are letters; "..." stands for the dims an operand has beyond its
// letters, aligned from the last across operands and broadcast as NumPy
// broadcasts. Without "->" the output is "..." then the letters that appear
// once, in alphabetical order (NumPy's implicit mode). Spaces are ignored.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"

namespace ag::api {

namespace {

// A subscript: a letter's character code, or kEllipsisLabel + i for the i-th
// dim of "..." (of the widest "...", counted from its first dim).
using Label = int;
constexpr Label kEllipsisLabel = 256;

// One term of the equation as written: its labels before and after "...".
struct EinsumTerm {
  std::vector<Label> before, after;
  bool ellipsis = false;
  std::string text;                     // as written, for errors
  size_t position = 0;                  // where it starts in the equation
  std::vector<size_t> label_positions;  // of `before` then `after`
};

struct EinsumEquation {
  std::string text;
  std::vector<EinsumTerm> inputs;
  bool explicit_output = false;
  EinsumTerm output;
};

[[noreturn]] void einsum_fail(const std::string& why) {
  throw InvalidArgumentError("einsum: " + why);
}

std::string einsum_at(const EinsumEquation& eq, size_t position) {
  return " at position " + std::to_string(position) + " of '" + eq.text + "'";
}

// Parses the characters [begin, end) of the equation as one term.
EinsumTerm einsum_parse_term(const EinsumEquation& eq, size_t begin, size_t end) {
  EinsumTerm term;
  term.position = begin;
  term.text = eq.text.substr(begin, end - begin);
  for (size_t i = begin; i < end; ++i) {
    const char ch = eq.text[i];
    if (std::isspace(static_cast<unsigned char>(ch))) continue;
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      (term.ellipsis ? term.after : term.before).push_back(Label(ch));
      term.label_positions.push_back(i);
    } else if (ch == '.') {
      if (eq.text.compare(i, 3, "...") != 0 || i + 3 > end)
        einsum_fail("'.'" + einsum_at(eq, i) + " is not part of an ellipsis '...'");
      if (term.ellipsis) einsum_fail("a second '...'" + einsum_at(eq, i) + " in one term");
      term.ellipsis = true;
      i += 2;
    } else {
      einsum_fail("invalid character '" + std::string(1, ch) + "'" + einsum_at(eq, i) +
                  "; subscripts are letters, '...', ',' between operands and '->' before "
                  "the output");
    }
  }
  return term;
}

EinsumEquation einsum_parse(std::string_view equation) {
  EinsumEquation eq;
  eq.text = std::string(equation);
  const size_t arrow = eq.text.find("->");
  if (arrow != std::string::npos && eq.text.find("->", arrow + 2) != std::string::npos)
    einsum_fail("a second '->'" + einsum_at(eq, eq.text.find("->", arrow + 2)));
  const size_t inputs_end = arrow == std::string::npos ? eq.text.size() : arrow;
  for (size_t i = 0; i < eq.text.size(); ++i) {
    if ((eq.text[i] == '-' || eq.text[i] == '>') && (i < arrow || i > arrow + 1))
      einsum_fail("'" + std::string(1, eq.text[i]) + "'" + einsum_at(eq, i) +
                  " is not part of an arrow '->'");
  }
  size_t begin = 0;
  for (size_t i = 0; i <= inputs_end; ++i) {
    if (i == inputs_end || eq.text[i] == ',') {
      eq.inputs.push_back(einsum_parse_term(eq, begin, i));
      begin = i + 1;
    }
  }
  if (arrow != std::string::npos) {
    eq.explicit_output = true;
    const size_t comma = eq.text.find(',', arrow);
    if (comma != std::string::npos) einsum_fail("','" + einsum_at(eq, comma) + " in the output");
    eq.output = einsum_parse_term(eq, arrow + 2, eq.text.size());
  }
  return eq;
}

// The operands' labels, one per dim, and the output's labels.
struct EinsumPlan {
  std::vector<std::vector<Label>> labels;
  std::vector<Label> output;
};

std::string einsum_label_name(Label label) {
  if (label >= kEllipsisLabel) return "dim " + std::to_string(label - kEllipsisLabel) + " of '...'";
  return "'" + std::string(1, char(label)) + "'";
}

// Each operand's labels, checked against its rank; `ellipsis_rank` is the widest "...".
std::vector<std::vector<Label>> einsum_operand_labels(const EinsumEquation& eq,
                                                      const std::vector<Tensor>& operands,
                                                      int& ellipsis_rank) {
  ellipsis_rank = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    const EinsumTerm& term = eq.inputs[i];
    const auto named = int(term.before.size() + term.after.size());
    const int rank = operands[i].rank();
    if (rank < named || (!term.ellipsis && rank != named)) {
      einsum_fail("operand " + std::to_string(i) + " has rank " + std::to_string(rank) +
                  " but its subscripts '" + term.text + "' (at position " +
                  std::to_string(term.position) + ") name " + (term.ellipsis ? "at least " : "") +
                  std::to_string(named) + " dims");
    }
    if (term.ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - named);
  }
  std::vector<std::vector<Label>> labels;
  for (size_t i = 0; i < operands.size(); ++i) {
    const EinsumTerm& term = eq.inputs[i];
    std::vector<Label> l = term.before;
    const int own = operands[i].rank() - int(term.before.size() + term.after.size());
    for (int d = ellipsis_rank - own; d < ellipsis_rank; ++d) l.push_back(kEllipsisLabel + d);
    l.insert(l.end(), term.after.begin(), term.after.end());
    labels.push_back(std::move(l));
  }
  return labels;
}

// Checks each label's dims: a letter has one dim everywhere (or unknown); a
// dim of "..." may be 1 where another operand's is larger.
void einsum_check_dims(const std::vector<std::vector<Label>>& labels,
                       const std::vector<Tensor>& operands) {
  std::map<Label, int64_t> dims;
  std::map<Label, size_t> first_operand;
  for (size_t i = 0; i < operands.size(); ++i) {
    for (size_t d = 0; d < labels[i].size(); ++d) {
      const Label label = labels[i][d];
      const int64_t dim = operands[i].shape()[int(d)];
      auto [it, inserted] = dims.try_emplace(label, dim);
      if (inserted) {
        first_operand[label] = i;
        continue;
      }
      const int64_t seen = it->second;
      if (seen == dim || dim == kUnknownDim) continue;
      const bool broadcast = label >= kEllipsisLabel && (seen == 1 || dim == 1);
      if (seen != kUnknownDim && !broadcast) {
        einsum_fail("subscript " + einsum_label_name(label) + " has dim " + std::to_string(seen) +
                    " in operand " + std::to_string(first_operand[label]) + " and " +
                    std::to_string(dim) + " in operand " + std::to_string(i));
      }
      if (seen == kUnknownDim || seen == 1) it->second = dim;
    }
  }
}

std::vector<Label> einsum_output_labels(const EinsumEquation& eq,
                                        const std::vector<std::vector<Label>>& labels,
                                        int ellipsis_rank) {
  std::map<Label, int> count;
  for (const auto& l : labels)
    for (Label label : l) ++count[label];
  std::vector<Label> out;
  if (!eq.explicit_output) {
    for (int d = 0; d < ellipsis_rank; ++d) out.push_back(kEllipsisLabel + d);
    for (const auto& [label, n] : count)
      if (label < kEllipsisLabel && n == 1) out.push_back(label);
    return out;
  }
  const EinsumTerm& term = eq.output;
  std::vector<Label> letters = term.before;
  letters.insert(letters.end(), term.after.begin(), term.after.end());
  for (size_t k = 0; k < letters.size(); ++k) {
    const std::string at = einsum_at(eq, term.label_positions[k]);
    if (!count.count(letters[k]))
      einsum_fail("output subscript '" + std::string(1, char(letters[k])) + "'" + at +
                  " appears in no input");
    if (std::count(letters.begin(), letters.begin() + long(k), letters[k]))
      einsum_fail("output subscript '" + std::string(1, char(letters[k])) + "'" + at +
                  " appears twice in the output");
  }
  out = term.before;
  if (term.ellipsis)
    for (int d = 0; d < ellipsis_rank; ++d) out.push_back(kEllipsisLabel + d);
  out.insert(out.end(), term.after.begin(), term.after.end());
  return out;
}

// An operand during the lowering: its value and one label per dim.
struct Labelled {
  Tensor t;
  std::vector<Label> labels;
};

bool einsum_contains(const std::vector<Label>& labels, Label label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

int64_t einsum_axis_of(const std::vector<Label>& labels, Label label) {
  return int64_t(std::find(labels.begin(), labels.end(), label) - labels.begin());
}

// x's dims reordered to `order` (a permutation of its labels).
Labelled einsum_transpose(const Labelled& x, const std::vector<Label>& order, CallSite site) {
  std::vector<int64_t> perm;
  for (Label label : order) perm.push_back(einsum_axis_of(x.labels, label));
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return {x.t, order};
  return {transpose(x.t, perm, site), order};
}

// x summed over the labels not in `keep`.
Labelled einsum_sum_unkept(const Labelled& x, const std::vector<Label>& keep, CallSite site) {
  std::vector<int64_t> axes;
  std::vector<Label> kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (einsum_contains(keep, x.labels[d]))
      kept.push_back(x.labels[d]);
    else
      axes.push_back(int64_t(d));
  }
  if (axes.empty()) return x;
  return {reduce_sum(x.t, axes, false, site), kept};
}

// x's diagonal along its dims p and q, of one label: those dims moved last,
// flattened into one, and every (n + 1)-th element of it gathered.
Labelled einsum_diagonal(const Labelled& x, size_t p, size_t q, CallSite site) {
  const Label label = x.labels[p];
  const int64_t n = x.t.shape()[int(p)] != kUnknownDim ? x.t.shape()[int(p)] : x.t.shape()[int(q)];
  std::vector<Label> labels;
  std::vector<int64_t> perm, flat;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (d == p || d == q) continue;
    labels.push_back(x.labels[d]);
    perm.push_back(int64_t(d));
    flat.push_back(x.t.shape()[int(d)] == kUnknownDim ? -1 : x.t.shape()[int(d)]);
  }
  if (n == kUnknownDim || std::count(flat.begin(), flat.end(), -1) > 1) {
    throw UnimplementedError("einsum: the diagonal of subscript " + einsum_label_name(label) +
                             " needs its dim, and all but one of the operand's other dims, "
                             "known while tracing");
  }
  perm.push_back(int64_t(p));
  perm.push_back(int64_t(q));
  flat.push_back(n * n);
  std::vector<int64_t> diagonal;
  for (int64_t i = 0; i < n; ++i) diagonal.push_back(i * (n + 1));
  labels.push_back(label);
  const Tensor flattened = reshape(transpose(x.t, perm, site), flat, site);
  return {gather(flattened, constant(diagonal, Shape{n}), int64_t(flat.size()) - 1, site), labels};
}

// The first dim whose label a later dim repeats, and that later dim; none:
// {size, size}.
std::pair<size_t, size_t> einsum_first_repeat(const std::vector<Label>& labels) {
  for (size_t p = 0; p < labels.size(); ++p)
    for (size_t q = p + 1; q < labels.size(); ++q)
      if (labels[q] == labels[p]) return {p, q};
  return {labels.size(), labels.size()};
}

// The diagonal of x along each label it repeats: x[..., i, ..., i, ...] as
// x[..., i, ...] (a label three times takes two diagonals).
Labelled einsum_diagonals(Labelled x, CallSite site) {
  while (true) {
    const auto [p, q] = einsum_first_repeat(x.labels);
    if (p == x.labels.size()) return x;
    x = einsum_diagonal(x, p, q, site);
  }
}

// Dims for reshape: each group of `dims` multiplied, an unknown one as -1 (at most one).
std::vector<int64_t> einsum_reshape_target(const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> target;
  for (const auto& group : groups) {
    int64_t product = 1;
    for (int64_t d : group) product = (d == kUnknownDim || product == -1) ? -1 : product * d;
    target.push_back(product);
  }
  if (std::count(target.begin(), target.end(), -1) > 1) {
    throw UnimplementedError(
        "einsum: contracting these operands needs all but one of their dims known while "
        "tracing");
  }
  return target;
}

std::vector<int64_t> einsum_dims_of(const Labelled& x, const std::vector<Label>& labels) {
  std::vector<int64_t> dims;
  for (Label label : labels) dims.push_back(x.t.shape()[int(einsum_axis_of(x.labels, label))]);
  return dims;
}

// x as [batch..., prod(rows), prod(cols)] (x's labels are batch + rows + cols).
Tensor einsum_as_matrices(const Labelled& x, size_t batch, const std::vector<Label>& rows,
                          const std::vector<Label>& cols, CallSite site) {
  if (rows.size() == 1 && cols.size() == 1) return x.t;
  std::vector<std::vector<int64_t>> groups;
  for (size_t d = 0; d < batch; ++d) groups.push_back({x.t.shape()[int(d)]});
  groups.push_back(einsum_dims_of(x, rows));
  groups.push_back(einsum_dims_of(x, cols));
  return reshape(x.t, einsum_reshape_target(groups), site);
}

// a and b with no label contracted: their product, broadcast.
Labelled einsum_outer(const Labelled& a, const Labelled& b, const std::vector<Label>& batch,
                      const std::vector<Label>& a_free, const std::vector<Label>& b_free,
                      CallSite site) {
  Tensor left = a.t, right = b.t;
  for (size_t i = 0; i < b_free.size(); ++i) left = expand_dims(left, -1, site);
  for (size_t i = 0; i < a_free.size(); ++i)
    right = expand_dims(right, int64_t(batch.size()), site);
  std::vector<Label> labels = batch;
  labels.insert(labels.end(), a_free.begin(), a_free.end());
  labels.insert(labels.end(), b_free.begin(), b_free.end());
  return {mul(left, right, site), labels};
}

// a and b contracted over their shared labels not in `keep`.
Labelled einsum_contract(Labelled a, Labelled b, const std::vector<Label>& keep, CallSite site) {
  std::vector<Label> batch, contracted, a_free, b_free;
  for (Label label : a.labels) {
    if (!einsum_contains(b.labels, label))
      a_free.push_back(label);
    else
      (einsum_contains(keep, label) ? batch : contracted).push_back(label);
  }
  for (Label label : b.labels)
    if (!einsum_contains(a.labels, label)) b_free.push_back(label);
  // A "..." dim of 1 against a larger one, contracted: sum the larger side first.
  for (Label label : contracted) {
    const int64_t da = a.t.shape()[int(einsum_axis_of(a.labels, label))];
    const int64_t db = b.t.shape()[int(einsum_axis_of(b.labels, label))];
    if (da == 1 && db != 1) b.t = reduce_sum(b.t, {einsum_axis_of(b.labels, label)}, true, site);
    if (db == 1 && da != 1) a.t = reduce_sum(a.t, {einsum_axis_of(a.labels, label)}, true, site);
  }
  std::vector<Label> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), a_free.begin(), a_free.end());
  a_order.insert(a_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), b_free.begin(), b_free.end());
  a = einsum_transpose(a, a_order, site);
  b = einsum_transpose(b, b_order, site);
  if (contracted.empty()) return einsum_outer(a, b, batch, a_free, b_free, site);
  const Tensor product =
      matmul(einsum_as_matrices(a, batch.size(), a_free, contracted, site),
             einsum_as_matrices(b, batch.size(), contracted, b_free, site), false, false, site);
  std::vector<Label> labels = batch;
  labels.insert(labels.end(), a_free.begin(), a_free.end());
  labels.insert(labels.end(), b_free.begin(), b_free.end());
  if (a_free.size() == 1 && b_free.size() == 1) return {product, labels};
  std::vector<std::vector<int64_t>> groups;
  for (size_t d = 0; d < batch.size(); ++d) groups.push_back({product.shape()[int(d)]});
  for (int64_t d : einsum_dims_of(a, a_free)) groups.push_back({d});
  for (int64_t d : einsum_dims_of(b, b_free)) groups.push_back({d});
  return {reshape(product, einsum_reshape_target(groups), site), labels};
}

// The labels operands after `from` use, and the output's.
std::vector<Label> einsum_needed_after(const EinsumPlan& plan, size_t from) {
  std::vector<Label> needed = plan.output;
  for (size_t i = from; i < plan.labels.size(); ++i)
    needed.insert(needed.end(), plan.labels[i].begin(), plan.labels[i].end());
  return needed;
}

EinsumPlan einsum_plan(std::string_view equation, const std::vector<Tensor>& operands) {
  const EinsumEquation eq = einsum_parse(equation);
  if (operands.empty()) einsum_fail("needs at least one operand");
  if (eq.inputs.size() != operands.size()) {
    einsum_fail("equation '" + eq.text + "' has " + std::to_string(eq.inputs.size()) +
                " input terms but " + std::to_string(operands.size()) + " operands were given");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].dtype() == DType::bool_ || operands[i].dtype() != operands[0].dtype()) {
      einsum_fail("operands must be numeric and of one dtype, got " +
                  std::string(dtype_name(operands[0].dtype())) + " (operand 0) and " +
                  std::string(dtype_name(operands[i].dtype())) + " (operand " + std::to_string(i) +
                  ")");
    }
  }
  EinsumPlan plan;
  int ellipsis_rank = 0;
  plan.labels = einsum_operand_labels(eq, operands, ellipsis_rank);
  einsum_check_dims(plan.labels, operands);
  plan.output = einsum_output_labels(eq, plan.labels, ellipsis_rank);
  return plan;
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands, CallSite site) {
  const EinsumPlan plan = einsum_plan(equation, operands);
  // Each operand's diagonals, then the labels no other operand nor the output has, summed.
  std::vector<Labelled> prepared;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::vector<Label> needed = plan.output;
    for (size_t j = 0; j < operands.size(); ++j)
      if (j != i) needed.insert(needed.end(), plan.labels[j].begin(), plan.labels[j].end());
    prepared.push_back(
        einsum_sum_unkept(einsum_diagonals({operands[i], plan.labels[i]}, site), needed, site));
  }
  Labelled result = prepared[0];
  for (size_t i = 1; i < prepared.size(); ++i)
    result = einsum_contract(result, prepared[i], einsum_needed_after(plan, i + 1), site);
  return einsum_transpose(result, plan.output, site).t;
}

}  // namespace ag::api
