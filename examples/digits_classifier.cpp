// onelearn digits classifier, the Keras way: build a Sequential, compile, fit with a progress
// bar, evaluate, save.
//
//   ./digits_classifier [DIR]     DIR holds X_train.npy, y_train.npy, X_test.npy, y_test.npy
//                                 (default: the repository's tests/data/digits)
//
// The Keras equivalent:
//   model = keras.Sequential([keras.Input((64,)), layers.Dense(128, activation="relu"),
//                             layers.Dropout(0.1), layers.Dense(10)])
//   model.compile(keras.optimizers.Adam(2e-3),
//                 keras.losses.SparseCategoricalCrossentropy(from_logits=True), ["accuracy"])
//   model.fit(X_train, y_train, epochs=30, batch_size=32, validation_split=0.1)
//   loss, accuracy = model.evaluate(X_test, y_test)
//   model.save_weights("digits.weights.h5")
#include <cstdio>
#include <exception>
#include <string>

#include <onelearn/io/io.hpp>
#include <onelearn/nn/sequential.hpp>

namespace nn = onelearn::nn;
using onelearn::Labels;
using onelearn::Matrix;

int main(int argc, char** argv) try {
  const std::string dir = argc > 1 ? argv[1] : ONELEARN_DIGITS_DATA_DIR;
  auto load_X = [&](const char* name) {  // 8x8 images, pixel values 0..16, scaled to [0, 1]
    return Matrix<float>(onelearn::io::load_npy<Matrix<float>>(dir + "/" + name) / 16.0f);
  };
  const Matrix<float> X_train = load_X("X_train.npy"), X_test = load_X("X_test.npy");
  const auto y_train = onelearn::io::load_npy<Labels>(dir + "/y_train.npy");
  const auto y_test = onelearn::io::load_npy<Labels>(dir + "/y_test.npy");

  nn::Sequential<float> model{nn::Input({64}), nn::Dense(128, "relu"), nn::Dropout{0.1},
                              nn::Dense(10)};
  model.compile(nn::Adam{.learning_rate = 2e-3},
                nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
  std::printf("%s", model.summary().c_str());

  model.fit(X_train, y_train, {.epochs = 30, .batch_size = 32, .seed = 7, .validation_split = 0.1},
            nn::ProgressBar{});

  const auto scores = model.evaluate(X_test, y_test);
  model.save_weights("digits.olw");
  std::printf("test loss %.4f, test accuracy %.4f; weights saved to digits.olw\n",
              scores.at("loss"), scores.at("accuracy"));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "digits_classifier: %s\n", e.what());
  return 1;
}
