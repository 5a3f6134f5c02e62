// ag::train::Checkpoint (ag/checkpoint.h). The file:
//   "AGCKPT01", the payload's size (u64), its FNV-1a 64 checksum (u64), then
//   the payload: the entry count (u64) and per entry its path (u32 length,
//   bytes), dtype name (u8 length, bytes), rank (u32), dims (i64 each), and
//   its elements' bytes (u64 length, bytes); little-endian, as this machine.
#include "ag/checkpoint.h"

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include "ag/error.h"
#include "ag/function.h"
#include "ag/layers.h"
#include "core/tensor_impl.h"
#include "train/layer_paths.h"

namespace ag::train {
namespace {

using data::detail::FlatIterator;

constexpr char kMagic[8] = {'A', 'G', 'C', 'K', 'P', 'T', '0', '1'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 2 * sizeof(uint64_t);
const char* const kSaveCounter = "save_counter";

struct Entry {
  DType dtype;
  Shape shape;
  std::string bytes;
};
using Entries = std::map<std::string, Entry>;

uint64_t fnv1a(const std::string& data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// ---- Writing ----------------------------------------------------------------------------

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

void put_entry(std::string& out, const std::string& path, const Tensor& value) {
  if (value.dtype() == DType::string) {
    throw UnimplementedError("checkpoint entry '" + path +
                             "' is a string tensor, which checkpoints do not store; keep strings "
                             "out of saved state (or save them as numbers)");
  }
  put(out, uint32_t(path.size()));
  out += path;
  const std::string_view dtype = dtype_name(value.dtype());
  put(out, uint8_t(dtype.size()));
  out += dtype;
  put(out, uint32_t(value.rank()));
  for (int64_t d : value.shape()) put(out, d);
  const size_t bytes = size_t(value.num_elements()) * dtype_size(value.dtype());
  put(out, uint64_t(bytes));
  out.append(static_cast<const char*>(value.raw_data()), bytes);
}

std::string file_bytes(const std::map<std::string, Tensor>& values) {
  std::string payload;
  put(payload, uint64_t(values.size()));
  for (const auto& [path, value] : values) put_entry(payload, path, value);
  std::string file(kMagic, sizeof(kMagic));
  put(file, uint64_t(payload.size()));
  put(file, fnv1a(payload));
  return file + payload;
}

// Into a new file beside `path`, then renamed over it: a reader never sees
// half a checkpoint, and a failed save leaves the previous one.
void write_file(const std::string& path, const std::string& bytes) {
  const std::string partial = path + ".partial-" + std::to_string(::getpid());
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::filesystem::remove(partial);
      throw FailedPreconditionError("checkpoint: cannot write '" + path + "': " + why +
                                    " (does its folder exist, and is it writable?)");
    }
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) {
    std::filesystem::remove(partial);
    throw FailedPreconditionError("checkpoint: cannot write '" + path + "': " + error.message());
  }
}

// ---- Reading ----------------------------------------------------------------------------

class Reader {
 public:
  Reader(const std::string& path, const std::string& data) : path_(path), data_(data) {}

  template <class T>
  T get() {
    T value;
    const std::string_view bytes = take(sizeof(T));
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(&value));
    return value;
  }
  std::string_view take(size_t n) {
    if (data_.size() - pos_ < n) damaged("it ends in the middle of an entry");
    std::string_view bytes(data_.data() + pos_, n);
    pos_ += n;
    return bytes;
  }
  bool at_end() const { return pos_ == data_.size(); }

  [[noreturn]] void damaged(const std::string& why) const {
    throw DataLossError("checkpoint '" + path_ + "' is damaged: " + why +
                        "; it cannot be restored (write a new one, or restore an earlier one)");
  }

