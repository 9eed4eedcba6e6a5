// Training infrastructure of nn::Sequential: weights files, checkpoints and exact resume,
// ProgressBar, CSVLogger, LearningRateScheduler, validation_data, and nn::KerasClassifier.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "onelearn/core/concepts.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/model_selection/cross_validate.hpp"
#include "onelearn/nn/classifier.hpp"
#include "onelearn/nn/detail/data_fingerprint.hpp"
#include "onelearn/nn/layers/batch_normalization.hpp"
#include "onelearn/nn/sequential.hpp"
#include "nn_support.hpp"
#include "support.hpp"
#include "weights_support.hpp"

using namespace onelearn;
namespace fs = std::filesystem;

namespace {

/// A fresh directory for one test's files, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() /
           ("onelearn_nn_training_" + name + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string operator/(const std::string& file) const {
    return (path / file).string();
  }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
Matrix<T> random_matrix(index_t rows, index_t cols, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix<T> X(rows, cols);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = static_cast<T>(normal(engine));
  return X;
}

/// Labels 0..2 that depend on X (so training has something to learn).
template <class T>
Labels labels_of(const Matrix<T>& X) {
  Labels y(X.rows());
  for (index_t i = 0; i < X.rows(); ++i) {
    const double s = static_cast<double>(X(i, 0)) + 0.5 * static_cast<double>(X(i, 1));
    y(i) = s < -0.5 ? 0 : (s < 0.5 ? 1 : 2);
  }
  return y;
}

template <class T>
nn::Sequential<T> small_model(index_t hidden = 6) {
  return nn::Sequential<T>{nn::Input({8}), nn::Dense(hidden, "relu"), nn::Dropout{0.2},
                           nn::Dense(3)};
}

template <class T>
void compile_small(nn::Sequential<T>& model) {
  model.compile(nn::Adam{.learning_rate = 1e-2},
                nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
}

/// A layer with non-trainable state (as BatchNormalization's moving statistics): adds its
/// state vector to every row. Used to check that state() is saved, restored and fingerprinted.
template <class T>
class AddState final : public nn::Layer<T> {
 public:
  [[nodiscard]] std::string_view class_name() const override { return "AddState"; }
  [[nodiscard]] nn::Shape output_shape(const nn::Shape& in) const override { return in; }
  void build(const nn::Shape& in, std::uint64_t /*seed*/) override {
    shift_.assign(static_cast<std::size_t>(in.size()), T(0));
  }
  nn::TensorView<const T> forward(nn::TensorView<const T> x, bool /*training*/) override {
    y_.reshape(x.shape);
    auto Y = y_.matrix();
    Y = x.matrix();
    for (index_t r = 0; r < Y.rows(); ++r) {
      for (index_t c = 0; c < Y.cols(); ++c) Y(r, c) += shift_[static_cast<std::size_t>(c)];
    }
    return y_.view();
  }
  nn::TensorView<const T> backward(nn::TensorView<const T> dy, bool need) override {
    if (!need) return {};
    return dy;
  }
  [[nodiscard]] std::vector<std::span<T>> state() override { return {std::span<T>(shift_)}; }

 private:
  std::vector<T> shift_;
  nn::Tensor<T> y_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// save_weights / load_weights

TEST_CASE_TEMPLATE("nn weights file: a round trip gives identical predictions", T, float, double) {
  TempDir dir("roundtrip");
  const Matrix<T> X = random_matrix<T>(60, 8, 1);
  const Labels y = labels_of(X);
  auto model = small_model<T>();
  compile_small(model);
  model.fit(X, y, {.epochs = 3, .batch_size = 16, .seed = 5});
  const std::string path = dir / "w.olw";
  model.save_weights(path);
  // Nothing but the file is left in the directory (the temporary was renamed).
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}) == 1);

  SUBCASE("into a fresh, unbuilt model") {
    auto fresh = small_model<T>();
    CHECK_FALSE(fresh.is_built());
    fresh.load_weights(path);
    CHECK(fresh.is_built());
    CHECK(fresh.get_weights() == model.get_weights());
    CHECK((fresh.predict(X) == model.predict(X)));
  }
  SUBCASE("into a model built with other weights") {
    auto other = small_model<T>();
    other.build(nn::Shape{8}, 99);
    CHECK(other.get_weights() != model.get_weights());
    other.load_weights(path);
    CHECK((other.predict(X) == model.predict(X)));
  }
  SUBCASE("without an Input layer: built from the file's input shape") {
    nn::Sequential<T> bare{nn::Dense(6, "relu"), nn::Dropout{0.2}, nn::Dense(3)};
    bare.load_weights(path);
    CHECK(bare.input_shape() == nn::Shape{8});
    CHECK((bare.predict(X) == model.predict(X)));
  }
  SUBCASE("layer state (Layer::state) is saved and restored") {
    nn::Sequential<T> with_state{nn::Input({8}), AddState<T>{}, nn::Dense(3)};
    with_state.build(nn::Shape{8}, 1);
    auto s = with_state.layer(0).state();
    REQUIRE(s.size() == 1);
    for (std::size_t i = 0; i < s[0].size(); ++i) s[0][i] = static_cast<T>(0.25 * double(i));
    with_state.save_weights(dir / "state.olw");
    nn::Sequential<T> copy{nn::Input({8}), AddState<T>{}, nn::Dense(3)};
    copy.load_weights(dir / "state.olw");
    const auto restored = copy.layer(0).state();
    CHECK(std::vector<T>(restored[0].begin(), restored[0].end()) ==
          std::vector<T>(s[0].begin(), s[0].end()));
    CHECK((copy.predict(X) == with_state.predict(X)));
    // Keras counts layer state as non-trainable parameters: 8 here, beside Dense's 27.
    const std::string summary = copy.summary();
    CHECK(summary.find("Total params: 35\n") != std::string::npos);
    CHECK(summary.find("Trainable params: 27\n") != std::string::npos);
    CHECK(summary.find("Non-trainable params: 8\n") != std::string::npos);
    // The state's size is part of the architecture: a model without it is refused.
    nn::Sequential<T> no_state{nn::Input({8}), nn::Flatten{}, nn::Dense(3)};
    CHECK_THROWS_AS(no_state.load_weights(dir / "state.olw"), shape_error);
  }
}

TEST_CASE("nn weights file: every bad file is a typed error that says what is wrong") {
  TempDir dir("errors");
  const Matrix<float> X = random_matrix<float>(40, 8, 2);
  const Labels y = labels_of(X);
  auto model = small_model<float>();
  compile_small(model);
  model.fit(X, y, {.epochs = 1, .seed = 1});
  const std::string good = dir / "good.olw";
  model.save_weights(good);
  const std::string bytes = read_bytes(good);
  const std::string bad = dir / "bad.olw";
  auto fresh = small_model<float>();

  auto message_of = [&](const std::string& path) {
    try {
      fresh.load_weights(path);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto contains = [](const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
  };

  SUBCASE("missing file") { CHECK_THROWS_AS(fresh.load_weights(dir / "missing.olw"), io_error); }
  SUBCASE("not a onelearn file") {
    write_bytes(bad, "hello, world: certainly not a weights file");
    CHECK_THROWS_AS(fresh.load_weights(bad), io_error);
    CHECK(contains(message_of(bad), "not a onelearn file"));
  }
  SUBCASE("a checkpoint given to load_weights, and the reverse") {
    model.save_checkpoint(dir / "c.olc");
    CHECK_THROWS_AS(fresh.load_weights(dir / "c.olc"), io_error);
    CHECK(contains(message_of(dir / "c.olc"), "load_checkpoint"));
    CHECK_THROWS_AS(fresh.load_checkpoint(good), io_error);
  }
  SUBCASE("another format version") {
    std::string b = bytes;
    b[8] = 99;  // the u32 version follows the 8-byte magic
    write_bytes(bad, b);
    CHECK_THROWS_AS(fresh.load_weights(bad), io_error);
    CHECK(contains(message_of(bad), "found version 99"));
  }
  SUBCASE("truncated") {
    write_bytes(bad, bytes.substr(0, bytes.size() - 17));
    CHECK_THROWS_AS(fresh.load_weights(bad), io_error);
    CHECK(contains(message_of(bad), "truncated"));
    write_bytes(bad, bytes.substr(0, 12));
    CHECK(contains(message_of(bad), "truncated"));
  }
  SUBCASE("checksum mismatch") {
    std::string b = bytes;
    b[b.size() / 2] = static_cast<char>(b[b.size() / 2] ^ 0x10);
    write_bytes(bad, b);
    CHECK_THROWS_AS(fresh.load_weights(bad), io_error);
    CHECK(contains(message_of(bad), "CRC-32"));
    CHECK_FALSE(fresh.is_built());  // nothing was changed
  }
  SUBCASE("another scalar type") {
    auto as_double = small_model<double>();
    CHECK_THROWS_AS(as_double.load_weights(good), io_error);
    try {
      as_double.load_weights(good);
    } catch (const io_error& e) {
      CHECK(contains(e.what(), "expected float64"));
      CHECK(contains(e.what(), "found float32"));
    }
  }
  SUBCASE("another architecture: the first difference is named") {
    nn::Sequential<float> wider{nn::Input({8}), nn::Dense(7, "relu"), nn::Dropout{0.2},
                                nn::Dense(3)};
    CHECK_THROWS_AS(wider.load_weights(good), shape_error);
    std::string m;
    try {
      wider.load_weights(good);
    } catch (const shape_error& e) {
      m = e.what();
    }
    CHECK(contains(m, "layer 0 differs"));
    CHECK(contains(m, "expected Dense with output shape (7)"));
    CHECK(contains(m, "found Dense with output shape (6) and parameter buffers [48, 6]"));

    nn::Sequential<float> other_class{nn::Input({8}), nn::Dense(6, "relu"), nn::ReLU{},
                                      nn::Dense(3)};
    try {
      other_class.load_weights(good);
      FAIL("expected a shape_error");
    } catch (const shape_error& e) {
      CHECK(contains(e.what(), "layer 1 differs: expected ReLU"));
      CHECK(contains(e.what(), "found Dropout"));
    }
    nn::Sequential<float> deeper{nn::Input({8}), nn::Dense(6, "relu"), nn::Dropout{0.2},
                                 nn::Dense(3), nn::Dense(3)};
    try {
      deeper.load_weights(good);
      FAIL("expected a shape_error");
    } catch (const shape_error& e) {
      CHECK(contains(e.what(), "expected 4 layers (this model), found 3"));
    }
    nn::Sequential<float> other_input{nn::Input({9}), nn::Dense(6, "relu"), nn::Dropout{0.2},
                                      nn::Dense(3)};
    CHECK_THROWS_AS(other_input.load_weights(good), shape_error);
  }
  SUBCASE("saving an unbuilt model, and to a directory that does not exist") {
    CHECK_THROWS_AS(fresh.save_weights(dir / "x.olw"), not_fitted_error);
    CHECK_THROWS_AS(model.save_weights(dir / "no/such/dir/x.olw"), io_error);
  }
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

namespace {

nn::Sequential<float> digits_mlp() {
  return nn::Sequential<float>{nn::Input({64}), nn::Dense(32, "relu"), nn::Dropout{0.2},
                               nn::Dense(10)};
}

void compile_scheduled_adam(nn::Sequential<float>& model) {
  model.compile(nn::Adam{.learning_rate = nn::ExponentialDecay{.initial_learning_rate = 3e-3,
                                                               .decay_steps = 40,
                                                               .decay_rate = 0.8}},
                nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
}

}  // namespace

TEST_CASE("nn checkpoint: a checkpoint of the first fingerprint scheme resumes, and checks its rows") {
  // tests/data/checkpoints/fingerprint_v1.olc was written by onelearn before 2026-11-29 (one
  // chain of mixes column by column): 2 epochs of this network on these rows, batch 8, seed 3.
  // Its fingerprint is checked in its own scheme; new checkpoints record scheme 2.
  const test::FingerprintV1Rows rows = test::fingerprint_v1_rows();
  const Matrix<float>& X = rows.X;
  const Labels& y = rows.y;
  const auto network = [] {
    nn::Sequential<float> model{nn::Input({3}), nn::Dense(8, "relu"), nn::Dense(3)};
    model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    return model;
  };
  const std::string old_file = test::data_path("checkpoints/fingerprint_v1.olc");
  const nn::FitOptions resume{.epochs = 4, .batch_size = 8, .seed = 3, .resume_from = old_file};

  auto resumed = network();
  resumed.fit(X, y, resume);
  CHECK(resumed.fit_params().fingerprint_scheme == 1);
  CHECK(resumed.fit_params().data_fingerprint ==
        nn::detail::training_fingerprint(X, y, X.rows(), 1));
  CHECK(resumed.history().epoch.size() == 4);

  Matrix<float> other = X;
  other(39, 2) += 0.25F;
  auto refused = network();
  CHECK_THROWS_WITH_AS(refused.fit(other, y, resume), doctest::Contains("other rows of the same shape"),
                       invalid_argument);

  // A new fit records scheme 2, whose hash differs from scheme 1's and sees every value.
  auto fresh = network();
  fresh.fit(X, y, nn::FitOptions{.epochs = 1, .batch_size = 8, .seed = 3});
  CHECK(fresh.fit_params().fingerprint_scheme == 2);
  CHECK(fresh.fit_params().data_fingerprint == nn::detail::training_fingerprint(X, y, X.rows()));
  CHECK(nn::detail::training_fingerprint(X, y, X.rows(), 2) !=
        nn::detail::training_fingerprint(X, y, X.rows(), 1));
  for (index_t i = 0; i < X.rows(); i += 13) {
    for (index_t j = 0; j < X.cols(); ++j) {
      Matrix<float> changed = X;
      changed(i, j) = -changed(i, j) + 1.0F;
      CHECK(nn::detail::training_fingerprint(changed, y, X.rows()) !=
            nn::detail::training_fingerprint(X, y, X.rows()));
    }
  }
  Labels relabelled = y;
  relabelled(17) = (relabelled(17) + 1) % 3;
  CHECK(nn::detail::training_fingerprint(X, relabelled, X.rows()) !=
        nn::detail::training_fingerprint(X, y, X.rows()));
}

TEST_CASE("nn checkpoint: 10 epochs straight == 5 epochs, checkpoint, 5 more in a fresh model") {
  const test::ScaledDigits& d = test::scaled_digits();
  TempDir dir("resume");
  const std::string path = dir / "run.olc";
  const std::uint64_t seed = 11;
  CAPTURE(seed);
  const nn::FitOptions options{
      .epochs = 10, .batch_size = 64, .shuffle = true, .seed = seed, .validation_split = 0.1};

  SUBCASE("Adam with a learning-rate schedule, Dropout, shuffling") {
    auto straight = digits_mlp();
    compile_scheduled_adam(straight);
    const nn::History full = straight.fit(d.X_train, d.y_train, options);

    auto first = digits_mlp();
    compile_scheduled_adam(first);
    nn::FitOptions five = options;
    five.epochs = 5;
    first.fit(d.X_train, d.y_train, five, nn::ModelCheckpoint(path));
    CHECK(first.get_weights() != straight.get_weights());

    auto resumed = digits_mlp();  // a fresh model, compiled the same way
    compile_scheduled_adam(resumed);
    nn::FitOptions rest = options;
    rest.resume_from = path;
    const nn::History history = resumed.fit(d.X_train, d.y_train, rest);
    CHECK(resumed.get_weights() == straight.get_weights());  // bit for bit
    CHECK(history == full);
    CHECK(history.epoch.size() == 10);
    CHECK(resumed.optimizer().iterations() == straight.optimizer().iterations());
    CHECK((resumed.predict(d.X_test) == straight.predict(d.X_test)));

    // Without the checkpoint's optimizer and RNG state the same weights do not continue the
    // same run (the test above could fail).
    auto weights_only = digits_mlp();
    compile_scheduled_adam(weights_only);
    weights_only.build(nn::Shape{64}, seed);
    weights_only.set_weights(first.get_weights());
    nn::FitOptions plain = options;
    plain.epochs = 5;
    weights_only.fit(d.X_train, d.y_train, plain);
    CHECK(weights_only.get_weights() != straight.get_weights());

    // A resume with other settings is refused instead of silently changing the run.
    auto wrong = digits_mlp();
    compile_scheduled_adam(wrong);
    nn::FitOptions other_seed = rest;
    other_seed.seed = seed + 1;
    CHECK_THROWS_AS(wrong.fit(d.X_train, d.y_train, other_seed), invalid_argument);
    auto sgd = digits_mlp();
    sgd.compile(nn::SGD{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    CHECK_THROWS_AS(sgd.fit(d.X_train, d.y_train, rest), invalid_argument);
    auto constant = digits_mlp();  // Adam, but without the schedule
    constant.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    CHECK_THROWS_AS(constant.fit(d.X_train, d.y_train, rest), invalid_argument);
    auto built_other = digits_mlp();
    compile_scheduled_adam(built_other);
    built_other.build(nn::Shape{64}, seed + 5);
    CHECK_THROWS_AS(built_other.fit(d.X_train, d.y_train, rest), invalid_argument);
    auto uncompiled = digits_mlp();
    CHECK_THROWS_AS(uncompiled.load_checkpoint(path), not_fitted_error);

    // Other rows of the same shape: refused (the checkpoint records their fingerprint).
    Matrix<float> other_rows = d.X_train;
    other_rows(0, 0) += 1.0F;
    auto other_data = digits_mlp();
    compile_scheduled_adam(other_data);
    CHECK_THROWS_WITH_AS(other_data.fit(other_rows, d.y_train, rest),
                         doctest::Contains("other rows of the same shape"), invalid_argument);
    Labels other_labels = d.y_train;
    other_labels(1) = (other_labels(1) + 1) % 10;
    auto other_y = digits_mlp();
    compile_scheduled_adam(other_y);
    CHECK_THROWS_AS(other_y.fit(d.X_train, other_labels, rest), invalid_argument);

    // epochs not above the checkpoint's: nothing to train, said as an error rather than the
    // old History returned without a word.
    auto nothing_left = digits_mlp();
    compile_scheduled_adam(nothing_left);
    nn::FitOptions same_epochs = rest;
    same_epochs.epochs = 5;
    CHECK_THROWS_WITH_AS(nothing_left.fit(d.X_train, d.y_train, same_epochs),
                         doctest::Contains("leaves nothing to train"), invalid_argument);
  }

  SUBCASE("SGD with momentum and a LearningRateScheduler (the rate is in the checkpoint)") {
    auto compile_sgd = [](nn::Sequential<float>& m) {
      m.compile(nn::SGD{.learning_rate = 0.1, .momentum = 0.9},
                nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
    };
    auto schedule = [] {
      return nn::LearningRateScheduler([](int, double lr) { return lr * 0.8; });
    };
    auto straight = digits_mlp();
    compile_sgd(straight);
    straight.fit(d.X_train, d.y_train, options, schedule());

    auto first = digits_mlp();
    compile_sgd(first);
    nn::FitOptions five = options;
    five.epochs = 5;
    // Stopped by a callback after epoch 5 of 10 (the checkpoint is written every 5 epochs).
    first.fit(d.X_train, d.y_train, options, schedule(),
              nn::ModelCheckpoint(path, {.save_freq_epochs = 5}),
              [](auto& m, int epoch, const nn::Logs&) {
                if (epoch == 4) m.stop_training();
              });
    CHECK(first.history().epoch.size() == 5);

    auto resumed = digits_mlp();
    compile_sgd(resumed);
    nn::FitOptions rest = options;
    rest.resume_from = path;
    resumed.fit(d.X_train, d.y_train, rest, schedule());
    CHECK(resumed.get_weights() == straight.get_weights());
    CHECK(resumed.optimizer().learning_rate() == straight.optimizer().learning_rate());
    CHECK(resumed.history() == straight.history());
  }
}

TEST_CASE("nn reproducible_blocks: one block is the plain fit, more blocks its rounding; resume; "
          "what it refuses") {
  const test::ScaledDigits& d = test::scaled_digits();
  const Matrix<double> X = d.X_train.cast<double>();
  auto mlp = [] {
    nn::Sequential<double> model{nn::Input({64}), nn::Dense(24, "relu"), nn::Dropout{0.2},
                                 nn::Dense(10)};
    model.compile(nn::Adam{.learning_rate = 3e-3},
                  nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
    return model;
  };
  const nn::FitOptions plain{.epochs = 3, .batch_size = 50, .seed = 3, .validation_split = 0.1};
  auto reference = mlp();
  reference.fit(X, d.y_train, plain);

  // One block holds the whole batch: the same rows, masks and step, so the same bits.
  nn::FitOptions blocked = plain;
  blocked.reproducible_blocks = 1;
  auto one_block = mlp();
  one_block.fit(X, d.y_train, blocked);
  CHECK(one_block.get_weights() == reference.get_weights());

  // Seven blocks (50 rows: 8, 7, ..., 7; the last batch, 1212 % 50 = 12 rows: 2, 2, 2, 2, 2,
  // 1, 1): the batch's gradient as a sum of seven, equal up to rounding.
  blocked.reproducible_blocks = 7;
  auto seven = mlp();
  const nn::History seven_history = seven.fit(X, d.y_train, blocked);
  const double error = test::weights_error(seven.get_weights(), reference.get_weights());
  MESSAGE("7 blocks against the plain fit: weights relative error " << error);
  CHECK(error < 1e-10);
  CHECK(seven.get_weights() != reference.get_weights());  // the blocks were taken
  CHECK(seven_history.history.at("val_loss").back() ==
        doctest::Approx(reference.history().history.at("val_loss").back()).epsilon(1e-10));

  // A blocked fit stopped after 2 epochs resumes to the straight fit's bits; the checkpoint
  // records the blocks, and a resume with others is refused.
  TempDir dir("blocks");
  const std::string path = dir / "blocks.olc";
  nn::FitOptions two = blocked;
  two.epochs = 2;
  auto first = mlp();
  first.fit(X, d.y_train, two, nn::ModelCheckpoint(path));
  nn::FitOptions rest = blocked;
  rest.resume_from = path;
  auto resumed = mlp();
  CHECK(resumed.fit(X, d.y_train, rest) == seven_history);
  CHECK(resumed.get_weights() == seven.get_weights());
  rest.reproducible_blocks = 6;
  auto other_blocks = mlp();
  CHECK_THROWS_WITH_AS(other_blocks.fit(X, d.y_train, rest),
                       doctest::Contains("expected reproducible_blocks 7"), invalid_argument);

  // Refused before training: negative, with sharding, with batch statistics.
  auto bad = mlp();
  CHECK_THROWS_WITH_AS(bad.fit(X, d.y_train, {.reproducible_blocks = -1}),
                       doctest::Contains("reproducible_blocks >= 0"), invalid_argument);
  CHECK_THROWS_WITH_AS(bad.fit(X, d.y_train, {.shard_optimizer_state = true, .reproducible_blocks = 2}),
                       doctest::Contains("found both"), invalid_argument);
  nn::Sequential<double> bn{nn::Input({64}), nn::Dense(8), nn::BatchNormalization{}, nn::Dense(10)};
  bn.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{.from_logits = true});
  CHECK_THROWS_WITH_AS(bn.fit(X, d.y_train, {.reproducible_blocks = 2}),
                       doctest::Contains("found BatchNormalization (layer 1)"), invalid_argument);
}

TEST_CASE("nn latest_checkpoint: the newest complete checkpoint, skipping a corrupt one; keep_last") {
  const test::ScaledDigits& d = test::scaled_digits();
  TempDir dir("latest");
  auto model = digits_mlp();
  compile_scheduled_adam(model);
  CHECK(nn::latest_checkpoint(model, fs::path()).empty());          // no directory: start fresh
  CHECK(nn::latest_checkpoint(model, dir.path).empty());            // an empty one: the same
  CHECK_THROWS_AS((void)nn::latest_checkpoint(model, dir / "missing"), io_error);

  // Four epochs, one file each, only the newest two kept.
  model.fit(d.X_train, d.y_train, {.epochs = 4, .batch_size = 64, .seed = 1},
            nn::ModelCheckpoint(dir / "epoch{epoch}.olc", {.keep_last = 2}));
  CHECK(!fs::exists(dir / "epoch1.olc"));
  CHECK(!fs::exists(dir / "epoch2.olc"));
  CHECK(fs::exists(dir / "epoch3.olc"));
  CHECK(fs::exists(dir / "epoch4.olc"));
  // Written last, so the newest (the file times can be equal on a fast machine: then the name
  // decides, and "epoch4" > "epoch3").
  CHECK(nn::latest_checkpoint(model, dir.path) == dir / "epoch4.olc");

  // A half-written newest file (cut short, as a crash mid-write without the atomic rename would
  // leave it): skipped, with a message, for the one before.
  const std::string bytes = [&] {
    std::ifstream in(dir / "epoch4.olc", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::ofstream(dir / "epoch4.olc", std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  CHECK(nn::latest_checkpoint(model, dir.path) == dir / "epoch3.olc");
  // A stray file of another kind is skipped too.
  std::ofstream(dir / "notes.txt") << "not a checkpoint";
  CHECK(nn::latest_checkpoint(model, dir.path) == dir / "epoch3.olc");

  // The chosen checkpoint resumes: epochs 4..5 after epoch 3's.
  auto resumed = digits_mlp();
  compile_scheduled_adam(resumed);
  const nn::History h = resumed.fit(d.X_train, d.y_train,
                                    {.epochs = 5, .batch_size = 64, .seed = 1,
                                     .resume_from = nn::latest_checkpoint(resumed, dir.path)});
  CHECK(h.epoch.size() == 5);
  CHECK(resumed.fit_params().initial_epoch == 3);
}

TEST_CASE("nn ModelCheckpoint: best-only keeps the best epoch; every N epochs; weights only") {
  const test::ScaledDigits& d = test::scaled_digits();
  TempDir dir("best");
  // Validation labels shifted by one class: learning the training labels makes val_loss grow
  // after the first epochs, so the best epoch is not the last.
  Labels y_val = d.y_test;
  for (index_t i = 0; i < y_val.size(); ++i) y_val(i) = (y_val(i) + 1) % 10;
  const int epochs = 6;
  std::vector<std::vector<std::vector<float>>> weights_at;
  auto record = [&](auto& m, int, const nn::Logs&) { weights_at.push_back(m.get_weights()); };

  auto model = digits_mlp();
  compile_scheduled_adam(model);
  nn::ModelCheckpoint best(dir / "best.olc", {.monitor = "val_loss", .save_best_only = true});
  nn::ModelCheckpoint every(dir / "every_{epoch}.olc", {.save_freq_epochs = 2});
  nn::ModelCheckpoint weights(dir / "w.olw", {.save_weights_only = true});
  const nn::History h = model.fit(
      d.X_train, d.y_train,
      {.epochs = epochs, .batch_size = 64, .seed = 3, .validation_data = {d.X_test, y_val}}, best,
      every, weights, record);
  const auto& val_loss = h.at("val_loss");
  const auto best_epoch =
      static_cast<int>(std::min_element(val_loss.begin(), val_loss.end()) - val_loss.begin());
  CAPTURE(best_epoch);
  CHECK(best.best_epoch() == best_epoch);
  CHECK(best.best() == val_loss[static_cast<std::size_t>(best_epoch)]);
  CHECK(best_epoch < epochs - 1);  // the scenario does test "best, not last"

  auto restored = digits_mlp();
  compile_scheduled_adam(restored);
  const nn::CheckpointData data = restored.load_checkpoint(dir / "best.olc");
  CHECK(data.epoch == best_epoch + 1);
  CHECK(restored.get_weights() == weights_at[static_cast<std::size_t>(best_epoch)]);
  CHECK(data.history.epoch.size() == static_cast<std::size_t>(best_epoch + 1));

  CHECK(every.saves() == 3);
  CHECK(fs::exists(dir / "every_2.olc"));
  CHECK(fs::exists(dir / "every_6.olc"));
  CHECK_FALSE(fs::exists(dir / "every_1.olc"));
  CHECK_FALSE(fs::exists(dir / "every_3.olc"));
  auto at4 = digits_mlp();
  compile_scheduled_adam(at4);
  CHECK(at4.load_checkpoint(dir / "every_4.olc").epoch == 4);
  CHECK(at4.get_weights() == weights_at[3]);

  auto last = digits_mlp();
  last.load_weights(dir / "w.olw");
  CHECK(last.get_weights() == model.get_weights());

  CHECK_THROWS_AS(nn::ModelCheckpoint("x", {.mode = "largest"}), invalid_argument);
  CHECK_THROWS_AS(nn::ModelCheckpoint("x", {.save_freq_epochs = 0}), invalid_argument);
  nn::ModelCheckpoint missing(dir / "m.olc", {.monitor = "val_loss", .save_best_only = true});
  auto no_val = digits_mlp();
  compile_scheduled_adam(no_val);
  CHECK_THROWS_AS(no_val.fit(d.X_train, d.y_train, {.epochs = 1}, missing), invalid_argument);

  // A directory that is not there: an io_error as training begins, before any step.
  nn::ModelCheckpoint nowhere(dir.path / "absent" / "epoch{epoch}.olc");
  auto untouched = digits_mlp();
  compile_scheduled_adam(untouched);
  untouched.build(nn::Shape{64}, 3);
  const auto before = untouched.get_weights();
  CHECK_THROWS_WITH_AS(untouched.fit(d.X_train, d.y_train, {.epochs = 1, .seed = 3}, nowhere),
                       doctest::Contains("expected a checkpoint directory at"), io_error);
  CHECK(untouched.get_weights() == before);
}

// ---------------------------------------------------------------------------------------------
// ProgressBar, CSVLogger, LearningRateScheduler, validation_data

namespace {

/// Keras's Progbar value format (keras/utils/generic_utils.py: ' %.4f' if abs(v) > 1e-3
/// else ' %.4e').
std::string keras_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::abs(v) > 1e-3 ? "%.4f" : "%.4e", v);
  return buf;
}

struct FakePolicy {
  int r = 1;
  [[nodiscard]] int rank() const { return r; }
};
struct FakeModel {
  nn::FitParams params{.epochs = 2, .steps = 3};
  FakePolicy policy;
  [[nodiscard]] const nn::FitParams& fit_params() const { return params; }
  [[nodiscard]] const FakePolicy& execution_policy() const { return policy; }
};

}  // namespace

TEST_CASE("nn ProgressBar: Keras's lines, plain when not a terminal, in place when it is") {
  const Matrix<float> X = random_matrix<float>(10, 8, 3);
  const Labels y = labels_of(X);
  const Matrix<float> X_val = random_matrix<float>(5, 8, 4);
  const Labels y_val = labels_of(X_val);

  SUBCASE("non-interactive: 'Epoch e/E' and one line per epoch (timing masked)") {
    std::ostringstream out;
    auto model = small_model<float>();
    compile_small(model);
    nn::ProgressBar bar(out);
    CHECK_FALSE(bar.interactive());
    const nn::History h = model.fit(
        X, y, {.epochs = 2, .batch_size = 4, .seed = 1, .validation_data = {X_val, y_val}}, bar);
    const std::string masked =
        std::regex_replace(out.str(), std::regex(R"(\d+s \d+(s|ms|us)/step)"), "<time>");
    std::string expected;
    for (std::size_t e = 0; e < 2; ++e) {
      expected += "Epoch " + std::to_string(e + 1) + "/2\n";
      expected += "3/3 - <time> - loss: " + keras_value(h.at("loss")[e]) +
                  " - accuracy: " + keras_value(h.at("accuracy")[e]) +
                  " - val_loss: " + keras_value(h.at("val_loss")[e]) +
                  " - val_accuracy: " + keras_value(h.at("val_accuracy")[e]) + "\n";
    }
    CHECK(masked == expected);
  }
  SUBCASE("interactive: the bar is redrawn with \\r and finished at the epoch's end") {
    std::ostringstream out;
    auto model = small_model<float>();
    compile_small(model);
    nn::ProgressBar bar(out, {.interactive = true, .interval = 0});
    model.fit(X, y, {.epochs = 1, .batch_size = 4, .seed = 1}, bar);
    const std::string s = out.str();
    CHECK(s.rfind("Epoch 1/1\n", 0) == 0);
    // 1 of 3 batches: 30 * 1/3 = 10 columns filled, the last one the arrow head.
    CHECK(s.find("\r1/3 [=========>....................] - ETA: ") != std::string::npos);
    CHECK(s.find("\r2/3 [===================>..........] - ETA: ") != std::string::npos);
    CHECK(s.find("\r3/3 [==============================] - ") != std::string::npos);
    CHECK(s.find(" - loss: ") != std::string::npos);
    CHECK(s.back() == '\n');
  }
  SUBCASE("silent on ranks other than 0") {
    std::ostringstream out;
    nn::ProgressBar bar(out);
    FakeModel fake;
    nn::Logs logs;
    logs.set("loss", 1.0);
    bar.on_train_begin(fake);
    bar.on_epoch_begin(fake, 0);
    bar.on_batch_end(fake, 0, logs);
    bar.on_epoch_end(fake, 0, logs);
    CHECK(out.str().empty());
    fake.policy.r = 0;
    bar.on_train_begin(fake);
    bar.on_epoch_begin(fake, 0);
    bar.on_epoch_end(fake, 0, logs);
    CHECK(out.str().rfind("Epoch 1/2\n3/3 - ", 0) == 0);
  }
  SUBCASE("verbose 1 and 2 print to std::cout through a ProgressBar") {
    std::ostringstream captured;
    std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
    auto model = small_model<float>();
    compile_small(model);
    model.fit(X, y, {.epochs = 1, .batch_size = 4, .seed = 1, .verbose = 2});
    const std::string two = captured.str();
    captured.str("");
    model.fit(X, y, {.epochs = 1, .batch_size = 4, .seed = 1, .verbose = 1});
    const std::string one = captured.str();
    std::cout.rdbuf(saved);
    CHECK(two.rfind("Epoch 1/1\n3/3 - ", 0) == 0);
    CHECK(two.find('\r') == std::string::npos);
    CHECK(one.rfind("Epoch 1/1\n", 0) == 0);
    CHECK(one.find(" - loss: ") != std::string::npos);
  }
  CHECK_THROWS_AS(
      [&] {
        auto model = small_model<float>();
        compile_small(model);
        model.fit(X, y, {.verbose = 3});
      }(),
      invalid_argument);
}

TEST_CASE("nn CSVLogger: a header and one row per epoch, values that read back exactly") {
  TempDir dir("csv");
  const std::string path = dir / "log.csv";
  const Matrix<float> X = random_matrix<float>(50, 8, 5);
  const Labels y = labels_of(X);
  auto model = small_model<float>();
  compile_small(model);
  const nn::History h =
      model.fit(X, y, {.epochs = 3, .seed = 2, .validation_split = 0.2}, nn::CSVLogger(path));

  auto lines_of = [](const std::string& p) {
    std::ifstream in(p);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  auto fields_of = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
    return out;
  };
  std::vector<std::string> lines = lines_of(path);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "epoch,accuracy,loss,val_accuracy,val_loss");  // sorted, as Keras's
  const std::vector<std::string> keys{"accuracy", "loss", "val_accuracy", "val_loss"};
  for (std::size_t e = 0; e < 3; ++e) {
    const auto fields = fields_of(lines[e + 1]);
    REQUIRE(fields.size() == 5);
    CHECK(fields[0] == std::to_string(e));
    for (std::size_t k = 0; k < keys.size(); ++k) {
      CHECK(std::stod(fields[k + 1]) == h.at(keys[k])[e]);  // shortest round-trip: exact
    }
  }
  // append: rows added, no second header; without append: the file starts over.
  model.fit(X, y, {.epochs = 2, .seed = 2, .validation_split = 0.2}, nn::CSVLogger(path, true));
  lines = lines_of(path);
  CHECK(lines.size() == 6);
  CHECK(lines[4].rfind("0,", 0) == 0);
  model.fit(X, y, {.epochs = 2, .seed = 2, .validation_split = 0.2}, nn::CSVLogger(path));
  CHECK(lines_of(path).size() == 3);
  CHECK_THROWS_AS(model.fit(X, y, {.epochs = 1}, nn::CSVLogger(dir / "no/dir/log.csv")), io_error);
}

TEST_CASE("nn LearningRateScheduler: the rate per epoch, and its effect on training") {
  const Matrix<float> X = random_matrix<float>(40, 8, 6);
  const Labels y = labels_of(X);
  auto make = [] {
    auto m = small_model<float>();
    m.compile(nn::SGD{.learning_rate = 0.1},
              nn::SparseCategoricalCrossentropy{.from_logits = true});
    m.build(nn::Shape{8}, 4);
    return m;
  };
  const nn::FitOptions options{.epochs = 3, .batch_size = 8, .seed = 4};

  std::vector<double> rates;
  auto record = [&](auto& m, int, const nn::Logs&) {
    rates.push_back(m.optimizer().learning_rate());
  };
  auto halving = make();
  halving.fit(X, y, options, nn::LearningRateScheduler([](int epoch, double lr) {
                return epoch == 0 ? lr : lr * 0.5;
              }),
              record);
  CHECK(rates == std::vector<double>{0.1, 0.05, 0.025});

  auto zero = make();
  const auto initial = zero.get_weights();
  zero.fit(X, y, options, nn::LearningRateScheduler([](int) { return 0.0; }));
  CHECK(zero.get_weights() == initial);  // a zero rate leaves the weights alone

  auto constant = make();
  constant.fit(X, y, options, nn::LearningRateScheduler([](int) { return 0.1; }));
  auto plain = make();
  plain.fit(X, y, options);
  CHECK(constant.get_weights() == plain.get_weights());
  CHECK(halving.get_weights() != plain.get_weights());

  auto negative = make();
  CHECK_THROWS_AS(negative.fit(X, y, options, nn::LearningRateScheduler([](int) { return -1.0; })),
                  invalid_argument);
}

TEST_CASE("nn validation_data: the epoch's val_* equal evaluate on the same data") {
  const test::ScaledDigits& d = test::scaled_digits();
  auto model = digits_mlp();
  compile_scheduled_adam(model);
  const nn::History h = model.fit(
      d.X_train, d.y_train, {.epochs = 2, .seed = 8, .validation_data = {d.X_test, d.y_test}});
  const auto scores = model.evaluate(d.X_test, d.y_test);
  CHECK(h.at("val_loss").back() == scores.at("loss"));
  CHECK(h.at("val_accuracy").back() == scores.at("accuracy"));
  CHECK(h.at("val_accuracy").size() == 2);

  CHECK_THROWS_AS(model.fit(d.X_train, d.y_train,
                            {.validation_split = 0.1, .validation_data = {d.X_test, d.y_test}}),
                  invalid_argument);
  const Matrix<float> narrow = d.X_test.leftCols(10);
  CHECK_THROWS_AS(model.fit(d.X_train, d.y_train, {.validation_data = {narrow, d.y_test}}),
                  shape_error);
  const Labels short_y = d.y_test.head(5);
  CHECK_THROWS_AS(model.fit(d.X_train, d.y_train, {.validation_data = {d.X_test, short_y}}),
                  shape_error);
  Labels out_of_range = d.y_test;
  out_of_range(0) = 10;
  CHECK_THROWS_AS(model.fit(d.X_train, d.y_train, {.validation_data = {d.X_test, out_of_range}}),
                  invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// KerasClassifier

static_assert(check_classifier<nn::KerasClassifier<float>>());
static_assert(check_classifier<nn::KerasClassifier<double>>());
static_assert(concepts::Classifier<nn::KerasClassifier<float>>);

TEST_CASE("nn KerasClassifier: arbitrary labels, the Classifier concept, cross-validation") {
  const auto iris = test::load_split<float, std::int64_t>("iris");
  const auto reference = test::sklearn_reference("iris");
  // Labels 0, 1, 2 as -5, 7, 100.
  auto relabel = [](const Labels& y) {
    Labels out(y.size());
    for (index_t i = 0; i < y.size(); ++i) out(i) = y(i) == 0 ? -5 : (y(i) == 1 ? 7 : 100);
    return out;
  };
  const Labels y_train = relabel(iris.y_train);
  const Labels y_test = relabel(iris.y_test);
  auto build = [](index_t n_features, index_t n_classes, const nn::KerasClassifierParams&) {
    return nn::Sequential<float>{nn::Input({n_features}), nn::Dense(16, "relu"),
                                 nn::Dense(n_classes)};
  };
  nn::KerasClassifier<float> clf(
      build, {.epochs = 60, .batch_size = 16, .learning_rate = 2e-2, .seed = 1});
  CHECK_THROWS_AS((void)clf.predict(iris.X_test), not_fitted_error);
  CHECK_THROWS_AS((void)clf.classes(), not_fitted_error);
  CHECK(&clf.fit(iris.X_train, y_train) == &clf);
  CHECK(clf.classes() == (Labels(3) << -5, 7, 100).finished());

  const Labels predicted = clf.predict(iris.X_test);
  for (index_t i = 0; i < predicted.size(); ++i) {
    CHECK((predicted(i) == -5 || predicted(i) == 7 || predicted(i) == 100));
  }
  const double accuracy = clf.score(iris.X_test, y_test);
  CHECK((accuracy == doctest::Approx(metrics::accuracy_score(y_test, predicted))));
  // scikit-learn's LogisticRegression(C=1) on the standardised data: 0.9737 (the reference);
  // a small network on the raw features should be within one or two test samples of it.
  const double logreg = reference["logreg_C1_scaled_test_accuracy"].get<double>();
  MESSAGE("KerasClassifier iris test accuracy ", accuracy, " (scikit-learn logreg ", logreg, ")");
  CHECK(accuracy >= logreg - 0.06);

  const Matrix<float> proba = clf.predict_proba(iris.X_test);
  CHECK(proba.cols() == 3);
  CHECK((proba.rowwise().sum().array() - 1).abs().maxCoeff() < 1e-5);
  for (index_t i = 0; i < proba.rows(); ++i) {
    index_t best = 0;
    proba.row(i).maxCoeff(&best);
    CHECK((clf.classes()(best) == predicted(i)));
  }
  // Deterministic for a seed; refit resets.
  nn::KerasClassifier<float> again(build, clf.get_params());
  again.fit(iris.X_train, y_train);
  CHECK((again.predict_proba(iris.X_test) == proba));

  // Parameters by name, as a search sets them.
  clf.set_params({{"epochs", std::int64_t{2}}, {"optimizer", std::string("sgd")}});
  CHECK(clf.get_params().epochs == 2);
  CHECK(clf.get_params().optimizer == "sgd");
  clf.fit(iris.X_train, y_train);
  CHECK(clf.history().epoch.size() == 2);
  CHECK(clf.model().is_compiled());

  // Cross-validation takes it like any classifier (stratified 3-fold).
  nn::KerasClassifier<float> cv_clf(
      build, {.epochs = 40, .batch_size = 16, .learning_rate = 2e-2, .seed = 2});
  const std::vector<double> scores =
      model_selection::cross_val_score(cv_clf, iris.X_train, y_train, 3);
  REQUIRE(scores.size() == 3);
  for (double s : scores) CHECK(s > 0.8);

  // Bad input.
  nn::KerasClassifier<float> bad(build, {.optimizer = "adamax"});
  CHECK_THROWS_AS(bad.fit(iris.X_train, y_train), invalid_argument);
  nn::KerasClassifier<float> one(build);
  CHECK_THROWS_AS(one.fit(iris.X_train, Labels::Constant(iris.X_train.rows(), 4)),
                  invalid_argument);
  nn::KerasClassifier<float> wrong_outputs([](index_t, index_t, const nn::KerasClassifierParams&) {
    return nn::Sequential<float>{nn::Dense(8, "relu"), nn::Dense(2)};
  });
  CHECK_THROWS_AS(wrong_outputs.fit(iris.X_train, y_train), shape_error);
  CHECK_THROWS_AS((void)again.predict(iris.X_test.leftCols(3)), shape_error);
  CHECK_THROWS_AS(again.fit(iris.X_train, y_train.head(10)), shape_error);
}

TEST_CASE("nn fit's batch plan: global batches from every rank's rows") {
  using nn::detail::BatchPlan;
  // One process: its batches, the last one smaller.
  const BatchPlan one("fit", {5, 1}, false, 2, 0, 1);
  CHECK(one.steps() == 3);
  CHECK(one.global_rows(2) == 1);
  const nn::detail::BatchShare last = one.share(2, 1);
  CHECK((last.start == 4 && last.rows == 1 && last.offset == 0));
  CHECK(one.held_out(5, 1) == std::pair<index_t, index_t>{5, 6});

  // Per rank: 3 ranks with 5, 0 and 3 training rows (1, 0 and 1 held out), batches of 2.
  const std::vector<std::int64_t> rows{5, 1, 0, 0, 3, 1};
  const BatchPlan rank0("fit", rows, false, 2, 0, 3);
  const BatchPlan rank2("fit", rows, false, 2, 2, 3);
  CHECK(rank0.steps() == 3);  // rank 0's 3 batches
  CHECK(rank0.train_rows() == 8);
  CHECK(rank0.held_rows() == 2);
  CHECK(rank0.global_rows(0) == 4);
  CHECK(rank0.global_rows(1) == 3);
  CHECK(rank0.global_rows(2) == 1);
  const nn::detail::BatchShare second = rank2.share(1, 3);  // after rank 0's 2 rows
  CHECK((second.start == 2 && second.rows == 1 && second.offset == 2));
  CHECK(rank2.share(2, 1).rows == 0);  // rank 2's rows have run out: an empty batch

  // Replicated: 7 rows on 3 ranks, batches of 5 split 2, 2, 1 then 1, 1, 0.
  const std::vector<std::int64_t> same{7, 0, 7, 0, 7, 0};
  const BatchPlan r1("fit", same, true, 5, 1, 3);
  const BatchPlan r2("fit", same, true, 5, 2, 3);
  CHECK(r1.steps() == 2);
  CHECK(r1.train_rows() == 7);
  CHECK(r1.global_rows(1) == 2);
  const nn::detail::BatchShare a = r1.share(0, 5);
  const nn::detail::BatchShare b = r2.share(0, 5);
  CHECK((a.start == 2 && a.rows == 2 && a.offset == 2));
  CHECK((b.start == 4 && b.rows == 1 && b.offset == 4));
  CHECK(r1.share(1, 2).start == 6);
  CHECK(r2.share(1, 2).rows == 0);
  CHECK(r1.held_out(10, 4) == std::pair<index_t, index_t>{12, 13});
  CHECK_THROWS_AS(BatchPlan("fit", {7, 0, 6, 1}, true, 5, 0, 2), shape_error);
}
