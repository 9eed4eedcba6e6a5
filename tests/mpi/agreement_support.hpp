#pragma once
// Helpers of the agreement tests (test_agreement*.cpp): the world policy, and whether a string
// (an error message) is the same on every rank.

#include <cstdint>
#include <span>
#include <string>

#include <mpi.h>

#include "mpi_support.hpp"
#include "onelearn/exec/mpi.hpp"

namespace onelearn::test::agreement {

using test::world;  // mpi_support.hpp

/// True on every rank when every rank holds the same `text` as rank 0.
inline bool same_on_every_rank(const exec::mpi& comm, const std::string& text) {
  std::int64_t length = static_cast<std::int64_t>(text.size());
  comm.broadcast(std::span<std::int64_t>(&length, 1), 0);
  std::string first(static_cast<std::size_t>(length), '\0');
  if (comm.rank() == 0) first = text;
  comm.broadcast(std::span<char>(first.data(), first.size()), 0);
  std::int64_t differs = first == text ? 0 : 1;
  comm.allreduce(std::span<std::int64_t>(&differs, 1), exec::reduce_op::max);
  return differs == 0;
}

}  // namespace onelearn::test::agreement
