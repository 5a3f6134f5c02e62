// Datasets as arguments of traced functions (ag/data.h): a Dataset reaches
// the graph as its handle, an int64 scalar naming its pipeline in a registry
// of live pipelines, and is traced by its element spec. The graph's host ops
// look each call's pipeline up by its handle; a transformation of an
// argument is a host op that applies it to each call's pipeline.
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "ag/effects.h"
#include "ag/error.h"
#include "core/type_name.h"
#include "data/node.h"

namespace ag::data::detail {

namespace {

class Registry {
 public:
  void add(const NodePtr& node) {
    std::lock_guard lock(mu_);
    nodes_[node->id] = node;
    // Forget the pipelines no dataset holds any more, now and then.
    if (nodes_.size() > 2 * pruned_size_ + 64) {
      std::erase_if(nodes_, [](const auto& entry) { return entry.second.expired(); });
      pruned_size_ = nodes_.size();
    }
  }
  NodePtr find(int64_t handle) {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(uint64_t(handle));
    NodePtr node = it == nodes_.end() ? nullptr : it->second.lock();
    if (!node)
      throw InternalError("ag::data: no live dataset has the handle " + std::to_string(handle) +
                          " a graph was given");
    return node;
  }

 private:
  std::mutex mu_;
  std::unordered_map<uint64_t, std::weak_ptr<const Node>> nodes_;
  size_t pruned_size_ = 0;
};

Registry& registry() {
  static Registry* r = new Registry();  // outlives every dataset of static lifetime
  return *r;
}

}  // namespace

Tensor dataset_handle(const NodePtr& node) {
  registry().add(node);
  return Tensor(int64_t(node->id));
}

NodePtr node_of_handle(int64_t handle) {
  return registry().find(handle);
}

std::string trace_key(const Node& node, const std::type_info& element_type) {
  std::string key = "Dataset<" + ag::detail::type_name(element_type) + ">(";
  for (size_t i = 0; i < node.spec.size(); ++i) key += (i ? ", " : "") + node.spec[i].to_string();
  return key + ")";
}

Tensor derived_handle(const std::vector<Tensor>& inputs, Derive derive) {
  // The pipeline of each thread's latest run, held while the graph's loop
  // pulls from it (a graph runs its host ops on the thread that calls it).
  auto held = std::make_shared<std::pair<std::mutex, std::map<std::thread::id, NodePtr>>>();
  std::vector<Tensor> out = ag::api::host_function(
      [held, derive](const std::vector<Tensor>& handles) -> std::vector<Tensor> {
        std::vector<NodePtr> nodes;
        for (const Tensor& h : handles) nodes.push_back(node_of_handle(h.item<int64_t>()));
        NodePtr node = derive(nodes);
        Tensor handle = dataset_handle(node);
        std::lock_guard lock(held->first);
        held->second[std::this_thread::get_id()] = std::move(node);
        return {handle};
      },
      inputs, {TensorSpec(Shape(), DType::int64)}, "MakeDataset");
  return out[0];
}

void throw_unstaged_iteration() {
  throw FailedPreconditionError(
      "ag::data: a Dataset argument of the function being traced is iterated by a C++ loop; the "
      "trace would hold the first call's elements, and the next dataset of the same element_spec "
      "would reuse it. Mark the function AG_FUNCTION, so that agc stages the loop (or write "
      "ag::for_stmt), or iterate the dataset outside the traced function");
}

}  // namespace ag::data::detail