 private:
  const std::string& path_;
  const std::string& data_;
  size_t pos_ = 0;
};

std::optional<DType> dtype_named(std::string_view name) {
  for (DType d : kAllDTypes) {
    if (dtype_name(d) == name) return d;
  }
  return std::nullopt;
}

Entry read_entry(Reader& r, const std::string& path) {
  Entry e;
  const std::string_view dtype = r.take(r.get<uint8_t>());
  const std::optional<DType> d = dtype_named(dtype);
  if (!d) r.damaged("entry '" + path + "' has the unknown dtype '" + std::string(dtype) + "'");
  e.dtype = *d;
  const uint32_t rank = r.get<uint32_t>();
  if (rank > uint32_t(Shape::kMaxRank))
    r.damaged("entry '" + path + "' has rank " + std::to_string(rank));
  std::vector<int64_t> dims;
  for (uint32_t i = 0; i < rank; ++i) dims.push_back(r.get<int64_t>());
  e.shape = Shape(std::span<const int64_t>(dims));
  const uint64_t bytes = r.get<uint64_t>();
  if (!e.shape.is_fully_defined() ||
      bytes != uint64_t(e.shape.num_elements()) * dtype_size(e.dtype))
    r.damaged("entry '" + path + "' has " + std::to_string(bytes) + " bytes for its shape " +
              e.shape.to_string());
  e.bytes = std::string(r.take(bytes));
  return e;
}

Entries read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw NotFoundError("checkpoint: no file at '" + path + "' (" + std::strerror(errno) +
                        "); save() returns the path of each checkpoint it writes");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string file = buffer.str();
  Reader header(path, file);
  if (file.size() < kHeaderBytes || std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0)
    header.damaged("it is not an autograph-cpp checkpoint (it does not start with AGCKPT01)");
  header.take(sizeof(kMagic));
  const uint64_t size = header.get<uint64_t>(), checksum = header.get<uint64_t>();
  const std::string payload = file.substr(kHeaderBytes);
  if (payload.size() != size)
    header.damaged("it has " + std::to_string(payload.size()) + " bytes of values where " +
                   std::to_string(size) + " were written (truncated?)");
  if (fnv1a(payload) != checksum)
    header.damaged("its checksum does not match its contents (changed after it was written)");
  Reader r(path, payload);
  Entries entries;
  for (uint64_t n = r.get<uint64_t>(); n > 0; --n) {
    std::string name(r.take(r.get<uint32_t>()));
    entries[name] = read_entry(r, name);
  }
  if (!r.at_end()) r.damaged("bytes follow its last entry");
  return entries;
}

// ---- What is tracked, by path -------------------------------------------------------------

// The last component of a slot variable's name "<optimizer>/<variable>/<slot>".
std::string slot_name(const Variable& slot) {
  const std::string& name = slot.name();
  return name.substr(name.rfind('/') + 1);
}

std::string describe(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + " " + shape.to_string();
}

Tensor tensor_of(const Entry& e) {
  Tensor t = detail::make_eager(e.dtype, e.shape);
  std::memcpy(t.raw_mutable_data(), e.bytes.data(), e.bytes.size());
  return t;
}

void check_not_tracing(const char* what) {
  if (detail::is_tracing()) {
    throw FailedPreconditionError(std::string("Checkpoint.") + what +
                                  " inside a traced function: checkpoints are written and read "
                                  "eagerly; call it outside the ag::function");
  }
}

}  // namespace

void Checkpoint::add(Tracked tracked) {
  const std::string& key = tracked.key;
  if (key.empty() || key.find('/') != std::string::npos || key == kSaveCounter) {
    throw InvalidArgumentError("Checkpoint.track: the key '" + key +
                               "' cannot name a tracked object: give a key that is not empty, "
                               "has no '/' and is not 'save_counter'");
  }
  for (const Tracked& t : tracked_) {
    if (t.key == key)
      throw InvalidArgumentError("Checkpoint.track: the key '" + key + "' is tracked already");
  }
  tracked_.push_back(std::move(tracked));
}

Checkpoint& Checkpoint::track(const std::string& key, const Variable& variable) {
  add({key, {{key, variable}}, nullptr});
  return *this;
}

Checkpoint& Checkpoint::track(const std::string& key, const std::vector<Variable>& variables) {
  Tracked t{key, {}, nullptr};
  std::set<std::string> names;
  for (size_t i = 0; i < variables.size(); ++i) {
    const std::string& name = variables[i].name();
    if (!names.insert(name).second) {
      throw InvalidArgumentError("Checkpoint.track('" + key + "'): variable " + std::to_string(i) +
                                 " is named '" + name +
                                 "' as an earlier one is; a checkpoint saves variables by name, "
                                 "so give each a distinct one (ag::Variable(value, \"name\"))");
    }
    t.variables.emplace_back(key + "/" + name, variables[i]);
  }
  add(std::move(t));
  return *this;
}

