#pragma once
/**
 * \file
 * \brief ONNX export of a pipeline::Pipeline.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export.hpp>
 * auto pipe = onelearn::pipeline::make_pipeline(
 *     onelearn::preprocessing::StandardScaler<double>(),
 *     onelearn::linear_model::LogisticRegression<double>());
 * onelearn::onnx::save(pipe.fit(X, y), "pipe.onnx");
 * \endcode
 *
 * ONNX export of a pipeline::Pipeline: one graph, each step's nodes reading the previous
 * step's output ("variable", or "scores" for a KMeans used as a transformer), its values named
 * "<step name>_..."; the model's outputs are the last step's, named as that step alone would
 * name them. Metadata "parameters" lists every "<step>__<param>=value".
 *
 * Every step must be exportable (include the headers of the steps' families, or
 * onnx/export.hpp) and fitted: a step that is not is a not_fitted_error naming it.
 */

#include <cstddef>
#include <string>
#include <utility>

#include "onelearn/onnx/export/core.hpp"
#include "onelearn/pipeline.hpp"

namespace onelearn::onnx {

namespace detail {

/// The output a following step reads: the transform of a transformer.
inline const ExportedValue& transformed_output(const Exported& out) {
  for (const ExportedValue& v : out)
    if (v.role == "variable") return v;
  for (const ExportedValue& v : out)
    if (v.role == "scores") return v;
  return out.front();
}

}  // namespace detail

template <class... Steps>
requires(Exportable<Steps>&&...) Exported
    export_model(GraphBuilder& b, const pipeline::Pipeline<Steps...>& m, const std::string& x) {
  std::string input = x;
  Exported out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          const auto& step = m.template step<I>();
          const std::string& name = m.step_names()[I];
          if constexpr (requires { step.is_fitted(); }) {
            if (!step.is_fitted()) {
              throw not_fitted_error(
                  "onnx::to_proto: expected every pipeline step fitted, found "
                  "step '" +
                  name + "' not fitted; call fit first");
            }
          }
          b.set_scope(name);
          out = export_model(b, step, input);
          input = detail::transformed_output(out).name;
        }(),
        ...);
  }
  (std::index_sequence_for<Steps...>{});
  b.set_scope({});
  return out;
}

}  // namespace onelearn::onnx
