#pragma once
// What the distributed test files (mpi/test_*.cpp) share: the world policy, the shard where the
// last rank holds no rows, the cyclic sample weights, and the check that every rank holds the
// same bits. One definition here, so that the files also compile as one translation unit
// (tests/cmake/test_groups.cmake).

#include <mpi.h>

#include <span>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/mpi.hpp"

namespace onelearn::test {

inline exec::mpi world() { return exec::mpi(MPI_COMM_WORLD); }

/// Rank r's data when the last rank holds no rows at all: the others split all of it.
template <class D>
D all_but_last(const D& data, const exec::mpi& comm) {
  if (comm.size() == 1) return data;
  return comm.rank() == comm.size() - 1 ? data.rows(0, 0)
                                        : data.shard(comm.rank(), comm.size() - 1);
}

/// Weights 1, 2, 3, 1, 2, 3, ...: every rank builds the same full vector, then shards it.
template <class T>
Vector<T> cyclic_weights(index_t n) {
  Vector<T> w(n);
  for (index_t i = 0; i < n; ++i) w(i) = static_cast<T>(1 + i % 3);
  return w;
}

/// Every rank holds the same buffers (rank 0's, broadcast, compared exactly).
template <class T>
bool identical_on_all_ranks(const exec::mpi& comm, const std::vector<std::vector<T>>& buffers) {
  bool identical = true;
  for (const auto& w : buffers) {
    std::vector<T> root = w;
    comm.broadcast(std::span<T>(root), 0);
    identical = identical && root == w;
  }
  return identical;
}

}  // namespace onelearn::test
