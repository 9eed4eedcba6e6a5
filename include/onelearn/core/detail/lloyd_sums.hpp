#pragma once
// The plain Lloyd step on the host: assign each row to its nearest centre and, in the same pass,
// sum the rows of each cluster and count them (scikit-learn's Lloyd loop fuses them too). Used
// by KMeans (cluster/detail/kmeans_lloyd.hpp) and by space::lloyd_step (space/host.hpp).

#include <cstdint>

#include "onelearn/core/detail/distances.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// labels(i) becomes the nearest centre of row i (nearest_rows: first on ties); sums (k x p) and
/// counts (k) receive, in double, the sum and number of the rows of each cluster. Returns how
/// many labels differ from `previous`. Chunks of rows run on threads, each with its own partial
/// sums; there are at most max_partials (core/detail/parallel.hpp) chunks whatever n is
/// (bounding the k x p partials' memory), added in chunk order: the same result on any number
/// of threads.
template <class T>
double lloyd_assign_and_sum(const MatrixRef<T>& X, const MatrixRef<T>& centers,
                            Eigen::Ref<Labels> labels, const Eigen::Ref<const Labels>& previous,
                            Eigen::Ref<Matrix<double>> sums, Eigen::Ref<Vector<double>> counts) {
  const index_t n = X.rows();
  const index_t p = X.cols();
  const index_t k = centers.rows();
  const Vector<T> center_norms = row_squared_norms<T>(centers);
  const index_t grain = fixed_chunks(n, block_rows, max_partials);
  // Per chunk, one row: [sums (k x p, row-major), counts (k), changed].
  Matrix<double> partials = Matrix<double>::Zero(chunk_count(n, grain), k * p + k + 1);
  for_each_chunk(n, grain, [&](index_t chunk, index_t begin, index_t end) {
    nearest_rows<T>(X.middleRows(begin, end - begin), centers, center_norms,
                    labels.segment(begin, end - begin));
    double* partial = partials.row(chunk).data();
    Eigen::Map<Matrix<double>> chunk_sums(partial, k, p);
    for (index_t i = begin; i < end; ++i) {
      const index_t label = labels(i);
      chunk_sums.row(label) += X.row(i).template cast<double>();
      partial[k * p + label] += 1;
      if (label != previous(i)) partial[k * p + k] += 1;
    }
  });
  const Vector<double> total = partials.colwise().sum().transpose();
  sums = Eigen::Map<const Matrix<double>>(total.data(), k, p);
  counts = total.segment(k * p, k);
  return total(k * p + k);
}

}  // namespace onelearn::detail
