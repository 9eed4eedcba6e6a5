#pragma once
// Keras's names and summary table for nn::Sequential: layer names as Keras derives them from
// the class ("LeakyReLU" -> "leaky_relu", numbered from the second of a kind), and the table
// Sequential::summary() returns (layer name and type, output shape, parameter count, totals).

#include <cstddef>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn::detail {

/// "LeakyReLU" -> "leaky_relu", "Dense" -> "dense": an underscore where a lower-case letter is
/// followed by an upper-case one that starts a lower-case run.
inline std::string snake_case(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool upper = c >= 'A' && c <= 'Z';
    if (upper && i > 0 && name[i - 1] >= 'a' && name[i - 1] <= 'z' && i + 1 < name.size() &&
        name[i + 1] >= 'a' && name[i + 1] <= 'z') {
      out += '_';
    }
    out += upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

/// "1,234,567".
inline std::string thousands(index_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

inline std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

/// The summary table of `layers` for `input_shape`; `shapes[i]` is layer i's output shape.
/// A built model counts its layers' actual buffers (exact for custom layers too) and their
/// state (moving statistics) as non-trainable parameters, as Keras; an unbuilt one counts from
/// the shapes.
template <class T>
std::string summary_table(const std::vector<std::unique_ptr<Layer<T>>>& layers,
                          const Shape& input_shape, const std::vector<Shape>& shapes, bool built) {
  constexpr std::size_t w1 = 29, w2 = 26, w3 = 10;  // Keras's 65 columns
  const std::string rule(w1 + w2 + w3, '_');
  const std::string thick(w1 + w2 + w3, '=');
  std::ostringstream os;
  os << "Model: \"sequential\"\n"
     << rule << '\n'
     << pad(" Layer (type)", w1) << pad("Output Shape", w2) << "Param #\n"
     << thick << '\n';
  index_t total = 0;
  index_t non_trainable = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Shape in = i == 0 ? input_shape : shapes[i - 1];
    index_t count = built ? layers[i]->count_params() : layers[i]->parameter_count(in);
    if (built) {
      index_t state = 0;
      for (const auto& b : layers[i]->state()) state += static_cast<index_t>(b.size());
      count += state;
      non_trainable += state;
    }
    total += count;
    os << pad(" " + layers[i]->name() + " (" + std::string(layers[i]->class_name()) + ")", w1)
       << pad(shapes[i].to_string(true), w2) << count << '\n';
  }
  os << thick << '\n'
     << "Total params: " << thousands(total) << '\n'
     << "Trainable params: " << thousands(total - non_trainable) << '\n'
     << "Non-trainable params: " << thousands(non_trainable) << '\n'
     << rule << '\n';
  return os.str();
}

}  // namespace onelearn::nn::detail
