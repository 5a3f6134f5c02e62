// Input pipelines, as tf.data: a Dataset is a description of a sequence of
// elements (each a tensor or a tuple of tensors) built from sources and
// transformations. Iterating it runs the pipeline on the host, eagerly:
//
//   auto ds = ag::data::from_tensor_slices(std::tuple{features, labels})
//                 .shuffle(100, /*seed=*/7).batch(32);
//   for (auto [x, y] : ds) { ... }
//
// In a function marked AG_FUNCTION, agc stages such a loop (docs/datasets.md):
// the traced graph holds one While whose body pulls the next element through a
// host op, so the graph does not grow with the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ag/control_flow.h"
#include "ag/function.h"
#include "ag/tensor.h"

namespace ag::data {

template <class E>
class Dataset;

namespace detail {

using Flat = std::vector<Tensor>;
using Specs = std::vector<TensorSpec>;

// One stage of a pipeline. Immutable once built; shared by the datasets
// built on it. Defined in runtime/data/.
struct Node;
using NodePtr = std::shared_ptr<const Node>;

const Specs& node_spec(const Node& node);
uint64_t node_id(const Node& node);

// A dataset's handle: an int64 scalar naming its pipeline, which is how a
// traced function receives a Dataset argument (a graph input, as TensorFlow's
// variant tensor). The graph's host ops find the pipeline of each call by it.
Tensor dataset_handle(const NodePtr& node);
// The pipeline a handle names (it must be alive: the caller's Dataset holds it).
NodePtr node_of_handle(int64_t handle);
// A dataset's trace type: its element type and element_spec, as tf.function
// traces a tf.data.Dataset by its element_spec.
std::string trace_key(const Node& node, const std::type_info& element_type);
// A transformation of datasets, as a function of their pipelines.
using Derive = std::function<NodePtr(const std::vector<NodePtr>&)>;
// The handle of `derive` applied to the pipelines of `inputs` (some of them
// symbolic: arguments of the function being traced): a host op that applies
// the transformation to each call's pipelines when the graph runs.
Tensor derived_handle(const std::vector<Tensor>& inputs, Derive derive);
// The error of iterating, with a C++ loop while tracing, a dataset that is an
// argument of the traced function.
[[noreturn]] void throw_unstaged_iteration();

// A pass over a pipeline: the state of each stage (buffers, counters,
// threads). Pulls run eagerly, also while a function is being traced.
class FlatIterator {
 public:
  explicit FlatIterator(const NodePtr& node);
  ~FlatIterator();
  FlatIterator(FlatIterator&&) noexcept;
  FlatIterator& operator=(FlatIterator&&) noexcept;
  std::optional<Flat> next();

  // The pass's position, for a checkpoint: how many elements it has given
  // and the orders its shuffles drew. A FailedPreconditionError names a
  // stage whose state cannot be saved (from_generator, prefetch).
  std::vector<int64_t> position() const;
  // A new pass over `node` at `position`: it replays the pipeline up to
  // there. Returns the pass and the last element given (nullopt at the start
  // or the end). An InvalidArgumentError if the pipeline ends before.
  static std::pair<FlatIterator, std::optional<Flat>> at_position(
      const NodePtr& node, const std::vector<int64_t>& position);

