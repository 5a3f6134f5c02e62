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

// The pass index of a shuffle stage's new pass (`counter` counts the stage's
// passes): the next of the counter, or while a restored pass replays, the
// index the saved pass drew; recorded in the pass's position.
uint64_t draw_pass_index(const void* stage, std::atomic<uint64_t>& counter);

// "file:line: " for error messages, or "" without a site.
std::string where(const CallSite& site);

}  // namespace ag::data::detail
