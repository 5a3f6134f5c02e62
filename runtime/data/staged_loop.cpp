// A staged loop over a dataset (ag::for_stmt over ag::data::Dataset while
// tracing), as TensorFlow stages `for x in dataset` in a tf.function: a host
// op starts a pass when the graph runs, and a While pulls one element per
// iteration through another host op (IteratorGetNext). The pipeline runs
// outside the graph, so the graph's size does not depend on the data.
#include <map>
#include <mutex>
#include <thread>

#include "ag/effects.h"
#include "data/node.h"

namespace ag::data::detail {

namespace {

// The pass of the current run of the graph, per thread: a graph runs its
// host ops on the thread that calls it, and two threads may run it at once
// over two datasets of one spec.
class IteratorSlot {
 public:
  void start(const NodePtr& pipeline) {
    std::optional<FlatIterator>& pass = of_this_thread();
    pass.reset();  // joins a prefetch thread of the previous run first
    pass.emplace(pipeline);
  }
  std::optional<Flat> next() { return of_this_thread()->next(); }

 private:
  std::optional<FlatIterator>& of_this_thread() {
    std::lock_guard lock(mu_);
    return passes_[std::this_thread::get_id()];  // std::map: the entry stays where it is
  }
  std::mutex mu_;
  std::map<std::thread::id, std::optional<FlatIterator>> passes_;
};

// An element as the loop's host op returns it: a `more` flag, then the
// components; at the end, placeholders of the spec (None dims as 0).
std::vector<Tensor> pull(IteratorSlot& slot, const Specs& spec) {
  std::optional<Flat> e = slot.next();
  std::vector<Tensor> out{Tensor(e.has_value())};
  if (!e) {
    for (const TensorSpec& s : spec) {
      Shape shape = s.shape;
      for (int i = 0; i < shape.rank(); ++i)
        if (shape[i] == kUnknownDim) shape.set_dim(i, 0);
      out.push_back(zeros(shape, s.dtype));
    }
    return out;
  }
  // The sources check their elements, so each fits the spec.
  out.insert(out.end(), e->begin(), e->end());
  return out;
}

}  // namespace

void stage_dataset_loop(const NodePtr& node, const Tensor& handle,
                        ag::detail::FnRef<Tensor()> extra_test, bool has_extra_test,
                        ag::detail::FnRef<void(const Flat&)> body, ag::detail::CollectLeaves leaves,
                        CallSite site) {
  auto slot = std::make_shared<IteratorSlot>();
  // A dataset argument (a placeholder handle) is each call's; any other
  // dataset is the graph's own, held by it.
  NodePtr own = handle.is_symbolic() ? nullptr : node;
  ag::api::host_function(
      [slot, own](const std::vector<Tensor>& in) -> std::vector<Tensor> {
        slot->start(own ? own : node_of_handle(in[0].item<int64_t>()));
        return {};
      },
      own ? std::vector<Tensor>{} : std::vector<Tensor>{handle}, {}, "MakeIterator", site);

  Specs out_specs{TensorSpec(Shape(), DType::bool_)};
  out_specs.insert(out_specs.end(), node->spec.begin(), node->spec.end());
  Tensor more;
  std::vector<Tensor> element;
  auto get_next = [&] {
    std::vector<Tensor> r = ag::api::host_function(
        [slot, spec = node->spec](const std::vector<Tensor>&) { return pull(*slot, spec); }, {},
        out_specs, "IteratorGetNext", site);
    more = r[0];
    element.assign(r.begin() + 1, r.end());
  };
  get_next();

  auto test = [&]() -> Tensor {
    return has_extra_test ? logical_and(more, extra_test(), site) : more;
  };
  auto step = [&] {
    body(element);
    if (has_extra_test) {
      // After a break, no further element is pulled, as in a C++ loop.
      ag::api::if_stmt(
          extra_test(), get_next, [] {},
          ag::api::state({"agc_dataset_more", "agc_dataset_element"}, more, element));
    } else {
      get_next();
    }
  };
  auto collect = [&] {
    std::vector<ag::detail::Leaf> out = leaves();
    out.push_back({&more, "agc_dataset_more", false});
    for (size_t i = 0; i < element.size(); ++i)
      out.push_back({&element[i], "agc_dataset_element_" + std::to_string(i), false});
    return out;
  };
  ag::detail::stage_while(test, step, collect, {});
}

}  // namespace ag::data::detail
