#pragma once
/**
 * \file
 * \brief The cells the CSV readers take as missing values.
 * \ingroup io
 *
 * \code
 * #include <onelearn/io/na_values.hpp>
 *
 * std::vector<std::string> markers = onelearn::io::default_na_values();
 * markers.push_back("?");  // UCI files write a missing value as "?"
 * auto data = onelearn::io::load_csv<double>("adult.csv", {.na_values = markers});
 * \endcode
 *
 * The cells that the CSV readers (load_csv, read_table) take as a missing value: NaN in a
 * numeric column, ready for SimpleImputer. The default is the set pandas.read_csv (1.5)
 * recognises, so a file pandas writes or reads loads the same here:
 * the empty cell, `NA`, `N/A`, `n/a`, `NaN`, `-NaN`, `nan`, `-nan`, `NULL`, `null`, `None`,
 * `<NA>`, `#N/A`, `#N/A N/A`, `#NA`, `1.#IND`, `-1.#IND`, `1.#QNAN` and `-1.#QNAN`.
 * A marker must match a whole cell, case included (`na` is text); a quoted cell matches too.
 * Pass an empty list to make an empty cell an error. `nan` and `inf` written as numbers
 * always load as NaN and infinity, marker or not.
 */

#include <string>
#include <vector>

namespace onelearn::io {

/// The cells read as missing values unless the options give another list (see above).
inline std::vector<std::string> default_na_values() {
  return {"",     "NA",     "N/A",     "n/a",     "NaN",     "-NaN", "nan",
          "-nan", "NULL",   "null",    "None",    "<NA>",    "#N/A", "#N/A N/A",
          "#NA",  "1.#IND", "-1.#IND", "1.#QNAN", "-1.#QNAN"};
}

}  // namespace onelearn::io
