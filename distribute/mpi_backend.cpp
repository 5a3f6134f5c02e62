#include "mpi_backend.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "ag/error.h"

namespace ag::distribute {
namespace {

using Clock = std::chrono::steady_clock;

// The descriptors' tag on the backend's own communicator.
constexpr int kDescriptorTag = 1;

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return MPI_FLOAT;
    case DType::float64:
      return MPI_DOUBLE;
    case DType::int32:
      return MPI_INT32_T;
    case DType::int64:
      return MPI_INT64_T;
    default:  // collectives run on compute dtypes (ag/dtype.h)
      break;
  }
  throw InternalError("ag::distribute: no MPI type for dtype " + std::string(dtype_name(dtype)));
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      return MPI_SUM;
    case ReduceOp::Max:
      return MPI_MAX;
    case ReduceOp::Min:
      return MPI_MIN;
  }
  throw InternalError("ag::distribute: unknown reduce op");
}

// "1, 2": the ranks, for messages.
std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return (ranks.size() == 1 ? "rank " : "ranks ") + text;
}

std::string seconds_text(std::chrono::milliseconds timeout) {
  const double s = double(timeout.count()) / 1000.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// A mean's division of the sum by the number of ranks, in the tensor's
// dtype: a multiplication by the reciprocal where that is exact (a power of
// two: the same bits as the division, and a third of its time), else the
// division.
template <class T>
void divide_in_place(void* data, int64_t n, int ranks) {
  T* values = static_cast<T*>(data);
  const T by = T(ranks);
  if ((ranks & (ranks - 1)) == 0) {
    const T reciprocal = T(1) / by;
    for (int64_t i = 0; i < n; ++i) values[i] *= reciprocal;
    return;
  }
  for (int64_t i = 0; i < n; ++i) values[i] /= by;
}

}  // namespace

MpiBackend::MpiBackend(MPI_Comm comm, std::chrono::milliseconds timeout) : timeout_(timeout) {
  MPI_Comm_dup(comm, &comm_);
  // Errors come back as codes, which run() turns into exceptions naming the call.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  any_thread_ = provided >= MPI_THREAD_SERIALIZED;
}

MpiBackend::~MpiBackend() {
  close();
}

void MpiBackend::close() {
  std::lock_guard lock(mutex_);
  if (comm_ != MPI_COMM_NULL && failure_.empty()) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

std::string MpiBackend::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void MpiBackend::check(int code, std::string_view name, std::string_view call) const {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw InternalError(std::string(name) + ": " + std::string(call) + " failed on rank " +
                      std::to_string(rank_) + ": " + std::string(text, size_t(length)));
}

MpiBackend::Descriptor MpiBackend::describe(const CollectiveCall& call) const {
  Descriptor d;
  d.sequence = sequence_;
  d.collective = int64_t(call.collective);
  d.op = int64_t(call.op);
  d.root = call.root;
  d.dtype = int64_t(call.dtype);
  d.rank = call.input_shape.rank();
  for (int i = 0; i < d.rank; ++i) {
    const int64_t dim = call.input_shape[i];
    if (i < Descriptor::kMaxDims)
      d.dims[i] = dim;
    else
      d.dims[Descriptor::kMaxDims] = d.dims[Descriptor::kMaxDims] * 1000003 + dim;
  }
  return d;
}

// "all_reduce(sum) of float32 [2,3] (collective #4)"
std::string MpiBackend::describe_text(const Descriptor& d) const {
  if (d.collective == kFinish)
    return "the end of its ag::distribute::Context (collective #" + std::to_string(d.sequence) +
           ")";
  const auto collective = Collective(d.collective);
  std::string text(collective_name(collective));
  if (collective == Collective::AllReduce || collective == Collective::ReduceScatter)
    text += "(" + std::string(reduce_op_name(ReduceOp(d.op))) + ")";
  if (collective == Collective::Broadcast) text += "(root " + std::to_string(d.root) + ")";
  Shape shape;
  for (int64_t i = 0; i < std::min<int64_t>(d.rank, Descriptor::kMaxDims); ++i)
    shape.push_back(d.dims[i]);
  std::string dims = shape.to_list_string();
  if (d.rank > Descriptor::kMaxDims) dims.insert(dims.size() - 1, ",...");
  return text + " of " + std::string(dtype_name(DType(d.dtype))) + " " + dims + " (collective #" +
         std::to_string(d.sequence) + ")";
}

bool MpiBackend::wait_all(std::vector<MPI_Request>& requests, Clock::time_point deadline) const {
  // The descriptors arrive as soon as the other ranks reach the collective,
  // which a pause between polls would delay: poll without pausing, yielding
  // to the other ranks of an oversubscribed machine, for 200 ms. A rank
  // still waiting then waits for a slow or missing rank: sleep between
  // polls, briefly, since a sleeping rank also moves nothing on.
  const Clock::time_point spin_until = Clock::now() + std::chrono::milliseconds(200);
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int done = 0;
    check(MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), current_,
          "MPI_Testall");
    if (done) return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    if (now < spin_until) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500));
  }
}

