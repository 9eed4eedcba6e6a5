#pragma once
/**
 * \file
 * \brief Compute spaces: where the samples live and what runs the heavy loops over them.
 * \ingroup spaces
 *
 * \code
 * #include <onelearn/space/space.hpp>
 *
 * namespace space = onelearn::space;
 * // X: a onelearn::Matrix<double>, the caller's rows, on the host
 * space::host h;                                         // today's path: Eigen + OpenMP
 * auto Xh = space::to_space(h, X);                       // borrows X: no copy
 * onelearn::Vector<double> sums = space::column_sums(h, Xh.view(), {});
 *
 * #if defined(ONELEARN_SPACE_HAVE_OMP)                    // Thrust's headers and -fopenmp
 * space::thrust_omp omp;                                 // Thrust's OpenMP system
 * auto Xo = space::to_space(omp, X);                     // host memory: borrows X too
 * sums = space::column_sums(omp, Xo.view(), {});         // the same function, the same sums
 * #endif
 *
 * #if defined(ONELEARN_SPACE_HAVE_CUDA)                   // in a .cu file, compiled by nvcc
 * space::thrust_cuda gpu;
 * auto Xd = space::to_space(gpu, X);                     // copied to the device, once
 * space::vector<space::thrust_cuda, std::int64_t> labels(gpu, X.rows());
 * onelearn::Matrix<double> centers = X.topRows(8);       // small: passed from the host
 * auto step = space::lloyd_step(gpu, Xd.view(), centers, labels.mutable_view(), {});
 * // step.sums, step.counts: k x p and k, on the host, ready for exec.allreduce
 * #endif
 * \endcode
 *
 * A compute space says where the samples live and what runs the heavy loops over them. It is
 * the second compile-time axis beside the execution policy (exec::local, exec::mpi, exec::ucx:
 * who the process talks to): an estimator takes both, `Estimator<T, Exec, Space>`, with
 * space::host the default, and its algorithm calls the kernels below with its space, whatever
 * the space is. The communicator still all-reduces the small results on the host.
 *
 * Spaces (`ComputeSpace`, space/concept.hpp):
 * - `space::host`: the caller's memory and onelearn's Eigen + OpenMP kernels, unchanged;
 * - `space::thrust_space<System>` on Thrust's systems, with aliases `thrust_cpp` (sequential),
 *   `thrust_omp` (OpenMP), `thrust_tbb` (oneTBB) and `thrust_cuda` (an NVIDIA GPU).
 *
 * The `#if` lines of the example keep it compiling where a system was not compiled in.
 *
 * Memory is explicit. Each space owns memory of its own kind (`S::buffer<T>`: `std::vector`,
 * `thrust::omp::vector`, `thrust::cuda::vector`, ...). `space::matrix<S, T>` and
 * `space::vector<S, T>` hold rows and per-sample values in a space; `to_space(s, X)` brings the
 * caller's data in: **host data passed to a device space is copied once** (at fit or predict),
 * while the host and the CPU Thrust systems read it where it is (the result borrows X and must
 * not outlive it). Kernels take views (matrix_view, vector_view: a pointer and a shape in the
 * space's memory) and return small results (sums, k x p, p x p) to the host; per-sample outputs
 * (labels) are written to a space::vector, which stays in the space until `to_host()`. Small
 * model arrays a kernel reads (centres, means, coefficients) are passed as host Eigen matrices
 * and copied into the space by the kernel. An estimator fitted in a device space keeps its
 * per-sample state there and moves data only at fit/predict boundaries.
 *
 * The kernels, each `f(space, ...)` for every space (space/host.hpp lists them with their
 * contracts; `space/detail/thrust_kernels.hpp` is the Thrust side):
 * - `subtract_from_rows`: x_i -= v in place, in T (KMeans centres its device copy there);
 * - `column_sums`, `centered_square_sums`: column moments, weighted or not (StandardScaler,
 *   the linear models' means);
 * - `class_sums`, `class_square_deviations`: per-class moments (GaussianNB);
 * - `nearest_rows`, `lloyd_step`, `paired_squared_distances`, `pairwise_squared_distances`:
 *   KMeans' assignment, per-cluster sums and counts, inertia;
 * - `nearest_k`: the exact k nearest rows (kNN), ties to the lower row;
 * - `gram`: centred, weighted X^T X, X^T y, y^T y (Ridge, Lasso, ElasticNet; without y, a
 *   covariance); on CUDA by cuBLAS (syrk);
 * - `logistic_loss_gradient`: LogisticRegression's data term and gradient;
 * - `gradient_histogram`, `partition_rows`, `fill_row_order` (Thrust spaces only: the host runs
 *   ensemble/detail/hist_split.hpp's own): histogram boosting's per-node gradient histograms and
 *   row partitions (space/detail/thrust_histogram.hpp);
 * - `qr_triangles` (Thrust spaces only: the host runs Eigen's Householder QR in
 *   linear_model/linear_regression.hpp): LinearRegression's per-chunk QR triangles
 *   (space/detail/thrust_qr.hpp).
 *
 * Results equal the host kernels' to 1e-12 relative in double and 1e-5 in float (sums are kept
 * in double whatever T is, as on the host); the k nearest neighbours are the same rows with the
 * same distances (exact distances, computed with the same operations in every space). The
 * labels of nearest_rows agree except where two centres are within rounding of each other.
 * Reductions are deterministic: chunks of rows, never threads, hold the partial sums, added in
 * chunk order, so a result is the same on any number of threads.
 *
 * Building: Thrust 1.17 (Debian's libthrust-dev) with g++ for cpp, omp and tbb, or CUDA 13's
 * CCCL with nvcc for all four. The CMake targets onelearn::thrust_cpp, thrust_omp, thrust_tbb
 * and thrust_cuda (cmake/onelearnThrust.cmake) carry the flags. Outside CUDA, the space headers
 * set `THRUST_DEVICE_SYSTEM` to the C++ system unless it is set already (include them before
 * Thrust's own headers, or set it yourself): onelearn always names its Thrust system.
 *
 * Errors: choosing a space whose package was not compiled in stops the build with a sentence
 * naming it: thrust_omp without -fopenmp, thrust_tbb without onelearn::thrust_tbb, thrust_cuda
 * outside nvcc, any Thrust space without Thrust's headers. A CUDA build run without a device
 * throws `space::no_device_error` at its first use (allocation or kernel); a failed device
 * allocation throws `space::device_memory_error` naming the bytes asked for (`bytes()`); other
 * CUDA and cuBLAS failures `space::device_error` (space/errors.hpp). All derive from
 * `std::runtime_error` and `onelearn::error`.
 */

#include "onelearn/space/concept.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/detail/thrust_histogram.hpp"
#include "onelearn/space/detail/thrust_kernels.hpp"
#include "onelearn/space/detail/thrust_qr.hpp"
#include "onelearn/space/errors.hpp"
#include "onelearn/space/host.hpp"
#include "onelearn/space/results.hpp"
#include "onelearn/space/thrust.hpp"
