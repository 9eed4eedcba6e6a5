// The file-reading test helpers of support.hpp, compiled once for every test program (the
// library onelearn_test_helpers, tests/CMakeLists.txt) instead of in each test file.
#include "support.hpp"

#include <fstream>

namespace onelearn::test {

std::string data_path(std::string_view relative) {
  return std::string(ONELEARN_TEST_DATA_DIR) + "/" + std::string(relative);
}

nlohmann::json sklearn_reference(std::string_view dataset) {
  std::ifstream in(data_path(std::string(dataset) + "/sklearn_reference.json"));
  REQUIRE_MESSAGE(in.good(), "missing reference file for ", dataset);
  return nlohmann::json::parse(in);
}

template <class T, class Y>
Split<T, Y> load_split(std::string_view dataset) {
  const std::string dir = std::string(dataset) + "/";
  return {io::load_npy<Matrix<T>>(data_path(dir + "X_train.npy")),
          io::load_npy<Matrix<T>>(data_path(dir + "X_test.npy")),
          io::load_npy<Vector<Y>>(data_path(dir + "y_train.npy")),
          io::load_npy<Vector<Y>>(data_path(dir + "y_test.npy"))};
}

ONELEARN_TEST_LOAD_SPLITS()

}  // namespace onelearn::test

namespace onelearn::io {
ONELEARN_TEST_LOAD_NPY_TYPES()
}  // namespace onelearn::io