 private:
  // A pass that replays the shuffle orders of `position`.
  FlatIterator(std::nullptr_t, const NodePtr& node, const std::vector<int64_t>& position);
  struct State;
  std::unique_ptr<State> state_;
};

// The stages of a pipeline, as a checkpoint records them to check that it
// restores into the same pipeline: "range(0, 10, 1) -> shuffle(4, seed 7) -> batch(3)".
std::string pipeline_of(const NodePtr& node);

// How ag::train::Checkpoint reads and sets a Dataset iterator's pass
// (Dataset<E>::iterator::checkpoint_access).
struct IteratorAccess {
  std::function<const FlatIterator*()> pass;  // null for an end iterator
  std::function<NodePtr()> node;
  std::function<void(FlatIterator, std::optional<Flat>)> reset;
};

using FlatFn = std::function<Flat(const Flat&)>;
using Generator = std::function<std::optional<Flat>()>;

NodePtr slices_node(Flat components, CallSite site);
NodePtr range_node(int64_t start, int64_t stop, int64_t step, CallSite site);
// `make` returns a fresh generator for each pass.
NodePtr generator_node(std::function<Generator()> make, Specs signature, CallSite site);
NodePtr batch_node(NodePtr input, int64_t batch_size, bool drop_remainder, CallSite site);
NodePtr shuffle_node(NodePtr input, int64_t buffer_size, uint64_t seed, bool reshuffle,
                     CallSite site);
// `fn` runs a trace of the user's function; `output` is the trace's result spec.
NodePtr map_node(NodePtr input, FlatFn fn, Specs output);
NodePtr filter_node(NodePtr input, std::function<bool(const Flat&)> predicate);
NodePtr repeat_node(NodePtr input, int64_t count);
NodePtr take_node(NodePtr input, int64_t count);
NodePtr skip_node(NodePtr input, int64_t count);
NodePtr zip_node(std::vector<NodePtr> inputs);
NodePtr enumerate_node(NodePtr input, int64_t start);
NodePtr shard_node(NodePtr input, int64_t num_shards, int64_t index, CallSite site);
NodePtr prefetch_node(NodePtr input, int64_t buffer_size, CallSite site);

// Traces `fn` (flat tensors in, flat tensors out) once for `input` and
// returns a callable that runs the trace; `output` receives its result spec.
FlatFn trace_flat(std::function<Flat(const Flat&)> fn, const Specs& input, Specs& output,
                  const std::string& name);

// How an element type maps to flat tensors: ag::Tensor, std::tuple and
// std::pair of element types, or std::vector<ag::Tensor> (a whole element).
template <class E>
struct Structure;
template <>
struct Structure<Tensor> {
  static void flatten(const Tensor& t, Flat& out) { out.push_back(t); }
  static Tensor unflatten(const Flat& flat, size_t& pos) { return flat[pos++]; }
};
template <>
struct Structure<std::vector<Tensor>> {
  static void flatten(const std::vector<Tensor>& v, Flat& out) {
    out.insert(out.end(), v.begin(), v.end());
  }
  static std::vector<Tensor> unflatten(const Flat& flat, size_t& pos) {
    std::vector<Tensor> v(flat.begin() + std::ptrdiff_t(pos), flat.end());
    pos = flat.size();
    return v;
  }
};
template <class... Es>
struct Structure<std::tuple<Es...>> {
  static void flatten(const std::tuple<Es...>& t, Flat& out) {
    std::apply([&](const auto&... e) { (Structure<Es>::flatten(e, out), ...); }, t);
  }
  static std::tuple<Es...> unflatten(const Flat& flat, size_t& pos) {
    // Braced initialisation evaluates left to right.
    return std::tuple<Es...>{Structure<Es>::unflatten(flat, pos)...};
  }
};
template <class A, class B>
struct Structure<std::pair<A, B>> {
  static void flatten(const std::pair<A, B>& p, Flat& out) {
    Structure<A>::flatten(p.first, out);
    Structure<B>::flatten(p.second, out);
  }
  static std::pair<A, B> unflatten(const Flat& flat, size_t& pos) {
    A a = Structure<A>::unflatten(flat, pos);
    return {std::move(a), Structure<B>::unflatten(flat, pos)};
  }
};

template <class E>
Flat flatten(const E& e) {
  Flat out;
  Structure<E>::flatten(e, out);
  return out;
}
template <class E>
E unflatten(const Flat& flat) {
  size_t pos = 0;
  return Structure<E>::unflatten(flat, pos);
}

template <class T>
struct IsTupleOrPair : std::false_type {};
template <class... Ts>
struct IsTupleOrPair<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct IsTupleOrPair<std::pair<A, B>> : std::true_type {};

// Calls `fn` with an element, a tuple's components as separate arguments (as
// tf.data's map does).
template <class F, class E>
decltype(auto) call_with(F& fn, const E& e) {
  if constexpr (IsTupleOrPair<E>::value) {
    return std::apply(fn, e);
  } else {
    return fn(e);
  }
}

template <class T>
struct GeneratorElement;
template <class E>
struct GeneratorElement<std::optional<E>> {
  using type = E;
};

// Stages a loop over `node`: one While whose body pulls the next element
// (ag::for_stmt over a Dataset, while tracing).
void stage_dataset_loop(const NodePtr& node, const Tensor& handle,
                        ag::detail::FnRef<Tensor()> extra_test, bool has_extra_test,
                        ag::detail::FnRef<void(const Flat&)> body, ag::detail::CollectLeaves leaves,
                        CallSite site);

}  // namespace detail

// A sequence of elements of type E: ag::Tensor, a tuple (or pair) of element
// types, or std::vector<ag::Tensor>. Copies share the pipeline; each pass
// (each begin()) starts it anew.
template <class E>
class Dataset {
 public:
  using element_type = E;

