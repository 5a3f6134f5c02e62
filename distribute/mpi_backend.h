// The collectives' backend on MPI. Each collective first exchanges a small
// descriptor with every other rank (point to point: collective, op, root,
// dtype, shape and the collective's sequence number), so that ranks that
// call different collectives, or the same one on different dtypes or
// shapes, fail on every rank with an error naming each rank's call. That
// exchange polls with MPI_Test until a deadline: a rank that never comes (it
// threw, exited, or is stuck) makes the others fail with an error naming the
// collective and the missing ranks, after which the backend is failed (its
// Context ends the job with MPI_Abort, since MPI cannot finish a collective
// half done). Once every rank has called the collective, its data moves in
// MPI's blocking call (in place where it can: on 2 ranks and 7 MB, 1.5 ms
// against 1.9 for the non-blocking call, whose in-place form took 2.5;
// docs/distributed.md says how they were timed),
// under a watchdog that ends the job if a rank dies or freezes mid-transfer.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ag/distribute.h"
#include "watchdog.h"

namespace ag::distribute {

class MpiBackend final : public Backend {
 public:
  // Runs on a duplicate of `comm`, so that its messages never meet the
  // program's own.
  MpiBackend(MPI_Comm comm, std::chrono::milliseconds timeout);
  ~MpiBackend() override;
  MpiBackend(const MpiBackend&) = delete;
  MpiBackend& operator=(const MpiBackend&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void run(const CollectiveCall& call) override;
  // MPI initialised with MPI_THREAD_SERIALIZED or more (a program that
  // initialised MPI itself may have asked for less).
  bool runs_on_any_thread() const override { return any_thread_; }

  // The end of this rank's Context, a collective of its own: true when
  // every rank ended too. False (and failed) when other ranks call a
  // collective instead (they fail at once, naming this rank) or do not come
  // within the timeout; MPI cannot be finalised then.
  bool finish();
  // The error that failed the backend (a timeout, a rank that left), or "".
  std::string failure() const;
  // Frees the communicator (before MPI_Finalize); a failed backend keeps it.
  void close();

 private:
  // What one rank called: compared field by field across the ranks.
  // Descriptor::collective of the end of a Context (finish()).
  static constexpr int64_t kFinish = 99;
  struct Descriptor {
    static constexpr int kMaxDims = 8;
    int64_t sequence = 0;
    int64_t collective = 0;
    int64_t op = 0;
    int64_t root = 0;
    int64_t dtype = 0;
    int64_t rank = 0;  // of the shape; dims beyond kMaxDims are folded into a hash
    int64_t dims[kMaxDims + 1] = {};
    bool operator==(const Descriptor&) const = default;
  };
  static_assert(sizeof(Descriptor) == 15 * sizeof(int64_t));

  Descriptor describe(const CollectiveCall& call) const;
  std::string describe_text(const Descriptor& d) const;
  void exchange_descriptors(const Descriptor& mine, std::string_view name);
  // The data phase of `call`, once every rank has called it (`mine`).
  void run_collective(const CollectiveCall& call, const Descriptor& mine, std::string_view name);
  // MPI's blocking call of `call` on `count` elements: its code and name.
  std::pair<int, const char*> run_blocking(const CollectiveCall& call, int count);
  // The message of a data phase that outlasts the timeout.
  std::string data_phase_failure(const Descriptor& mine, std::string_view name) const;
  // Polls `requests` until all complete or the deadline passes; false then.
  bool wait_all(std::vector<MPI_Request>& requests,
                std::chrono::steady_clock::time_point deadline) const;
  [[noreturn]] void fail_timeout(std::string_view name, const std::string& what);
  void check(int code, std::string_view name, std::string_view call) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds timeout_;
  int64_t sequence_ = 0;
  bool any_thread_ = false;
  std::string failure_;
  mutable std::mutex mutex_;
  std::string current_;                  // the collective running, for messages
  std::vector<Descriptor> descriptors_;  // the ranks' calls, by rank
  Watchdog watchdog_;                    // the deadline of each data phase
};

}  // namespace ag::distribute
