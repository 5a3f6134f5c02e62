// Sources and transformations of ag::data::Dataset. Each pass owns its
// state (positions, buffers, random engine) in the closure of a FnPass.
#include <atomic>
#include <random>

#include "data/node.h"
#include "trace/trace_state.h"

namespace ag::data::detail {

namespace {
std::atomic<uint64_t> g_next_node_id{1};

class LambdaNode : public Node {
 public:
  LambdaNode(Specs spec, std::function<std::unique_ptr<Pass>()> make, Stage stage)
      : Node(std::move(spec), std::move(stage)), make_(std::move(make)) {}
  std::unique_ptr<Pass> start() const override { return make_(); }

 private:
  std::function<std::unique_ptr<Pass>()> make_;
};

// A shape with `dim` prepended.
Shape with_first_dim(int64_t dim, const Shape& shape) {
  Shape out{dim};
  for (int64_t d : shape.dims()) out.push_back(d);
  return out;
}

// "float32 (2,), int32 ()": a stage's element spec, in its description.
std::string spec_text(const Specs& spec) {
  std::string out;
  for (const TensorSpec& s : spec)
    out += (out.empty() ? "" : ", ") + std::string(dtype_name(s.dtype)) + " " + s.shape.to_string();
  return out;
}

void check_positive(int64_t value, const char* what, const CallSite& site) {
  if (value <= 0)
    throw InvalidArgumentError(where(site) + what + " must be positive, got " +
                               std::to_string(value));
}

}  // namespace

Node::Node(Specs spec, Stage stage)
    : spec(std::move(spec)), id(g_next_node_id++), stage(std::move(stage)) {}

NodePtr make_node(Specs spec, std::function<std::unique_ptr<Pass>()> make, Stage stage) {
  return std::make_shared<LambdaNode>(std::move(spec), std::move(make), std::move(stage));
}

std::string where(const CallSite& site) {
  if (site.line() == 0) return "";
  return std::string(site.file_name()) + ":" + std::to_string(site.line()) + ": ";
}

const Specs& node_spec(const Node& node) {
  return node.spec;
}
uint64_t node_id(const Node& node) {
  return node.id;
}

NodePtr slices_node(Flat components, CallSite site) {
  if (components.empty())
    throw InvalidArgumentError(where(site) + "from_tensor_slices: no tensors to slice");
  Specs spec;
  for (size_t i = 0; i < components.size(); ++i) {
    const Tensor& t = components[i];
    if (!t.defined() || t.is_symbolic())
      throw InvalidArgumentError(
          where(site) + "from_tensor_slices: component " + std::to_string(i) +
          (t.defined() ? " is symbolic; slice eager tensors" : " is undefined"));
    if (t.rank() == 0)
      throw InvalidArgumentError(where(site) + "from_tensor_slices: component " +
                                 std::to_string(i) + " is a scalar; slices need a first axis");
    if (t.shape()[0] != components[0].shape()[0])
      throw InvalidArgumentError(
          where(site) + "from_tensor_slices: the components differ in their first dim: " +
          std::to_string(components[0].shape()[0]) + " (component 0) and " +
          std::to_string(t.shape()[0]) + " (component " + std::to_string(i) + ")");
    Shape row(t.shape().dims().subspan(1));
    spec.push_back(TensorSpec(row, t.dtype()));
  }
  return make_node(
      spec,
      [components] {
        return make_pass([components, i = int64_t{0}]() mutable -> std::optional<Flat> {
          if (i >= components[0].shape()[0]) return std::nullopt;
          Flat out;
          for (const Tensor& c : components) out.push_back(c[i]);
          ++i;
          return out;
        });
      },
      {"from_tensor_slices(" + spec_text(spec) + ")"});
}

NodePtr range_node(int64_t start, int64_t stop, int64_t step, CallSite site) {
  if (step == 0) throw InvalidArgumentError(where(site) + "range: step must not be zero");
  return make_node({TensorSpec(Shape(), DType::int64)},
                   [start, stop, step] {
                     return make_pass([i = start, stop, step]() mutable -> std::optional<Flat> {
                       if (step > 0 ? i >= stop : i <= stop) return std::nullopt;
                       Flat out{Tensor(i)};
                       i += step;
                       return out;
                     });
                   },
                   {"range(" + std::to_string(start) + ", " + std::to_string(stop) + ", " +
                    std::to_string(step) + ")"});
}

NodePtr generator_node(std::function<Generator()> make, Specs signature, CallSite site) {
  return make_node(
      signature,
      [make, signature, site] {
        return make_pass([gen = make(), signature, site,
                          n = int64_t{0}]() mutable -> std::optional<Flat> {
          std::optional<Flat> element = gen();
          if (!element) return std::nullopt;
          auto fail = [&](const std::string& what) {
            throw InvalidArgumentError(where(site) + "from_generator: element " +
                                       std::to_string(n) + " " + what);
          };
          if (element->size() != signature.size())
            fail("has " + std::to_string(element->size()) +
                 " components, but the output signature " + "has " +
                 std::to_string(signature.size()));
          for (size_t i = 0; i < signature.size(); ++i) {
            const Tensor& t = (*element)[i];
            if (!t.defined() || !t.spec().is_compatible_with(signature[i]))
              fail("does not match the output signature: component " + std::to_string(i) + " is " +
                   (t.defined()
                        ? std::string(dtype_name(t.dtype())) + " of shape " + t.shape().to_string()
                        : std::string("undefined")) +
                   ", the signature says " + std::string(dtype_name(signature[i].dtype)) +
                   " of shape " + signature[i].shape.to_string());
          }
          ++n;
          return element;
        });
      },
      {"from_generator", {}, /*saveable=*/false});
}

NodePtr batch_node(NodePtr input, int64_t batch_size, bool drop_remainder, CallSite site) {
  check_positive(batch_size, "batch: batch_size", site);
  Specs spec;
  for (const TensorSpec& s : input->spec)
    spec.push_back(
        TensorSpec(with_first_dim(drop_remainder ? batch_size : kUnknownDim, s.shape), s.dtype));
  return make_node(
      spec,
      [input, batch_size, drop_remainder, site] {
        return make_pass([in = input->start(), batch_size, drop_remainder,
                          site]() mutable -> std::optional<Flat> {
          std::vector<Flat> rows;
          while (int64_t(rows.size()) < batch_size) {
            std::optional<Flat> e = in->next();
            if (!e) break;
            rows.push_back(std::move(*e));
          }
          if (rows.empty() || (drop_remainder && int64_t(rows.size()) < batch_size))
            return std::nullopt;
          Flat out;
          for (size_t c = 0; c < rows[0].size(); ++c) {
            std::vector<Tensor> parts;
            for (const Flat& row : rows) {
              if (row[c].shape() != rows[0][c].shape())
                throw InvalidArgumentError(where(site) + "batch: component " + std::to_string(c) +
                                           " has shape " + rows[0][c].shape().to_string() +
                                           " in one element and " + row[c].shape().to_string() +
                                           " in another of the same batch");
              parts.push_back(row[c]);
            }
            out.push_back(stack(parts, 0));
          }
          return out;
        });
      },
      {"batch(" + std::to_string(batch_size) + (drop_remainder ? ", drop_remainder" : "") + ")",
       {input}});
}

NodePtr shuffle_node(NodePtr input, int64_t buffer_size, uint64_t seed, bool reshuffle,
                     CallSite site) {
  check_positive(buffer_size, "shuffle: buffer_size", site);
  auto iterators = std::make_shared<std::atomic<uint64_t>>(0);
  return make_node(
      input->spec,
      [input, buffer_size, seed, reshuffle, iterators] {
        const ShufflePass pass =
            reshuffle ? draw_shuffle_pass(iterators.get(), *iterators) : ShufflePass{};
        // An iterator's first pass seeds from the seed and its index alone;
        // a repetition adds its epoch.
        std::vector<uint32_t> words{uint32_t(seed), uint32_t(seed >> 32), uint32_t(pass.iterator),
                                    uint32_t(pass.iterator >> 32)};
        if (pass.epoch > 0)
          words.insert(words.end(), {uint32_t(pass.epoch), uint32_t(pass.epoch >> 32)});
        std::seed_seq seq(words.begin(), words.end());
        std::mt19937_64 engine(seq);
        return make_pass([in = input->start(), buffer = std::vector<Flat>(), buffer_size, engine,
                          exhausted = false]() mutable -> std::optional<Flat> {
          // Fill the buffer, then draw one uniformly and refill its slot.
          while (!exhausted && int64_t(buffer.size()) < buffer_size) {
            std::optional<Flat> e = in->next();
            if (!e) {
              exhausted = true;
            } else {
              buffer.push_back(std::move(*e));
            }
          }
          if (buffer.empty()) return std::nullopt;
          size_t index = size_t(engine() % buffer.size());
          Flat out = std::move(buffer[index]);
          buffer[index] = std::move(buffer.back());
          buffer.pop_back();
          return out;
        });
      },
      {"shuffle(" + std::to_string(buffer_size) + ", seed " + std::to_string(seed) +
           (reshuffle ? "" : ", same order each pass") + ")",
       {input}});
}

NodePtr map_node(NodePtr input, FlatFn fn, Specs output) {
  return make_node(std::move(output),
                   [input, fn] {
                     return make_pass([in = input->start(), fn]() -> std::optional<Flat> {
                       std::optional<Flat> e = in->next();
                       if (!e) return std::nullopt;
                       return fn(*e);
                     });
                   },
                   {"map", {input}});
}

NodePtr filter_node(NodePtr input, std::function<bool(const Flat&)> predicate) {
  return make_node(input->spec,
                   [input, predicate] {
                     return make_pass([in = input->start(), predicate]() -> std::optional<Flat> {
                       while (std::optional<Flat> e = in->next())
                         if (predicate(*e)) return e;
                       return std::nullopt;
                     });
                   },
                   {"filter", {input}});
}

NodePtr repeat_node(NodePtr input, int64_t count) {
  return make_node(input->spec,
                   [input, count] {
                     return make_pass([input, count, in = input->start(), done = int64_t{0},
                                       produced = false]() mutable -> std::optional<Flat> {
                       while (count < 0 || done < count) {
                         if (std::optional<Flat> e = in->next()) {
                           produced = true;
                           return e;
                         }
                         ++done;
                         // An empty input would repeat forever without an element.
                         if (!produced || (count >= 0 && done >= count)) return std::nullopt;
                         in = input->start();
                       }
                       return std::nullopt;
                     });
                   },
                   {"repeat(" + std::to_string(count) + ")", {input}});
}

NodePtr take_node(NodePtr input, int64_t count) {
  return make_node(
      input->spec,
      [input, count] {
        return make_pass([in = input->start(), left = count]() mutable -> std::optional<Flat> {
          if (left == 0) return std::nullopt;
          if (left > 0) --left;
          return in->next();
        });
      },
      {"take(" + std::to_string(count) + ")", {input}});
}

NodePtr skip_node(NodePtr input, int64_t count) {
  return make_node(
      input->spec,
      [input, count] {
        return make_pass([in = input->start(), left = count]() mutable -> std::optional<Flat> {
          for (; left > 0; --left)
            if (!in->next()) return std::nullopt;
          return in->next();
        });
      },
      {"skip(" + std::to_string(count) + ")", {input}});
}

NodePtr zip_node(std::vector<NodePtr> inputs) {
  Specs spec;
  for (const NodePtr& n : inputs) spec.insert(spec.end(), n->spec.begin(), n->spec.end());
  return make_node(spec,
                   [inputs] {
                     std::vector<std::shared_ptr<Pass>> ins;
                     for (const NodePtr& n : inputs) ins.push_back(n->start());
                     return make_pass([ins]() -> std::optional<Flat> {
                       Flat out;
                       for (const auto& in : ins) {
                         std::optional<Flat> e = in->next();
                         if (!e) return std::nullopt;
                         out.insert(out.end(), e->begin(), e->end());
                       }
                       return out;
                     });
                   },
                   {"zip", inputs});
}

NodePtr enumerate_node(NodePtr input, int64_t start) {
  Specs spec{TensorSpec(Shape(), DType::int64)};
  spec.insert(spec.end(), input->spec.begin(), input->spec.end());
  return make_node(
      spec,
      [input, start] {
        return make_pass([in = input->start(), i = start]() mutable -> std::optional<Flat> {
          std::optional<Flat> e = in->next();
          if (!e) return std::nullopt;
          Flat out{Tensor(i++)};
          out.insert(out.end(), e->begin(), e->end());
          return out;
        });
      },
      {"enumerate(" + std::to_string(start) + ")", {input}});
}

NodePtr shard_node(NodePtr input, int64_t num_shards, int64_t index, CallSite site) {
  check_positive(num_shards, "shard: num_shards", site);
  if (index < 0 || index >= num_shards)
    throw InvalidArgumentError(where(site) + "shard: index " + std::to_string(index) +
                               " is not in [0, " + std::to_string(num_shards) + ")");
  return make_node(
      input->spec,
      [input, num_shards, index] {
        return make_pass([in = input->start(), num_shards, index,
                          first = true]() mutable -> std::optional<Flat> {
          for (int64_t skip = first ? index : num_shards - 1; skip > 0; --skip)
            if (!in->next()) return std::nullopt;
          first = false;
          return in->next();
        });
      },
      {"shard(" + std::to_string(num_shards) + ", " + std::to_string(index) + ")", {input}});
}

FlatFn trace_flat(std::function<Flat(const Flat&)> fn, const Specs& input, Specs& output,
                  const std::string& name) {
  auto result_spec = std::make_shared<Specs>();
  auto body = [fn, result_spec](std::vector<Tensor> in) -> std::vector<Tensor> {
    Flat out = fn(in);
    result_spec->clear();
    for (const Tensor& t : out) result_spec->push_back(t.spec());
    return out;
  };
  auto traced = ag::function(body, FunctionOptions{.name = name});
  // What traced.get_concrete_function(specs) does, with the specs read once.
  Specs specs = input;
  ag::detail::Tracer<std::vector<Tensor>, decltype(body), Specs&> tracer{
      &body, &traced.core()->options().arg_names, {specs}};
  ConcreteFunction<std::vector<Tensor>> concrete(traced.core()->concrete_for(
      ag::detail::collect_atoms(specs), {&tracer, &decltype(tracer)::run}));
  output = *result_spec;
  return [traced, concrete](const Flat& in) { return concrete(in); };
}

}  // namespace ag::data::detail