  explicit Dataset(detail::NodePtr node) : Dataset(node, detail::dataset_handle(node)) {}
  // A dataset whose handle is computed in a graph (a transformation of an
  // argument of a traced function).
  Dataset(detail::NodePtr node, Tensor handle)
      : node_(std::move(node)),
        handle_(std::move(handle)),
        trace_key_(detail::trace_key(*node_, typeid(E))) {}

  // The spec of each component of an element, flattened in order; an
  // unknown dim (a partial last batch, a generator's None) is kUnknownDim.
  const std::vector<TensorSpec>& element_spec() const { return detail::node_spec(*node_); }

  // Consecutive elements stacked along a new first axis; the last batch is
  // smaller unless drop_remainder.
  Dataset batch(int64_t batch_size, bool drop_remainder = false,
                CallSite site = CallSite::current()) const {
    return derive<E>([=](const auto& in) {
      return detail::batch_node(in[0], batch_size, drop_remainder, site);
    });
  }
  // tf.data's shuffle: a buffer of buffer_size elements, each output drawn
  // uniformly from it and replaced by the next input. The same seed gives
  // the same order; each iterator, and each of its repetitions, draws a new
  // order unless told otherwise, from its own state only (docs/datasets.md).
  Dataset shuffle(int64_t buffer_size, uint64_t seed, bool reshuffle_each_iteration = true,
                  CallSite site = CallSite::current()) const {
    return derive<E>([=](const auto& in) {
      return detail::shuffle_node(in[0], buffer_size, seed, reshuffle_each_iteration, site);
    });
  }
  // `fn` takes an element (a tuple's components as separate ag::Tensor
  // arguments) and returns an element; it is traced once, here, and its
  // graph runs for each element.
  template <class F>
  auto map(F fn, CallSite site = CallSite::current()) const {
    using R = std::remove_cvref_t<decltype(detail::call_with(fn, std::declval<const E&>()))>;
    auto flat_fn = [fn](const detail::Flat& in) mutable {
      return detail::flatten<R>(detail::call_with(fn, detail::unflatten<E>(in)));
    };
    detail::Specs output;
    detail::FlatFn traced = detail::trace_flat(
        flat_fn, element_spec(), output, std::string("map at line ") + std::to_string(site.line()));
    return derive<R>(
        [traced, output](const auto& in) { return detail::map_node(in[0], traced, output); });
  }
  // Keeps the elements for which `predicate` (a scalar bool ag::Tensor, or a
  // C++ bool) holds; a tensor predicate is traced once, as map's function.
  template <class F>
  Dataset filter(F predicate, CallSite site = CallSite::current()) const {
    using R = std::remove_cvref_t<decltype(detail::call_with(predicate, std::declval<const E&>()))>;
    if constexpr (std::is_same_v<R, bool>) {
      return derive<E>([predicate](const auto& in) {
        return detail::filter_node(in[0], [predicate](const detail::Flat& e) mutable {
          return detail::call_with(predicate, detail::unflatten<E>(e));
        });
      });
    } else {
      static_assert(std::is_same_v<R, Tensor>,
                    "filter: the predicate must return ag::Tensor or bool");
      auto flat_fn = [predicate](const detail::Flat& in) mutable {
        return detail::Flat{detail::call_with(predicate, detail::unflatten<E>(in))};
      };
      detail::Specs output;
      detail::FlatFn traced =
          detail::trace_flat(flat_fn, element_spec(), output,
                             std::string("filter at line ") + std::to_string(site.line()));
      if (output.size() != 1 || output[0].dtype != DType::bool_ || output[0].shape.rank() != 0)
        throw TypeError(std::string(site.file_name()) + ":" + std::to_string(site.line()) +
                        ": filter: the predicate must return a scalar bool tensor, not " +
                        (output.empty() ? std::string("nothing") : output[0].to_string()));
      return derive<E>([traced](const auto& in) {
        return detail::filter_node(
            in[0], [traced](const detail::Flat& e) { return traced(e)[0].template item<bool>(); });
      });
    }
  }
  // The elements `count` times over; forever when count < 0.
  Dataset repeat(int64_t count = -1) const {
    return derive<E>([=](const auto& in) { return detail::repeat_node(in[0], count); });
  }
  // The first `count` elements (all when count < 0).
  Dataset take(int64_t count) const {
    return derive<E>([=](const auto& in) { return detail::take_node(in[0], count); });
  }
  // All but the first `count` elements.
  Dataset skip(int64_t count) const {
    return derive<E>([=](const auto& in) { return detail::skip_node(in[0], count); });
  }
  // Every num_shards-th element, starting at `index`.
  Dataset shard(int64_t num_shards, int64_t index, CallSite site = CallSite::current()) const {
    return derive<E>(
        [=](const auto& in) { return detail::shard_node(in[0], num_shards, index, site); });
  }
  // Runs the pipeline up to here on a background thread, buffer_size
  // elements ahead of the consumer.
  Dataset prefetch(int64_t buffer_size, CallSite site = CallSite::current()) const {
    return derive<E>(
        [=](const auto& in) { return detail::prefetch_node(in[0], buffer_size, site); });
  }
  // (index, element) pairs; the index is an int64 scalar.
  Dataset<std::tuple<Tensor, E>> enumerate(int64_t start = 0) const {
    return derive<std::tuple<Tensor, E>>(
        [=](const auto& in) { return detail::enumerate_node(in[0], start); });
  }

