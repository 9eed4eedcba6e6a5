#pragma once
/**
 * \file
 * \brief The errors of onelearn's ONNX importer, each naming the node, the op and the problem.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/errors.hpp>
 * #include <onelearn/onnx/graph.hpp>
 * try {
 *   onelearn::onnx::Graph g = onelearn::onnx::load("model.onnx");
 *   std::cout << g.inputs().size() << " inputs\n";
 * } catch (const onelearn::onnx::unsupported_error& e) {   // what the executor lacks: skip
 *   if (e.kind() == onelearn::onnx::unsupported_kind::data_type) {
 *     std::cout << "skipped: no " << e.detail() << '\n';   // "float16"
 *   }
 * } catch (const onelearn::onnx::format_error& e) {        // not an ONNX model
 *   std::cerr << e.what() << '\n';
 * } catch (const std::exception& e) {                      // graph_error, shape_error, ...
 *   std::cerr << e.what() << '\n';
 * }
 * \endcode
 *
 * The errors of onelearn's ONNX importer. Each one derives from an onelearn error type, so
 * `catch (const onelearn::error&)` still catches everything, and names the node, the operator
 * and the problem:
 *
 * \code{.unparsed}
 * onnx: node 'conv1' (Conv): unsupported data type float16
 * onnx: node 'n3' (Foo): unsupported operator Foo (domain ai.onnx)
 * model.onnx: truncated or malformed ModelProto (protobuf parse failed after 1234 bytes)
 * \endcode
 *
 * - `format_error`: a file that is not a valid ONNX model or tensor (an `onelearn::io_error`);
 * - `unsupported_error`: an operator, opset, data type or attribute value the executor lacks
 *   (an `onelearn::invalid_argument`); `kind()` and `detail()` say which, so a conformance
 *   runner can skip instead of fail;
 * - `graph_error`: a graph that cannot run: an input that nothing provides (a missing
 *   initializer), a cycle, a bad attribute (an `onelearn::invalid_argument`);
 * - `onelearn::shape_error`: shapes that disagree: a wrong input shape, operands that do not
 *   broadcast.
 */

#include <string>
#include <utility>

#include "onelearn/core/errors.hpp"

namespace onelearn::onnx {

class format_error : public io_error {
 public:
  using io_error::io_error;
};

/// op, data_type, opset, attribute: what the executor lacks. random: the node would draw random
/// numbers (Dropout in training mode, RandomUniform, Bernoulli...), which an executor that
/// promises reproducible results does not do.
enum class unsupported_kind { op, data_type, opset, attribute, random };

class unsupported_error : public invalid_argument {
 public:
  /// `detail` is the bare name of what is missing ("Foo", "float16"), `message` the full text.
  unsupported_error(unsupported_kind kind, std::string detail, const std::string& message)
      : invalid_argument(message), kind_(kind), detail_(std::move(detail)) {}
  [[nodiscard]] unsupported_kind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }

 private:
  unsupported_kind kind_;
  std::string detail_;
};

class graph_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

}  // namespace onelearn::onnx
