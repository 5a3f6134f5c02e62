// Faults under mpirun, one per mode (tests/distribute/CMakeLists.txt checks
// the output and that the run ends):
//   stuck     rank 1 never calls the collective (it sleeps): the others fail
//             after the timeout with an error naming all_reduce and rank 1,
//             and the job ends with MPI_Abort
//   finalize  rank 1 leaves early (destroys its Context): the others fail at
//             once, with an error naming rank 1's end, and the job ends
//   throw     rank 1 throws out of its Context's scope: the job ends at once
//   mismatch  the ranks call collectives with other shapes, dtypes, and in
//             another order: every rank gets an error naming each rank's call,
//             and the job goes on
//   killed    rank 1 is killed (SIGKILL) mid-step, while the ranks train:
//             mpirun ends the others at once
//   exit      rank 1 calls std::exit(0) mid-step, its Context never ending:
//             mpirun ends the others at once
#include <chrono>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ag/ag.h>
#include <ag/distribute.h>

namespace {

using ag::Tensor;
namespace dist = ag::distribute;

constexpr auto kTimeout = std::chrono::seconds(4);

int failures = 0;

void expect_contains(const std::string& message, const std::string& part) {
  if (message.find(part) != std::string::npos) return;
  std::printf("FAIL on rank %d: the error lacks \"%s\": %s\n", dist::rank(), part.c_str(),
              message.c_str());
  ++failures;
}

// The error `f` throws, or "" (a failure) when it throws none.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  std::printf("FAIL on rank %d: no error\n", dist::rank());
  ++failures;
  return "";
}

// Every rank but 1 waits for it in an all_reduce.
int missing_rank(bool stuck) {
  if (dist::rank() == 1) {
    if (stuck) std::this_thread::sleep_for(std::chrono::seconds(60));
    return 0;  // leaves: its Context ends
  }
  const std::string error =
      error_of<ag::FailedPreconditionError>([] { dist::all_reduce(ag::constant({1.0f, 2.0f})); });
  if (stuck) {
    expect_contains(error, "all_reduce: rank " + std::to_string(dist::rank()) + " of " +
                               std::to_string(dist::size()) +
                               " waited 4 s at all_reduce(sum) of "
                               "float32 [2] (collective #1) for rank 1, which did not call it");
  } else {
    // Told at once by rank 1's Context as it ends.
    expect_contains(error, "rank 1 called the end of its ag::distribute::Context (collective #1)");
    expect_contains(error, "a rank has left, so the job cannot go on");
  }
  // The context has failed: later collectives say so at once.
  expect_contains(
      error_of<ag::FailedPreconditionError>([] { dist::broadcast(ag::constant({1.0f})); }),
      "broadcast: the distribute context failed earlier");
  std::printf("rank %d caught the expected error: %s\n", dist::rank(), error.c_str());
  std::fflush(stdout);
  return failures;
}

int throwing_rank() {
  if (dist::rank() == 1) throw std::runtime_error("rank 1 gives up");
  dist::all_reduce(ag::constant({1.0f}));
  std::printf("FAIL: rank %d finished an all_reduce without rank 1\n", dist::rank());
  return 1;
}

// "rank 0 called X; rank 1 called Y" for two ranks; with three, rank 2
// calls what rank 0 does.
std::string calls(const std::string& even, const std::string& odd) {
  if (dist::size() == 2) return "rank 0 called " + even + "; rank 1 called " + odd;
  return "ranks 0, 2 called " + even + "; rank 1 called " + odd;
}

int mismatches() {
  const bool odd = dist::rank() == 1;
  std::string error =
      error_of<ag::InvalidArgumentError>([&] { dist::all_reduce(ag::zeros({odd ? 3 : 2, 2})); });
  expect_contains(error, "all_reduce: the ranks disagree: " +
                             calls("all_reduce(sum) of float32 [2,2] (collective #1)",
                                   "all_reduce(sum) of float32 [3,2] (collective #1)"));
  expect_contains(error, "Every rank must call the same collectives in the same order");
  error = error_of<ag::InvalidArgumentError>(
      [&] { dist::all_gather(ag::zeros({2}, odd ? ag::float64 : ag::float32)); });
  expect_contains(error, calls("all_gather of float32 [2] (collective #2)",
                               "all_gather of float64 [2] (collective #2)"));
  // Rank 1 calls broadcast first, the others all_reduce.
  auto first = [&] { odd ? dist::broadcast(ag::ones({2}), 0) : dist::all_reduce(ag::ones({2})); };
  error = error_of<ag::InvalidArgumentError>(first);
  expect_contains(error, calls("all_reduce(sum) of float32 [2] (collective #3)",
                               "broadcast(root 0) of float32 [2] (collective #3)"));
  // The job goes on.
  const Tensor sum = dist::all_reduce(ag::constant({1.0f, 2.0f}));
  const std::vector<float> expected = {float(dist::size()), 2.0f * float(dist::size())};
  if (sum.to_vector<float>() != expected) {
    std::printf("FAIL on rank %d: the all_reduce after the errors is wrong\n", dist::rank());
    ++failures;
  }
  if (failures == 0) std::printf("rank %d: every mismatch was an error\n", dist::rank());
  return failures;
}

// Data-parallel steps (a matmul, then an all_reduce of 1.8 M floats) for
// up to a minute. Rank 1 dies during one: killed by SIGKILL from a second
// thread, at no particular point of the step, or calling std::exit(0)
// between the step's matmul and its all_reduce (status 0, its Context never
// ended).
int dying_rank(bool killed) {
  std::thread killer;
  if (killed && dist::rank() == 1) {
    killer = std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      std::printf("rank 1 is killed (SIGKILL) mid-step\n");
      std::fflush(stdout);
      std::raise(SIGKILL);
    });
  }
  const Tensor weights = ag::ones({1024, 1792});
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; std::chrono::steady_clock::now() - start < std::chrono::seconds(60); ++step) {
    const Tensor activations = ag::matmul(ag::ones({8, 1024}), weights) + float(step);
    if (!killed && dist::rank() == 1 && step == 20) {
      std::printf("rank 1 calls std::exit(0) mid-step\n");
      std::fflush(stdout);
      std::exit(0);
    }
    dist::all_reduce(activations);
  }
  std::printf("FAIL: rank %d trained for a minute after rank 1 died\n", dist::rank());
  if (killer.joinable()) killer.join();
  return 1;
}

int run(const std::string& mode) {
  dist::Context context({.timeout = kTimeout});
  if (mode == "stuck" || mode == "finalize") return missing_rank(mode == "stuck");
  if (mode == "throw") return throwing_rank();
  if (mode == "mismatch") return mismatches();
  if (mode == "killed" || mode == "exit") return dying_rank(mode == "killed");
  std::printf("unknown mode %s: use stuck, finalize, throw, mismatch, killed or exit\n",
              mode.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("usage: %s stuck|finalize|throw|mismatch|killed|exit\n", argv[0]);
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    std::printf("rank caught after its Context ended: %s\n", e.what());
    return 3;
  }
}
