// Gradients combined over the ranks in the order the backward completes them
// (GradientTape::on_gradient_ready): fusion buffers are formed in that order,
// and each is all_reduced as soon as it is full, on a communication thread
// while the backward goes on (overlap), or after the backward on the calling
// thread; both run the same buffers through the same backend calls, so their
// results are the same bit for bit. Symbolic gradients (a traced step) are
// combined with the all_reduce op instead, recorded in the same order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ag/distribute.h"

namespace ag::distribute {

// The bytes of a gradient, or -1 when its shape is not static (a traced
// gradient with an unknown dim): such a gradient is reduced on its own.
int64_t static_bytes(const Tensor& gradient);

// One all_reduce of the gradients `members` (indices into grads), flattened
// and concatenated when there are several, cut back apart into `reduced`;
// its ops at `site`.
void all_reduce_fused(const std::vector<Tensor>& grads, const std::vector<size_t>& members,
                      ReduceOp op, std::vector<Tensor>& reduced, CallSite site);

class ReadyOrderReducer {
 public:
  // A traced step's all_reduce ops are at `site`.
  ReadyOrderReducer(size_t count, const DistributedOptions& options, CallSite site);
  // Stops the communication thread; collectives not started are dropped.
  ~ReadyOrderReducer();
  ReadyOrderReducer(const ReadyOrderReducer&) = delete;
  ReadyOrderReducer& operator=(const ReadyOrderReducer&) = delete;

  // Gradient `index` is complete (undefined: it has none).
  void ready(size_t index, const Tensor& gradient);
  // Sends the buffers still open, waits for every collective and returns the
  // combined gradients by index; rethrows a collective's error.
  std::vector<Tensor> finish();

 private:
  struct Member {
    size_t index;
    const void* input;  // the gradient's data (held in gradients_)
    void* output;       // the combined gradient's (held in reduced_)
    int64_t elements;
  };
  // One all_reduce: a gradient alone, or several flattened into one buffer.
  struct Job {
    DType dtype = DType::float32;
    int64_t bytes = 0;
    bool symbolic = false;
    std::vector<Member> members;
  };

  // Whether jobs go to the communication thread.
  bool overlap() const;
  void dispatch(Job job);
  void reduce_symbolic(const Job& job);
  void run(Job& job) const;
  void work();

  DistributedOptions options_;
  CallSite site_;
  std::shared_ptr<Backend> backend_;
  std::vector<Tensor> gradients_;
  std::vector<Tensor> reduced_;
  std::vector<Job> open_;                   // by dtype: the buffer being filled
  std::vector<std::unique_ptr<Job>> jobs_;  // eager jobs, in dispatch order
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job*> queue_;  // for the communication thread
  bool closing_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace ag::distribute
