#pragma once
/**
 * \code
 * #include <onelearn/io/io.hpp>
 *
 * auto X = onelearn::io::load_npy<onelearn::Matrix<double>>("X_train.npy");
 * auto data = onelearn::io::load_csv<double>("diabetes.csv", {.label_column = "progression"});
 * onelearn::io::save_npy("X_scaled.npy", X);
 * \endcode
 *
 * The data file formats in one include: io/npy.hpp (load_npy, save_npy) and io/csv.hpp
 * (load_csv, CsvOptions). The building blocks they share, for writers of other formats, are
 * included on their own: io/atomic_file.hpp (write a file whole or not at all),
 * io/byte_reader.hpp (bounded binary reads), io/text_writer.hpp (JSON and CSV text).
 *
 * Errors: those of load_npy, save_npy and load_csv, all `io_error`.
 */

#include "onelearn/io/csv.hpp"
#include "onelearn/io/npy.hpp"
