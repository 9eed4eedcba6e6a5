// ONNX: export a fitted pipeline, load it back with onelearn's executor, and check that it
// predicts what the pipeline predicts (onnxruntime or any ONNX runtime reads the same file).
// Usage: onnx_roundtrip [diabetes.csv]
#include <onelearn/io/io.hpp>
#include <onelearn/linear_model/ridge.hpp>
#include <onelearn/onnx/export.hpp>
#include <onelearn/onnx/graph.hpp>
#include <onelearn/onnx/load.hpp>
#include <onelearn/pipeline.hpp>
#include <onelearn/preprocessing/standard_scaler.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "diabetes.csv";
  const auto data = onelearn::io::load_csv<double>(path, {.label_column = "progression"});
  auto pipe = onelearn::pipeline::make_pipeline(onelearn::preprocessing::StandardScaler<double>(),
                                                onelearn::linear_model::Ridge<double>());
  pipe.fit(data.features(), data.targets());

  const std::filesystem::path file = std::filesystem::temp_directory_path() / "ridge.onnx";
  onelearn::onnx::save(pipe, file);  // input "X" (float, N x 10), output "variable" (N x 1)
  const onelearn::onnx::Graph graph = onelearn::onnx::load(file);

  const onelearn::Matrix<double> X = data.features().topRows(5);
  const onelearn::Matrix<float> Xf = X.cast<float>();
  const onelearn::onnx::Tensor input({5, Xf.cols()},
                                     std::vector<float>(Xf.data(), Xf.data() + Xf.size()));
  const std::vector<onelearn::onnx::Tensor> outputs = graph.run({input});
  const onelearn::Vector<double> expected = pipe.predict(X);
  double worst = 0;
  for (int i = 0; i < 5; ++i) {
    worst = std::max(worst, std::abs(outputs[0].data<float>()[i] - expected(i)));
  }
  std::filesystem::remove(file);
  std::cout << "ONNX round trip: largest difference " << worst << " (float32 inside)\n";
  return worst < 1e-2 ? 0 : 1;
}