  // A pass over the elements, for a C++ range-for.
  class iterator {
   public:
    using value_type = E;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(const detail::NodePtr& node)
        : node_(node), pass_(std::make_shared<detail::FlatIterator>(node)) {
      advance();
    }
    E& operator*() { return *current_; }
    E* operator->() { return &*current_; }
    iterator& operator++() {
      advance();
      return *this;
    }
    bool operator==(const iterator& other) const {
      return !current_.has_value() && !other.current_.has_value();
    }

    // What ag::train::Checkpoint saves and restores of the iterator: the
    // position of its pass (the current element counts as given).
    detail::IteratorAccess checkpoint_access() {
      return {[this]() -> const detail::FlatIterator* { return pass_.get(); },
              [this]() { return node_; },
              [this](detail::FlatIterator pass, std::optional<detail::Flat> current) {
                pass_ = std::make_shared<detail::FlatIterator>(std::move(pass));
                if (current) {
                  current_ = detail::unflatten<E>(*current);
                } else {
                  current_.reset();
                }
              }};
    }

   private:
    void advance() {
      std::optional<detail::Flat> flat = pass_->next();
      if (flat) {
        current_ = detail::unflatten<E>(*flat);
      } else {
        current_.reset();
      }
    }
    detail::NodePtr node_;
    std::shared_ptr<detail::FlatIterator> pass_;
    std::optional<E> current_;
  };
  iterator begin() const {
    if (handle_.is_symbolic()) detail::throw_unstaged_iteration();
    return iterator(node_);
  }
  iterator end() const { return iterator(); }