Checkpoint& Checkpoint::track(const std::string& key, optimizers::Optimizer& optimizer) {
  add({key, {{key + "/iterations", optimizer.iterations()}}, &optimizer});
  return *this;
}

namespace internal {

void add_layer_variables(const layers::Layer& layer, const std::string& prefix,
                         std::vector<std::pair<std::string, Variable>>& out) {
  auto under = [&](const std::string& name) { return prefix.empty() ? name : prefix + "/" + name; };
  if (const auto* sequential = dynamic_cast<const layers::Sequential*>(&layer)) {
    int64_t k = 0;
    for (const auto& child : sequential->layers()) {
      if (child->named_variables().empty()) continue;
      add_layer_variables(*child, under("layer_with_weights-" + std::to_string(k++)), out);
    }
    return;
  }
  for (const auto& [path, v] : layer.named_variables()) {
    const size_t slash = path.find('/');
    out.emplace_back(under(slash == std::string::npos ? path : path.substr(slash + 1)), v);
  }
}

}  // namespace internal

Checkpoint& Checkpoint::track_iterator(const std::string& key,
                                       data::detail::IteratorAccess access) {
  if (!access.node())
    throw InvalidArgumentError("Checkpoint.track('" + key +
                               "'): the iterator is an end() iterator, over no dataset; track "
                               "one that dataset.begin() returned");
  add({key, {}, nullptr, std::move(access)});
  return *this;
}

Checkpoint& Checkpoint::track(const std::string& key, const layers::Layer& layer) {
  if (!layer.built())
    throw FailedPreconditionError("Checkpoint.track('" + key + "'): layer '" + layer.name() +
                                  "' has no variables yet: a layer makes them on its first "
                                  "call; call it once (or build(input_shape)) before tracking it");
  Tracked t{key, {}, nullptr};
  internal::add_layer_variables(layer, key, t.variables);
  add(std::move(t));
  return *this;
}

namespace {

// The checkpoint's values by path: tracked variables, optimizer state.
struct Layout {
  std::vector<std::pair<std::string, Variable>> variables;  // model variables and counters
  std::vector<std::pair<std::string, optimizers::Optimizer*>> rates;
  // Per optimizer and tracked (non-optimizer) variable: its slots' path prefix.
  struct Slots {
    std::string prefix;
    optimizers::Optimizer* optimizer;
    Variable variable;
  };
  std::vector<Slots> slots;
};

}  // namespace

std::string Checkpoint::save(const std::string& prefix) {
  check_not_tracing("save");
  const std::string path = prefix + "-" + std::to_string(save_counter_ + 1);
  ++save_counter_;
  try {
    write(path);
  } catch (...) {
    --save_counter_;
    throw;
  }
  return path;
}

namespace {

// (Tracked is Checkpoint's own type, deduced here.)
template <class Tracked>
Layout layout_of(const std::vector<Tracked>& tracked) {
  std::vector<std::pair<std::string, Variable>> model;
  std::vector<std::pair<std::string, optimizers::Optimizer*>> optimizers;
  for (const Tracked& t : tracked) {
    if (t.optimizer) {
      optimizers.emplace_back(t.key, t.optimizer);
    } else {
      model.insert(model.end(), t.variables.begin(), t.variables.end());
    }
  }
  Layout layout;
  layout.variables = model;
  for (const auto& [key, optimizer] : optimizers) {
    layout.variables.emplace_back(key + "/iterations", optimizer->iterations());
    layout.rates.emplace_back(key + "/learning_rate", optimizer);
    for (const auto& [path, variable] : model)
      layout.slots.push_back({key + "/slots/" + path + "/", optimizer, variable});
  }
  return layout;
}

template <class T>
Tensor vector_tensor(DType dtype, const T* data, size_t n) {
  Tensor t = detail::make_eager(dtype, Shape{int64_t(n)});
  if (n) std::memcpy(t.raw_mutable_data(), data, n * sizeof(T));
  return t;
}

// An iterator's entries: its position, and its pipeline's description (as
// bytes) to check a restore against.
void add_iterator_values(const std::string& key, const data::detail::IteratorAccess& access,
                         std::map<std::string, Tensor>& values) {
  const data::detail::FlatIterator* pass = access.pass();
  if (!pass)
    throw FailedPreconditionError("Checkpoint.save: iterator '" + key +
                                  "' is an end() iterator, with no position to save");
  std::vector<int64_t> position;
  try {
    position = pass->position();
  } catch (const FailedPreconditionError& e) {
    throw FailedPreconditionError("Checkpoint.save: iterator '" + key + "': " + e.message());
  }
  const std::string pipeline = data::detail::pipeline_of(access.node());
  values[key + "/position"] = vector_tensor(DType::int64, position.data(), position.size());
  values[key + "/pipeline"] = vector_tensor(DType::uint8, pipeline.data(), pipeline.size());
}

}  // namespace

