// Dataset::prefetch: a background thread runs the input pipeline into a
// bounded queue. Every shared field is guarded by one mutex; the destructor
// stops the thread and joins it, so a pass ended early (a break) leaves no
// thread behind.
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "data/node.h"

namespace ag::data::detail {

namespace {

class PrefetchPass : public Pass {
 public:
  PrefetchPass(std::unique_ptr<Pass> input, size_t capacity)
      : input_(std::move(input)), capacity_(capacity), thread_([this] { produce(); }) {}

  ~PrefetchPass() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  std::optional<Flat> next() override {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      Flat e = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      changed_.notify_all();
      return e;
    }
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return std::nullopt;
  }

 private:
  void produce() {
    for (;;) {
      {
        std::unique_lock lock(mu_);
        changed_.wait(lock, [&] { return stop_ || queue_.size() < capacity_; });
        if (stop_) return;
      }
      std::optional<Flat> e;
      std::exception_ptr error;
      try {
        e = input_->next();
      } catch (...) {
        error = std::current_exception();
      }
      bool finished = error || !e;
      {
        std::lock_guard lock(mu_);
        if (finished) {
          error_ = error;
          done_ = true;
        } else {
          queue_.push_back(std::move(*e));
        }
      }
      changed_.notify_all();
      if (finished) return;
    }
  }

  std::unique_ptr<Pass> input_;  // used by the thread only
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Flat> queue_;
  bool done_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts once the fields above exist
};

}  // namespace

NodePtr prefetch_node(NodePtr input, int64_t buffer_size, CallSite site) {
  if (buffer_size <= 0)
    throw InvalidArgumentError(where(site) + "prefetch: buffer_size must be positive, got " +
                               std::to_string(buffer_size));
  return make_node(input->spec,
                   [input, buffer_size] {
                     return std::make_unique<PrefetchPass>(input->start(), size_t(buffer_size));
                   },
                   {"prefetch(" + std::to_string(buffer_size) + ")", {input}, /*saveable=*/false});
}

}  // namespace ag::data::detail
