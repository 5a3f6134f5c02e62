// The stages of an input pipeline (ag/data.h): a Node describes one and
// starts passes over it; a Pass holds one pass's state. Internal to the
// runtime.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ag/data.h"

namespace ag::data::detail {

class Pass {
 public:
  virtual ~Pass() = default;
  // The next element, or nullopt at the end of the pass.
  virtual std::optional<Flat> next() = 0;
};

// What a stage is, for a checkpoint of an iterator: its name and
// arguments ("batch(3)"), its inputs, and whether a pass's position can be
// saved (replayed: the stage gives the same elements on every pass).
struct Stage {
  std::string name;
  std::vector<NodePtr> inputs = {};
  bool saveable = true;
};

struct Node {
  Node(Specs spec, Stage stage);
  virtual ~Node() = default;
  virtual std::unique_ptr<Pass> start() const = 0;
  Specs spec;
  uint64_t id;
  Stage stage;
};

// A pass whose state lives in the closure `next` (which may own passes of
// its inputs, so it is not copied).
template <class F>
class FnPass : public Pass {
 public:
  explicit FnPass(F next) : next_(std::move(next)) {}
  std::optional<Flat> next() override { return next_(); }

 private:
  F next_;
};

template <class F>
std::unique_ptr<Pass> make_pass(F next) {
  return std::make_unique<FnPass<F>>(std::move(next));
}

// A node whose passes come from `make`.
NodePtr make_node(Specs spec, std::function<std::unique_ptr<Pass>()> make, Stage stage);

// Which pass of a shuffle stage a new pass is, which seeds its order: the
// iterator's index at the stage and the stage's passes before it in the same
// iterator (repetitions). The index is drawn from `counter` (the stage's
// iterators) at the stage's first pass in an iterator, or while a restored
// iterator replays, is the index the saved one drew; it is recorded in the
// iterator's position. So an iterator's orders depend on its own state, not
// on the iterators made beside it. Outside an iterator (a prefetch thread),
// each pass draws a new index.
struct ShufflePass {
  uint64_t iterator = 0;
  uint64_t epoch = 0;
};
ShufflePass draw_shuffle_pass(const void* stage, std::atomic<uint64_t>& counter);

// "file:line: " for error messages, or "" without a site.
std::string where(const CallSite& site);

}  // namespace ag::data::detail
