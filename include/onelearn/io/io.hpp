#pragma once
/**
 * \file
 * \brief The data file formats in one include: .npy, CSV and tables with text columns.
 * \ingroup io
 *
 * \code
 * #include <onelearn/io/io.hpp>
 *
 * auto X = onelearn::io::load_npy<onelearn::Matrix<double>>("X_train.npy");
 * auto data = onelearn::io::load_csv<double>("diabetes.csv", {.label_column = "progression"});
 * onelearn::io::save_npy("X_scaled.npy", X);
 * auto table = onelearn::io::read_table("adult.csv");  // numeric and text columns
 * \endcode
 *
 * The data file formats in one include: io/npy.hpp (load_npy, save_npy), io/csv.hpp
 * (load_csv, CsvOptions) and io/table.hpp (read_table, Table: CSV files with text columns).
 * The building blocks they share, for writers of other formats, are
 * included on their own: io/atomic_file.hpp (write a file whole or not at all),
 * io/byte_reader.hpp (bounded binary reads), io/text_writer.hpp (JSON and CSV text).
 *
 * Errors: those of load_npy, save_npy, load_csv and read_table, all `io_error`.
 */

#include "onelearn/io/csv.hpp"
#include "onelearn/io/npy.hpp"
#include "onelearn/io/table.hpp"