void MpiBackend::fail_timeout(std::string_view name, const std::string& what) {
  failure_ = std::string(name) + ": rank " + std::to_string(rank_) + " of " +
             std::to_string(size_) + " waited " + seconds_text(timeout_) + " " + what +
             "; they failed, exited or are running something else. The job cannot go on: "
             "ag::distribute::Context ends it with MPI_Abort (ContextOptions::timeout sets "
             "the wait)";
  throw FailedPreconditionError(failure_);
}

void MpiBackend::exchange_descriptors(const Descriptor& mine, std::string_view name) {
  // The backend's own buffers: a timed-out receive may still land in them.
  std::vector<Descriptor>& all = descriptors_;
  all.assign(size_t(size_), Descriptor{});
  all[size_t(rank_)] = mine;
  std::vector<MPI_Request> receives, sends;
  std::vector<int> peers;
  const int words = int(sizeof(Descriptor) / sizeof(int64_t));
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    peers.push_back(peer);
    receives.push_back(MPI_REQUEST_NULL);
    sends.push_back(MPI_REQUEST_NULL);
    check(MPI_Irecv(&all[size_t(peer)], words, MPI_INT64_T, peer, kDescriptorTag, comm_,
                    &receives.back()),
          name, "MPI_Irecv");
    check(MPI_Isend(&all[size_t(rank_)], words, MPI_INT64_T, peer, kDescriptorTag, comm_,
                    &sends.back()),
          name, "MPI_Isend");
  }
  const Clock::time_point deadline = Clock::now() + timeout_;
  if (!wait_all(receives, deadline)) {
    std::vector<int> missing;
    for (size_t i = 0; i < receives.size(); ++i) {
      int arrived = 0;
      MPI_Test(&receives[i], &arrived, MPI_STATUS_IGNORE);
      if (!arrived) missing.push_back(peers[i]);
    }
    fail_timeout(name, "at " + describe_text(mine) + " for " + rank_list(missing) +
                           ", which did not call it");
  }
  if (!wait_all(sends, deadline))
    fail_timeout(name, "at " + describe_text(mine) + " to send its call to the other ranks");
  if (std::all_of(all.begin(), all.end(), [&](const Descriptor& d) { return d == mine; })) return;
  // Every rank has every descriptor: each throws the same error, and the
  // collective is skipped everywhere, so the job can go on.
  std::map<std::string, std::vector<int>> ranks_by_call;
  for (int r = 0; r < size_; ++r) ranks_by_call[describe_text(all[size_t(r)])].push_back(r);
  std::string calls;
  for (const auto& [call, ranks] : ranks_by_call)
    calls += (calls.empty() ? "" : "; ") + rank_list(ranks) + " called " + call;
  const std::string message = std::string(name) + ": the ranks disagree: " + calls +
                              ". Every rank must call the same collectives in the same order, "
                              "with the same dtype, shape, op and root (a rank whose data ran "
                              "out early, such as a shard of a dataset the ranks do not divide "
                              "evenly, goes on to the collectives after its loop: give every "
                              "rank the same number of steps)";
  // A rank that left takes no part in collectives any more: the job is over.
  if (std::any_of(all.begin(), all.end(),
                  [](const Descriptor& d) { return d.collective == kFinish; })) {
    failure_ = message + "; a rank has left, so the job cannot go on";
    throw FailedPreconditionError(failure_);
  }
  throw InvalidArgumentError(message);
}