  // The pipeline: the dataset's own, or while tracing, the first call's.
  const detail::NodePtr& node() const { return node_; }
  // The pipeline's handle: a placeholder of the graph for a Dataset argument
  // of the function being traced.
  const Tensor& handle() const { return handle_; }
  // A traced function takes a Dataset as a graph input (its handle) and is
  // traced by its element type and element_spec: a second dataset of the same
  // spec reuses the trace, and each call's graph pulls from the call's dataset.
  friend auto ag_fields(Dataset& ds) { return std::tie(ds.handle_, ds.trace_key_); }

 private:
  // This dataset's transformation `make`, applied to this pipeline; in a
  // graph, to each call's pipeline.
  template <class R, class Make>
  Dataset<R> derive(Make make) const {
    detail::NodePtr node = make(std::vector<detail::NodePtr>{node_});
    if (!handle_.is_symbolic()) return Dataset<R>(std::move(node));
    return Dataset<R>(std::move(node), detail::derived_handle({handle_}, detail::Derive(make)));
  }

  detail::NodePtr node_;
  Tensor handle_;
  std::string trace_key_;
};

// Functions live in ag::data::api, as ag's live in ag::api (include/ag/tensor.h):
// argument-dependent lookup on a Dataset then never finds them, so a user's
// own `zip(a, b)` stays unambiguous.
namespace api {

// ---- Sources -------------------------------------------------------------------

// The slices of `t` along its first axis.
inline Dataset<Tensor> from_tensor_slices(const Tensor& t, CallSite site = CallSite::current()) {
  return Dataset<Tensor>(detail::slices_node({t}, site));
}
// Tuples of slices of the tensors, which must agree in their first dim.
template <class... Ts>
  requires(std::is_same_v<Ts, Tensor> && ...)
Dataset<std::tuple<Ts...>> from_tensor_slices(const std::tuple<Ts...>& ts,
                                              CallSite site = CallSite::current()) {
  return Dataset<std::tuple<Ts...>>(detail::slices_node(detail::flatten(ts), site));
}
inline Dataset<std::vector<Tensor>> from_tensor_slices(const std::vector<Tensor>& ts,
                                                       CallSite site = CallSite::current()) {
  return Dataset<std::vector<Tensor>>(detail::slices_node(ts, site));
}

// int64 scalars start, start + step, ... up to (excluding) stop.
inline Dataset<Tensor> range(int64_t start, int64_t stop, int64_t step = 1,
                             CallSite site = CallSite::current()) {
  return Dataset<Tensor>(detail::range_node(start, stop, step, site));
}
inline Dataset<Tensor> range(int64_t stop, CallSite site = CallSite::current()) {
  return range(0, stop, 1, site);
}

// Elements from a C++ callable, as tf.data's from_generator: `gen` returns
// std::optional<E> (nullopt ends the pass) and runs on the host; each pass
// calls a fresh copy of it. `output_signature` gives each component's dtype
// and shape (kUnknownDim for a dim that varies); an element that does not
// fit it is an error naming the line of this call.
template <class G>
auto from_generator(G gen, std::vector<TensorSpec> output_signature,
                    CallSite site = CallSite::current()) {
  using E = typename detail::GeneratorElement<std::remove_cvref_t<std::invoke_result_t<G&>>>::type;
  auto make = [gen]() -> detail::Generator {
    return [g = gen]() mutable -> std::optional<detail::Flat> {
      std::optional<E> e = g();
      if (!e) return std::nullopt;
      return detail::flatten(*e);
    };
  };
  return Dataset<E>(detail::generator_node(make, std::move(output_signature), site));
}

// Tuples of the datasets' elements, until the shortest ends.
template <class... Es>
Dataset<std::tuple<Es...>> zip(const Dataset<Es>&... datasets) {
  auto make = [](const std::vector<detail::NodePtr>& in) { return detail::zip_node(in); };
  detail::NodePtr node = make({datasets.node()...});
  if (!(datasets.handle().is_symbolic() || ...)) return Dataset<std::tuple<Es...>>(std::move(node));
  return Dataset<std::tuple<Es...>>(std::move(node),
                                    detail::derived_handle({datasets.handle()...}, make));
}

}  // namespace api

// ---- Files ----------------------------------------------------------------------

struct CsvOptions {
  bool header = true;  // the first line names the columns and is skipped
  char delimiter = ',';
};
// The rows of a CSV file, as tf.data's CsvDataset: one scalar per column of
// the given dtype, any dtype: a number parsed whole and range-checked, a
// bool from true/false/1/0, a string column the field's bytes as they are.
// Fields may be quoted ("a, b", "say ""hi"""), also across lines. A field
// that does not parse or does not fit its dtype, or a row with the wrong
// number of fields, is an InvalidArgumentError naming file:line and the
// field; a missing file is a NotFoundError naming this call's line.
namespace api {
Dataset<std::vector<Tensor>> CsvDataset(const std::string& path, std::vector<DType> column_types,
                                        CsvOptions options = {},
                                        CallSite site = CallSite::current());

}  // namespace api

// Writes records as TFRecord files frame them: each a little-endian uint64
// length, the masked CRC-32C of the length, the bytes and their masked
// CRC-32C. write(tensors) stores one element (dtype, shape and values of each
// tensor) for RecordDataset. Closes the file on destruction.
class RecordWriter {
 public:
  explicit RecordWriter(const std::string& path, CallSite site = CallSite::current());
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;
  void write_bytes(const std::string& bytes);
  void write(const std::vector<Tensor>& element);
  void close();

