// FlatIterator: a pass over a pipeline, and its position for a checkpoint.
// A position is replayed, not stored: the elements given so far and the
// iterator indices the pass's shuffles drew, so that a new pass over the same
// (deterministic) pipeline pulls as many elements with the same orders and
// stands where the saved one stood.
#include <map>

#include "ag/error.h"
#include "data/node.h"
#include "trace/trace_state.h"

namespace ag::data::detail {

namespace {

// What an iterator records of its shuffles, and replays when restored.
struct PassLog {
  std::vector<int64_t> drawn;  // the stages' iterator indices, in the order drawn
  std::vector<int64_t> replay;
  size_t replayed = 0;
  std::map<const void*, ShufflePass> stages;  // per shuffle stage, its latest pass
};

// The log of the pass whose stages run on this thread now.
thread_local PassLog* t_log = nullptr;

class LogScope {
 public:
  explicit LogScope(PassLog* log) : previous_(t_log) { t_log = log; }
  ~LogScope() { t_log = previous_; }
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  PassLog* previous_;
};

// "range(0, 10, 1) -> batch(3)", a zip's inputs in parentheses.
std::string describe(const Node& node) {
  const Stage& s = node.stage;
  if (s.inputs.empty()) return s.name;
  if (s.inputs.size() == 1) return describe(*s.inputs[0]) + " -> " + s.name;
  std::string out = s.name + "(";
  for (size_t i = 0; i < s.inputs.size(); ++i) out += (i ? ", " : "") + describe(*s.inputs[i]);
  return out + ")";
}

const Node* unsaveable_stage(const Node& node) {
  if (!node.stage.saveable) return &node;
  for (const NodePtr& in : node.stage.inputs) {
    if (const Node* n = unsaveable_stage(*in)) return n;
  }
  return nullptr;
}

}  // namespace

ShufflePass draw_shuffle_pass(const void* stage, std::atomic<uint64_t>& counter) {
  PassLog* log = t_log;
  if (log) {
    // A repetition within the iterator: its next epoch, whatever other
    // iterators drew meanwhile.
    auto seen = log->stages.find(stage);
    if (seen != log->stages.end()) {
      ++seen->second.epoch;
      return seen->second;
    }
  }
  uint64_t index = 0;
  if (log && log->replayed < log->replay.size()) {
    index = uint64_t(log->replay[log->replayed++]);
    // Later iterators draw past every index a restored one holds.
    uint64_t c = counter.load();
    while (c <= index && !counter.compare_exchange_weak(c, index + 1)) {
    }
  } else {
    index = counter++;
  }
  const ShufflePass pass{index, 0};
  if (log) {
    log->drawn.push_back(int64_t(index));
    log->stages[stage] = pass;
  }
  return pass;
}

struct FlatIterator::State {
  NodePtr node;
  std::unique_ptr<Pass> pass;
  PassLog log;
  int64_t given = 0;
  bool ended = false;
};

FlatIterator::FlatIterator(const NodePtr& node) : state_(std::make_unique<State>()) {
  trace::ActiveTrace eager(nullptr, /*finish_on_exit=*/false);
  state_->node = node;
  LogScope scope(&state_->log);
  state_->pass = node->start();
}
FlatIterator::~FlatIterator() = default;
FlatIterator::FlatIterator(FlatIterator&&) noexcept = default;
FlatIterator& FlatIterator::operator=(FlatIterator&&) noexcept = default;

std::optional<Flat> FlatIterator::next() {
  // The pipeline runs on the host: while a function is being traced, its
  // ops must not be recorded into the trace.
  trace::ActiveTrace eager(nullptr, /*finish_on_exit=*/false);
  LogScope scope(&state_->log);
  std::optional<Flat> e = state_->pass->next();
  if (e) {
    ++state_->given;
  } else {
    state_->ended = true;
  }
  return e;
}

std::string pipeline_of(const NodePtr& node) {
  return describe(*node);
}

std::vector<int64_t> FlatIterator::position() const {
  if (const Node* n = unsaveable_stage(*state_->node)) {
    throw FailedPreconditionError(
        "the position of an iterator over '" + pipeline_of(state_->node) +
        "' cannot be saved: its stage '" + n->stage.name +
        "' holds state a replay cannot rebuild (a generator's own state, the elements a "
        "prefetch thread has pulled ahead); checkpoint an iterator over a pipeline without it");
  }
  std::vector<int64_t> out{state_->given, state_->ended ? 1 : 0};
  out.insert(out.end(), state_->log.drawn.begin(), state_->log.drawn.end());
  return out;
}

std::pair<FlatIterator, std::optional<Flat>> FlatIterator::at_position(
    const NodePtr& node, const std::vector<int64_t>& position) {
  if (position.size() < 2 || position[0] < 0 || (position[1] != 0 && position[1] != 1))
    throw InvalidArgumentError("the iterator position " + std::to_string(position.size()) +
                               " values long is not one an iterator saved");
  FlatIterator it(nullptr, node, position);
  std::optional<Flat> last;
  for (int64_t i = 0; i < position[0]; ++i) {
    last = it.next();
    if (!last)
      throw InvalidArgumentError("the pipeline '" + pipeline_of(node) + "' ends after " +
                                 std::to_string(i) + " elements, before the saved position " +
                                 std::to_string(position[0]) +
                                 " (was the iterator saved over other data?)");
  }
  if (position[1] == 1) {
    if (it.next())
      throw InvalidArgumentError("the pipeline '" + pipeline_of(node) + "' has more than the " +
                                 std::to_string(position[0]) +
                                 " elements the saved iterator had given at its end");
    last.reset();
  }
  return {std::move(it), std::move(last)};
}

FlatIterator::FlatIterator(std::nullptr_t, const NodePtr& node,
                           const std::vector<int64_t>& position)
    : state_(std::make_unique<State>()) {
  state_->node = node;
  state_->log.replay.assign(position.begin() + 2, position.end());
  trace::ActiveTrace eager(nullptr, /*finish_on_exit=*/false);
  LogScope scope(&state_->log);
  state_->pass = node->start();
}

}  // namespace ag::data::detail
