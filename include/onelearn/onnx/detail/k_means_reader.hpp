#pragma once
// Reads back the centres of what onnx/export/cluster.hpp writes for KMeans, float32 or
// float64: the squared distances sum((x - c)^2) as Unsqueeze(x), Sub of the k x p centres, Mul
// by itself and MatMul with ones (onnx/export/core.hpp's export_squared_differences), the
// label an ArgMax over them. GaussianNB's graph starts the same way but weighs the squares
// (a second Mul), which is not a KMeans.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/errors.hpp"

namespace onelearn::onnx::detail {

struct ReadCentres {
  std::vector<double> centres;  ///< k x p, row-major
  std::int64_t k = 0, p = 0;
};

inline ReadCentres read_k_means_centres(const ::onnx::ModelProto& model, std::string_view target) {
  const PlainGraph g(model, target);
  std::vector<ReadCentres> found;
  for (const auto& [sub, square] : g.differences_of_features()) {
    const Tensor* c = g.constant(sub->input(1));
    const auto values = g.reals(sub->input(1));
    if (c == nullptr || c->rank() != 2 || !values) {
      NodeAttributes(*sub).fail("the centres are not a k x p real constant");
    }
    // The differences squared, then summed (MatMul): no weights in between.
    if (square == nullptr || g.consumer(square->output(0), "MatMul") == nullptr) {
      NodeAttributes(*sub).fail(
          "the differences to the centres are not squared and summed (MatMul with ones) "
          "unweighted, as KMeans' squared distances are");
    }
    found.push_back({*values, c->shape()[0], c->shape()[1]});
  }
  if (found.size() != 1 || g.nodes("ArgMax").empty()) {
    g.fail(found.size() > 1 ? std::string("more than one set of centres")
                            : std::string("no squared distances to centres with an ArgMax label "
                                          "(expected the layout onelearn's export writes: "
                                          "onnx/export/cluster.hpp)"));
  }
  if (g.declared_width() > 0 && g.declared_width() != found[0].p) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) + ">: centres of " +
                      std::to_string(found[0].p) + " features, the graph input has " +
                      std::to_string(g.declared_width()));
  }
  return found[0];
}

}  // namespace onelearn::onnx::detail