void Checkpoint::write(const std::string& path) const {
  check_not_tracing("write");
  const Layout layout = layout_of(tracked_);
  std::map<std::string, Tensor> values;
  values[kSaveCounter] = Tensor(save_counter_);
  for (const auto& [p, v] : layout.variables) values[p] = v.read();
  for (const auto& [p, optimizer] : layout.rates)
    values[p] = constant(optimizer->learning_rate(), DType::float64);
  for (const Layout::Slots& s : layout.slots) {
    for (const Variable& slot : s.optimizer->slot_variables(s.variable))
      values[s.prefix + slot_name(slot)] = slot.read();
  }
  for (const Tracked& t : tracked_) {
    if (t.iterator) add_iterator_values(t.key, *t.iterator, values);
  }
  write_file(path, file_bytes(values));
}

namespace {

// What restore() assigns, once every value has been checked.
struct Assignments {
  std::vector<std::pair<Variable, Tensor>> variables;
  std::vector<std::pair<optimizers::Optimizer*, double>> rates;
  int64_t save_counter = 0;
};

class RestorePlan {
 public:
  RestorePlan(const std::string& path, Entries entries)
      : path_(path), entries_(std::move(entries)) {}

  // The entry at `p` as a value for a target of `dtype` and `shape`.
  Tensor take(const std::string& p, DType dtype, const Shape& shape) {
    auto it = entries_.find(p);
    if (it == entries_.end()) {
      missing_.push_back(p);
      return Tensor();
    }
    const Entry& e = it->second;
    Tensor value;
    if (e.dtype != dtype || !(e.shape == shape)) {
      mismatched_.push_back("'" + p + "' is " + describe(e.dtype, e.shape) + " in the file, " +
                            describe(dtype, shape) + " here");
    } else {
      value = tensor_of(e);
    }
    entries_.erase(it);
    return value;
  }

  // The entry at `p`, a vector of `dtype` of any length.
  Tensor take_vector(const std::string& p, DType dtype) {
    auto it = entries_.find(p);
    if (it == entries_.end()) {
      missing_.push_back(p);
      return Tensor();
    }
    Tensor value;
    if (it->second.dtype != dtype || it->second.shape.rank() != 1) {
      mismatched_.push_back("'" + p + "' is " + describe(it->second.dtype, it->second.shape) +
                            " in the file, a vector of " + std::string(dtype_name(dtype)) +
                            " here");
    } else {
      value = tensor_of(it->second);
    }
    entries_.erase(it);
    return value;
  }

  // The slot names the file has under `prefix`, in its order.
  std::vector<std::string> slot_names(const std::string& prefix) const {
    std::vector<std::string> names;
    for (auto it = entries_.lower_bound(prefix);
         it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      names.push_back(it->first.substr(prefix.size()));
    return names;
  }

  void mismatch(const std::string& what) { mismatched_.push_back(what); }

  // Throws for what did not fit: values missing, left over or unlike.
  void check_all_fit() const {
    std::string problems;
    auto list = [&](const std::string& title, const std::vector<std::string>& items) {
      if (items.empty()) return;
      problems += "\n  " + title + ":";
      for (const std::string& item : items) problems += "\n    " + item;
    };
    std::vector<std::string> left_over;
    for (const auto& [p, e] : entries_) left_over.push_back("'" + p + "'");
    list("tracked here but not in the file", quoted(missing_));
    list("in the file but not tracked here", left_over);
    list("of another type", mismatched_);
    if (problems.empty()) return;
    throw InvalidArgumentError("checkpoint '" + path_ +
                               "' does not fit what this Checkpoint tracks; nothing was "
                               "restored:" +
                               problems);
  }

 private:
  static std::vector<std::string> quoted(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const std::string& s : items) out.push_back("'" + s + "'");
    return out;
  }

