// Checkpoints of training state, as tf.train.Checkpoint: variables by path,
// an optimizer's step counter, learning rate and slot variables, where
// dataset iterators stand, and the checkpoint's own save counter, in one
// file.
//
//   ag::train::Checkpoint ckpt;
//   ckpt.track("model", model_variables).track("optimizer", adam);
//   ckpt.track("net", sequential);  // an ag::layers::Layer, built
//   auto it = dataset.begin();
//   ckpt.track("iterator", it);     // an ag::data::Dataset iterator
//   std::string path = ckpt.save("/tmp/run/ckpt");  // "/tmp/run/ckpt-1"
//   ...
//   ckpt.restore(path);  // the variables, the optimizer, the iterator and the counter
//
// A training run restored from a checkpoint continues bit for bit as if it
// had not stopped: the values are written and read as their bytes, and the
// optimizer's slots and step counter come back with them.
//
// Paths: a variable tracked alone is saved under its key; a list of
// variables under "<key>/<variable name>" (the names must be distinct); an optimizer under
// "<key>/iterations", "<key>/learning_rate" and "<key>/slots/<variable path>/<slot>" for the
// tracked variables it has slots for (Adam: m and v, SGD with momentum: momentum).
//
// An iterator under "<key>/position" and "<key>/pipeline".
//
// restore() checks the whole file before it assigns anything: a missing file
// is a NotFoundError, a damaged one (not a checkpoint, truncated, a wrong
// checksum) a DataLossError, and one that does not fit what is tracked (a
// value missing, one left over, another dtype or shape, other slots) an
// InvalidArgumentError naming the paths; the variables and iterators are
// then unchanged.
// save() writes a new file and renames it into place, so an interrupted
// save leaves the previous checkpoint whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ag/data.h"
#include "ag/optimizers.h"
#include "ag/variable.h"

namespace ag::layers {
class Layer;
}

namespace ag::train {

class Checkpoint {
 public:
  Checkpoint() = default;

  // What the checkpoint saves and restores, each under a key (the keyword
  // arguments of tf.train.Checkpoint(model=..., optimizer=...)). Keys are
  // distinct, not empty, and hold no '/'. The tracked objects must outlive
  // the checkpoint's saves and restores.
  Checkpoint& track(const std::string& key, const Variable& variable);
  Checkpoint& track(const std::string& key, const std::vector<Variable>& variables);
  Checkpoint& track(const std::string& key, optimizers::Optimizer& optimizer);
  // A layer's (or a Sequential's) variables by their place in it, as
  // tf.train.Checkpoint names them: "<key>/kernel" for a layer's own, and
  // "<key>/layer_with_weights-<k>/kernel" for a Sequential's k-th layer with
  // variables. Not by the layers' names, which count the layers made so far,
  // so a second model of the same structure restores the first's file. The
  // layer must be built (called once, or build()): its variables are made then.
  Checkpoint& track(const std::string& key, const layers::Layer& layer);
  // Where an iterator over a dataset stands (tf.train.Checkpoint(iterator=it)):
  // "<key>/position" and "<key>/pipeline". restore() makes the tracked
  // iterator stand there, its current element the one it was at, so a resumed
  // run goes on with the next element, bit for bit. The position is replayed:
  // restore() runs a new pass up to it (elements and shuffle orders alike),
  // so the pipeline must give the same elements each pass: range,
  // from_tensor_slices, files, batch, map, filter, take, skip, repeat,
  // shuffle with its seed, zip, enumerate, shard. Saving an iterator over a
  // from_generator or prefetch stage is a FailedPreconditionError naming it.
  template <class Iterator>
    requires requires(Iterator& it) { it.checkpoint_access(); }
  Checkpoint& track(const std::string& key, Iterator& iterator) {
    return track_iterator(key, iterator.checkpoint_access());
  }

  // Writes every tracked value to "<prefix>-<n>", where n is this
  // checkpoint's save counter after counting this save (1 for the first, as
  // TensorFlow's), and returns that path.
  std::string save(const std::string& prefix);
  // Writes every tracked value to `path` itself (tf.train.Checkpoint.write);
  // the save counter does not change.
  void write(const std::string& path) const;
  // Reads back what save() or write() wrote, the save counter included.
  void restore(const std::string& path);

  int64_t save_counter() const { return save_counter_; }

 private:
  struct Tracked {
    std::string key;
    std::vector<std::pair<std::string, Variable>> variables;  // (path, variable)
    optimizers::Optimizer* optimizer = nullptr;
    std::optional<data::detail::IteratorAccess> iterator = std::nullopt;
  };
  void add(Tracked tracked);
  Checkpoint& track_iterator(const std::string& key, data::detail::IteratorAccess access);

  std::vector<Tracked> tracked_;
  int64_t save_counter_ = 0;
};

}  // namespace ag::train