 private:
  struct File;
  std::unique_ptr<File> file_;
};

namespace api {
// The elements a RecordWriter wrote, checked against `element_spec`. A
// damaged file (a checksum that does not match, a record cut short) is a
// DataLossError naming the file and the record's byte offset.
Dataset<std::vector<Tensor>> RecordDataset(const std::string& path,
                                           std::vector<TensorSpec> element_spec,
                                           CallSite site = CallSite::current());
}  // namespace api

using namespace api;

}  // namespace ag::data

namespace ag::api {

// `for (auto x : dataset)` as agc emits it: eager, an ordinary pass; while
// tracing, one staged While that pulls each element through a host op
// (docs/codegen-contract.md). `body` takes the element.
template <class E, class ExtraTest, class Body, class... Ts>
void for_stmt(const data::Dataset<E>& dataset, ExtraTest&& extra_test, Body&& body, State<Ts...> st,
              CallSite site = CallSite::current()) {
  constexpr bool kHasExtraTest = !std::is_same_v<std::remove_cvref_t<ExtraTest>, NoExtraTest>;
  auto extra = [&]() -> Tensor {
    if constexpr (kHasExtraTest) {
      return detail::to_tensor(extra_test());
    } else {
      return Tensor(true);
    }
  };
  if (!detail::is_tracing()) {
    for (auto& element : dataset) {
      if constexpr (kHasExtraTest) {
        if (!detail::eager_truth(extra(), "for")) break;
      }
      body(element);
    }
    return;
  }
  auto flat_body = [&](const data::detail::Flat& flat) { body(data::detail::unflatten<E>(flat)); };
  auto collect = [&] { return detail::leaves_of(st); };
  data::detail::stage_dataset_loop(dataset.node(), dataset.handle(), extra, kHasExtraTest,
                                   flat_body, collect, site);
}

}  // namespace ag::api
