#include "ready_order.h"

#include <cstring>
#include <string>
#include <utility>

#include "ag/error.h"
#include "ag/ops.h"

namespace ag::distribute {
int64_t static_bytes(const Tensor& gradient) {
  if (!gradient.shape().is_fully_defined()) return -1;
  return gradient.shape().num_elements() * int64_t(dtype_size(gradient.dtype()));
}

void all_reduce_fused(const std::vector<Tensor>& grads, const std::vector<size_t>& members,
                      ReduceOp op, std::vector<Tensor>& reduced, CallSite site) {
  if (members.size() == 1) {
    reduced[members[0]] = all_reduce(grads[members[0]], op, site);
    return;
  }
  std::vector<Tensor> flat;
  for (size_t i : members) flat.push_back(reshape(grads[i], {-1}, site));
  const Tensor combined = all_reduce(concat(flat, 0, site), op, site);
  int64_t offset = 0;
  for (size_t i : members) {
    const Shape& shape = grads[i].shape();
    const int64_t n = shape.num_elements();
    reduced[i] = reshape(slice(combined, {offset}, {n}, site),
                         std::vector<int64_t>(shape.begin(), shape.end()), site);
    offset += n;
  }
}

ReadyOrderReducer::ReadyOrderReducer(size_t count, const DistributedOptions& options, CallSite site)
    : options_(options),
      site_(site),
      backend_(current_backend()),
      gradients_(count),
      reduced_(count),
      open_(size_t(DType::bool_) + 1) {}

ReadyOrderReducer::~ReadyOrderReducer() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    queue_.clear();
    closing_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

bool ReadyOrderReducer::overlap() const {
  return options_.overlap && backend_ && backend_->runs_on_any_thread();
}

void ReadyOrderReducer::ready(size_t index, const Tensor& gradient) {
  if (!gradient.defined()) return;
  gradients_[index] = gradient;
  const bool symbolic = gradient.is_symbolic();
  Member member{index, nullptr, nullptr, 0};
  if (!symbolic) {
    reduced_[index] = api::empty(gradient.shape(), gradient.dtype());
    member = {index, gradient.raw_data(), reduced_[index].raw_mutable_data(),
              gradient.num_elements()};
  }
  const int64_t bytes = static_bytes(gradient);
  if (bytes < 0 || bytes >= options_.fusion_threshold_bytes) {
    dispatch({gradient.dtype(), bytes, symbolic, {member}});
    return;
  }
  Job& open = open_[size_t(gradient.dtype())];
  if (!open.members.empty() && open.bytes + bytes > options_.fusion_threshold_bytes)
    dispatch(std::exchange(open, Job{}));
  open.dtype = gradient.dtype();
  open.bytes += bytes;
  open.symbolic = open.symbolic || symbolic;
  open.members.push_back(member);
}

void ReadyOrderReducer::dispatch(Job job) {
  if (job.symbolic) {
    reduce_symbolic(job);
    return;
  }
  if (!backend_) {
    throw FailedPreconditionError(
        "all_reduce: no distribute context: create ag::distribute::Context first");
  }
  jobs_.push_back(std::make_unique<Job>(std::move(job)));
  if (!overlap()) return;
  if (!thread_.joinable()) thread_ = std::thread([this] { work(); });
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(jobs_.back().get());
  }
  wake_.notify_one();
}

// A traced step: the all_reduce ops, recorded now, in the ready order.
void ReadyOrderReducer::reduce_symbolic(const Job& job) {
  std::vector<size_t> members;
  for (const Member& m : job.members) members.push_back(m.index);
  all_reduce_fused(gradients_, members, options_.op, reduced_, site_);
}

// The backend's all_reduce of one job, on raw buffers (no op runs here, so
// that the communication thread touches no runtime state): the call the
// all_reduce op makes for the same buffer.
void ReadyOrderReducer::run(Job& job) const {
  const size_t element = dtype_size(job.dtype);
  CollectiveCall call;
  call.collective = Collective::AllReduce;
  call.op = options_.op;
  call.dtype = job.dtype;
  if (job.members.size() == 1) {
    const Member& m = job.members[0];
    call.input_shape = gradients_[m.index].shape();
    call.input = m.input;
    call.output = m.output;
    call.input_elements = call.output_elements = m.elements;
    backend_->run(call);
    return;
  }
  int64_t total = 0;
  for (const Member& m : job.members) total += m.elements;
  std::vector<std::byte> input(size_t(total) * element), output(input.size());
  size_t offset = 0;
  for (const Member& m : job.members) {
    std::memcpy(input.data() + offset, m.input, size_t(m.elements) * element);
    offset += size_t(m.elements) * element;
  }
  call.input_shape = Shape{total};
  call.input = input.data();
  call.output = output.data();
  call.input_elements = call.output_elements = total;
  backend_->run(call);
  offset = 0;
  for (const Member& m : job.members) {
    std::memcpy(m.output, output.data() + offset, size_t(m.elements) * element);
    offset += size_t(m.elements) * element;
  }
}

// The communication thread: the jobs in dispatch order; after an error, none.
// It waits without a deadline only for work; each collective waits with the
// Context's timeout, so finish() always returns.
void ReadyOrderReducer::work() {
  for (;;) {
    std::unique_lock lock(mutex_);
    wake_.wait(lock, [&] { return !queue_.empty() || closing_; });
    if (queue_.empty()) return;
    Job* job = queue_.front();
    queue_.pop_front();
    const bool failed = bool(error_);
    lock.unlock();
    if (failed) continue;
    try {
      run(*job);
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
    }
  }
}

std::vector<Tensor> ReadyOrderReducer::finish() {
  for (Job& open : open_)
    if (!open.members.empty()) dispatch(std::exchange(open, Job{}));
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  // Without overlap the same jobs run here, in the same order.
  if (!overlap())
    for (const std::unique_ptr<Job>& job : jobs_) run(*job);
  if (error_) std::rethrow_exception(error_);
  return std::move(reduced_);
}

}  // namespace ag::distribute