void MpiBackend::run_collective(const CollectiveCall& call, const Descriptor& mine,
                                std::string_view name) {
  const int64_t count =
      call.collective == Collective::ReduceScatter ? call.output_elements : call.input_elements;
  if (count > INT_MAX) {
    throw InvalidArgumentError(std::string(name) + ": " + std::to_string(count) +
                               " elements are more than one MPI call takes (" +
                               std::to_string(INT_MAX) + "); split the tensor");
  }
  if (size_ == 1) {  // every collective of one rank gives its input back
    if (call.output != call.input)
      std::memcpy(call.output, call.input, size_t(count) * dtype_size(call.dtype));
    return;
  }
  // The message is written only if the watchdog fires, while this call waits.
  watchdog_.arm(Clock::now() + timeout_, [&] { return data_phase_failure(mine, name); });
  const auto [code, mpi_call] = run_blocking(call, int(count));
  watchdog_.disarm();
  check(code, name, mpi_call);
  if (call.op == ReduceOp::Mean) {
    if (call.dtype == DType::float32)
      divide_in_place<float>(call.output, call.output_elements, size_);
    else
      divide_in_place<double>(call.output, call.output_elements, size_);
  }
}

std::pair<int, const char*> MpiBackend::run_blocking(const CollectiveCall& call, int count) {
  const MPI_Datatype type = mpi_type(call.dtype);
  switch (call.collective) {
    case Collective::AllReduce: {
      // In place where the op was handed one buffer (a graph's dying input):
      // no copy of the input first, a quarter of the time on 2 ranks.
      const void* send = call.input == call.output ? MPI_IN_PLACE : call.input;
      return {MPI_Allreduce(send, call.output, count, type, mpi_op(call.op), comm_),
              "MPI_Allreduce"};
    }
    case Collective::Broadcast:
      if (rank_ == call.root && call.output != call.input)
        std::memcpy(call.output, call.input, size_t(count) * dtype_size(call.dtype));
      return {MPI_Bcast(call.output, count, type, call.root, comm_), "MPI_Bcast"};
    case Collective::AllGather:
      return {MPI_Allgather(call.input, count, type, call.output, count, type, comm_),
              "MPI_Allgather"};
    case Collective::ReduceScatter:
      return {
          MPI_Reduce_scatter_block(call.input, call.output, count, type, mpi_op(call.op), comm_),
          "MPI_Reduce_scatter_block"};
  }
  throw InternalError("ag::distribute: unknown collective");
}

std::string MpiBackend::data_phase_failure(const Descriptor& mine, std::string_view name) const {
  return std::string(name) + ": rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
         " spent " + seconds_text(timeout_) + " moving the data of " + describe_text(mine) +
         ", which every rank had called: a rank died or froze during the transfer, and MPI can "
         "neither cancel a collective nor finish one half done, so the job ends here "
         "(ContextOptions::timeout sets the wait)";
}

bool MpiBackend::finish() {
  std::lock_guard lock(mutex_);
  if (!failure_.empty() || comm_ == MPI_COMM_NULL) return failure_.empty();
  current_ = "ag::distribute::Context";
  Descriptor end;
  end.sequence = ++sequence_;
  end.collective = kFinish;
  try {
    exchange_descriptors(end, current_);
  } catch (const Error&) {
    return false;  // failure_ says why
  }
  return true;
}

void MpiBackend::run(const CollectiveCall& call) {
  std::lock_guard lock(mutex_);
  const std::string_view name = collective_name(call.collective);
  if (!failure_.empty()) {
    throw FailedPreconditionError(std::string(name) +
                                  ": the distribute context failed earlier and cannot run "
                                  "collectives: " +
                                  failure_);
  }
  if (comm_ == MPI_COMM_NULL)
    throw FailedPreconditionError(std::string(name) + ": the distribute context is closed");
  current_ = name;
  ++sequence_;
  const Descriptor mine = describe(call);
  exchange_descriptors(mine, name);
  run_collective(call, mine, name);
}

}  // namespace ag::distribute
