#include <ag/ag.h>

#include <coroutine>

struct Task {
  struct promise_type {
    Task get_return_object() { return {}; }
    std::suspend_never initial_suspend() { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(ag::Tensor) { return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
};

AG_FUNCTION Task produce(ag::Tensor x) {
  while (x > 0) {
    co_yield x;
    x = x - 1;
  }
}
