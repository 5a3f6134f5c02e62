// ag::distribute::Context: MPI's lifetime and the MPI backend's installation.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "ag/distribute.h"
#include "ag/error.h"
#include "mpi_backend.h"

namespace ag::distribute {
namespace {

std::atomic<bool> context_alive{false};

}  // namespace

struct Context::State {
  ContextOptions options;
  bool owns_mpi = false;  // initialised MPI, so finalises it
  int uncaught_at_start = 0;
  std::shared_ptr<MpiBackend> backend;
  std::shared_ptr<Backend> replaced;  // the backend installed before, put back at the end
};

Context::Context(ContextOptions options) : state_(std::make_unique<State>()) {
  if (context_alive.exchange(true)) {
    throw FailedPreconditionError(
        "ag::distribute::Context: one already exists; use it (a program has one Context)");
  }
  state_->options = options;
  if (options.timeout.count() <= 0) {
    context_alive = false;
    throw InvalidArgumentError("ag::distribute::Context: timeout must be positive, got " +
                               std::to_string(options.timeout.count()) + " ms");
  }
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) {
    context_alive = false;
    throw FailedPreconditionError(
        "ag::distribute::Context: MPI was finalised already; MPI cannot start twice in a process");
  }
  if (!initialized) {
    // Serialized: collectives may come from any thread, one at a time (the
    // backend holds a lock while it runs one).
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    state_->owns_mpi = true;
  }
  state_->uncaught_at_start = std::uncaught_exceptions();
  state_->backend = std::make_shared<MpiBackend>(MPI_COMM_WORLD, options.timeout);
  state_->replaced = set_backend(state_->backend);
}

Context::~Context() {
  set_backend(state_->replaced);
  MpiBackend& backend = *state_->backend;
  // An exception leaving this rank's scope would leave the others waiting
  // for it until their timeout; a collective that timed out cannot complete,
  // and neither can MPI_Finalize. End every rank now instead.
  const bool unwinding = std::uncaught_exceptions() > state_->uncaught_at_start;
  const bool failed_before = !backend.failure().empty();
  if (unwinding || failed_before || !backend.finish()) {
    const std::string failure = backend.failure();
    std::fprintf(stderr, "ag::distribute: rank %d of %d ends the job (MPI_Abort): %s\n",
                 backend.rank(), backend.size(),
                 unwinding ? "an exception is leaving the scope of its Context" : failure.c_str());
    std::fflush(stderr);
    // The ranks told of this one's end fail and end the job themselves,
    // with their own errors; give them the time to.
    if (!unwinding && !failed_before) std::this_thread::sleep_for(state_->options.timeout);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  backend.close();
  state_->backend.reset();
  if (state_->owns_mpi) MPI_Finalize();
  context_alive = false;
}

int Context::rank() const {
  return state_->backend->rank();
}

int Context::size() const {
  return state_->backend->size();
}

const ContextOptions& Context::options() const {
  return state_->options;
}

}  // namespace ag::distribute