  std::string path_;
  Entries entries_;
  std::vector<std::string> missing_, mismatched_;
};

// The slots of `s.variable`: made when the file has some (a fresh optimizer
// has none yet), zeroed when it has none (the optimizer had not updated the
// variable when the checkpoint was written).
void plan_slots(RestorePlan& plan, const Layout::Slots& s, Assignments& out) {
  std::vector<std::string> in_file = plan.slot_names(s.prefix);
  if (!in_file.empty()) s.optimizer->build({s.variable});
  std::vector<Variable> slots = s.optimizer->slot_variables(s.variable);
  if (in_file.empty()) {
    for (const Variable& slot : slots)
      out.variables.emplace_back(slot, zeros(slot.shape(), slot.dtype()));
    return;
  }
  std::vector<std::string> names;
  for (const Variable& slot : slots) names.push_back(slot_name(slot));
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != in_file) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& n : v) s += (s.empty() ? "" : ", ") + n;
      return s.empty() ? std::string("none") : s;
    };
    plan.mismatch("the slots of '" + s.prefix.substr(0, s.prefix.size() - 1) + "/' are " +
                  join(in_file) + " in the file, " + join(names) + " here (another optimizer?)");
    for (const std::string& n : in_file) plan.take(s.prefix + n, DType::float32, Shape{});
    return;
  }
  for (const Variable& slot : slots)
    out.variables.emplace_back(slot,
                               plan.take(s.prefix + slot_name(slot), slot.dtype(), slot.shape()));
}

}  // namespace

void Checkpoint::restore(const std::string& path) {
  check_not_tracing("restore");
  const Layout layout = layout_of(tracked_);
  RestorePlan plan(path, read_file(path));
  Assignments out;
  const Tensor counter = plan.take(kSaveCounter, DType::int64, Shape{});
  for (const auto& [p, v] : layout.variables)
    out.variables.emplace_back(v, plan.take(p, v.dtype(), v.shape()));
  for (const auto& [p, optimizer] : layout.rates) {
    const Tensor rate = plan.take(p, DType::float64, Shape{});
    if (rate.defined()) out.rates.emplace_back(optimizer, rate.item<double>());
  }
  for (const Layout::Slots& s : layout.slots) plan_slots(plan, s, out);
  std::vector<std::pair<const Tracked*, Tensor>> positions;
  for (const Tracked& t : tracked_) {
    if (!t.iterator) continue;
    const Tensor position = plan.take_vector(t.key + "/position", DType::int64);
    const Tensor pipeline = plan.take_vector(t.key + "/pipeline", DType::uint8);
    if (!position.defined() || !pipeline.defined()) continue;
    const std::string saved(static_cast<const char*>(pipeline.raw_data()),
                            size_t(pipeline.num_elements()));
    const std::string here = data::detail::pipeline_of(t.iterator->node());
    if (saved != here)
      plan.mismatch("iterator '" + t.key + "' was saved over '" + saved + "', and iterates '" +
                    here + "' here");
    positions.emplace_back(&t, position);
  }
  plan.check_all_fit();
  // Replayed before anything is assigned: a pipeline that ends too soon
  // leaves every tracked object as it was.
  std::vector<std::pair<FlatIterator, std::optional<data::detail::Flat>>> passes;
  for (const auto& [t, position] : positions) {
    const int64_t* p = position.data<int64_t>();
    try {
      passes.push_back(FlatIterator::at_position(
          t->iterator->node(), std::vector<int64_t>(p, p + position.num_elements())));
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError("checkpoint '" + path + "': iterator '" + t->key +
                                 "' cannot be restored, nothing was: " + e.message());
    }
  }

  for (size_t i = 0; i < passes.size(); ++i)
    positions[i].first->iterator->reset(std::move(passes[i].first), std::move(passes[i].second));
  for (auto& [variable, value] : out.variables) variable.assign(value);
  for (const auto& [optimizer, rate] : out.rates) optimizer->set_learning_rate(rate);
  save_counter_ = counter.item<int64_t>();
}

}  // namespace ag::train
