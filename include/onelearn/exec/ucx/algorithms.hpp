#pragma once
/**
 * \file
 * \ingroup policies
 *
 * exec::ucx's collective algorithms on the tagged messages of ucx_transport.
 *
 * All-reduce: recursive doubling below ucx_options::small_message_bytes (log2 p latency-bound
 * exchanges; a non-power-of-two count folds the extra ranks in first and out last), the ring
 * above it (reduce-scatter then all-gather, 2 (p-1)/p of the data sent per rank, the minimum),
 * chunked so that the reduction of one chunk overlaps with the transfer of the next and each
 * reduced chunk is forwarded at once. Both give bit-identical results on every rank: in
 * recursive doubling both partners combine op(lower rank's value, higher rank's value); in the
 * ring each segment is reduced once, on one rank, and then only copied.
 */

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/exec/policy.hpp"
#include "onelearn/exec/ucx/transport.hpp"

namespace onelearn::exec::detail {

/// Calls `body(f)` with `f(left, right)` the binary function of `op` on T.
template <class T, class Body>
void ucx_with_op(reduce_op op, Body&& body) {
  switch (op) {
    case reduce_op::sum:
      if constexpr (std::is_integral_v<T>) {
        // Two's-complement wrap-around like MPI's, without signed-overflow UB.
        using U = std::make_unsigned_t<T>;
        body([](T left, T right) { return static_cast<T>(static_cast<U>(left) + static_cast<U>(right)); });
      } else {
        body([](T left, T right) { return static_cast<T>(left + right); });
      }
      break;
    case reduce_op::min:
      body([](T left, T right) { return right < left ? right : left; });
      break;
    case reduce_op::max:
      body([](T left, T right) { return left < right ? right : left; });
      break;
  }
}

/// out[i] = op(left[i], right[i]). `out` may alias `left` or `right` exactly.
template <class T>
void ucx_combine(T* out, const T* left, const T* right, std::size_t n, reduce_op op) {
  ucx_with_op<T>(op, [&](auto f) {
    for (std::size_t i = 0; i < n; ++i) out[i] = f(left[i], right[i]);
  });
}

/// out[i] = copy[i] = op(left[i], right[i]): one pass that also publishes the result. Either
/// output may alias `left` or `right` exactly; `out` and `copy` do not overlap.
template <class T>
void ucx_combine_twice(T* out, T* copy, const T* left, const T* right, std::size_t n, reduce_op op) {
  ucx_with_op<T>(op, [&](auto f) {
    for (std::size_t i = 0; i < n; ++i) {
      const T value = f(left[i], right[i]);
      out[i] = value;
      copy[i] = value;
    }
  });
}

/// [begin, end) of part `k` of `n` items cut into `parts` near-equal parts (the first n % parts
/// have one more).
inline std::pair<std::size_t, std::size_t> ucx_part(std::size_t n, std::size_t parts, std::size_t k) {
  const std::size_t base = n / parts;
  const std::size_t extra = n % parts;
  const std::size_t begin = k * base + std::min(k, extra);
  return {begin, begin + base + (k < extra ? 1 : 0)};
}

template <class T>
void ucx_allreduce_recursive_doubling(ucx_transport& t, T* data, std::size_t n, reduce_op op) {
  ucx_transport::operation call(t, "allreduce");
  const int p = t.size();
  const int r = t.rank();
  const std::size_t bytes = n * sizeof(T);
  T* incoming = reinterpret_cast<T*>(t.scratch(0, bytes));
  const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  const int extra = p - pof2;
  std::uint32_t index = 0;

  // Ranks pof2.. hand their values to rank - pof2 and get the result back at the end.
  if (r >= pof2) {
    call.wait(call.send(r - pof2, data, bytes, index));
    call.wait(call.receive(r - pof2, data, bytes, 1000));
    call.wait_all();
    return;
  }
  if (r < extra) {
    call.wait(call.receive(r + pof2, incoming, bytes, index));
    ucx_combine(data, data, incoming, n, op);  // lower rank on the left
  }
  ++index;
  for (int mask = 1; mask < pof2; mask <<= 1, ++index) {
    const int partner = r ^ mask;
    const auto received = call.receive(partner, incoming, bytes, index);
    const auto sent = call.send(partner, data, bytes, index);
    call.wait(received);
    call.wait(sent);
    if (partner < r) {
      ucx_combine(data, incoming, data, n, op);
    } else {
      ucx_combine(data, data, incoming, n, op);
    }
  }
  if (r < extra) call.wait(call.send(r + pof2, data, bytes, 1000));
  call.wait_all();
}

/// Ring all-reduce. Step s < p-1 (reduce-scatter): send segment (r - s) to the right, receive
/// segment (r - s - 1) from the left into scratch and reduce it into the buffer. Step
/// p-1+u (all-gather): send segment (r + 1 - u), receive segment (r - u) into the buffer.
/// What a step receives is what the next step sends, so each chunk is sent on as soon as it
/// has been received (and reduced).
template <class T>
void ucx_allreduce_ring(ucx_transport& t, T* data, std::size_t n, reduce_op op) {
  ucx_transport::operation call(t, "allreduce");
  const auto p = static_cast<std::size_t>(t.size());
  const auto r = static_cast<std::size_t>(t.rank());
  const int right = static_cast<int>((r + 1) % p);
  const int left = static_cast<int>((r + p - 1) % p);
  const std::size_t chunk = std::max<std::size_t>(1, t.options().chunk_bytes / sizeof(T));
  const std::size_t steps = 2 * (p - 1);
  const std::size_t max_segment = n / p + (n % p != 0 ? 1 : 0);
  const std::size_t chunks_per_step = (max_segment + chunk - 1) / chunk;
  T* scratch[2] = {reinterpret_cast<T*>(t.scratch(0, max_segment * sizeof(T))),
                   reinterpret_cast<T*>(t.scratch(1, max_segment * sizeof(T)))};

  const auto send_segment = [&](std::size_t s) {
    return s < p - 1 ? (r + p - s) % p : (r + 1 + p - (s - (p - 1))) % p;
  };
  const auto receive_segment = [&](std::size_t s) {
    return s < p - 1 ? (r + 2 * p - s - 1) % p : (r + p - (s - (p - 1))) % p;
  };
  const auto message = [&](std::size_t s, std::size_t c) {
    return static_cast<std::uint32_t>(s * chunks_per_step + c);
  };
  std::vector<std::vector<std::size_t>> sends(steps);    // handles, per step
  std::vector<std::vector<std::size_t>> receives(steps);

  const auto post_receives = [&](std::size_t s) {
    const auto [begin, end] = ucx_part(n, p, receive_segment(s));
    if (s >= p - 1) {
      // Into the buffer: first wait for the send that still reads this segment (step u).
      for (const auto h : sends[s - (p - 1)]) call.wait(h);
    }
    for (std::size_t c = begin; c < end; c += chunk) {
      const std::size_t len = std::min(chunk, end - c);
      T* target = s < p - 1 ? scratch[s % 2] + (c - begin) : data + c;
      receives[s].push_back(call.receive(left, target, len * sizeof(T), message(s, (c - begin) / chunk)));
    }
  };

  {
    const auto [begin, end] = ucx_part(n, p, send_segment(0));
    for (std::size_t c = begin; c < end; c += chunk) {
      sends[0].push_back(call.send(right, data + c, std::min(chunk, end - c) * sizeof(T),
                                   message(0, (c - begin) / chunk)));
    }
  }
  post_receives(0);
  for (std::size_t s = 0; s < steps; ++s) {
    // Reduce-scatter receives go to scratch and can be posted a step ahead.
    if (s + 1 < p - 1) post_receives(s + 1);
    if (s >= p - 1 && s > 0 && receives[s].empty()) post_receives(s);
    const auto [begin, end] = ucx_part(n, p, receive_segment(s));
    std::size_t k = 0;
    for (std::size_t c = begin; c < end; c += chunk, ++k) {
      const std::size_t len = std::min(chunk, end - c);
      call.wait(receives[s][k]);
      if (s < p - 1) ucx_combine(data + c, scratch[s % 2] + (c - begin), data + c, len, op);
      if (s + 1 < steps) sends[s + 1].push_back(call.send(right, data + c, len * sizeof(T), message(s + 1, k)));
    }
  }
  call.wait_all();
}

/// Through the shared-memory segments (all ranks on one host): see exec/ucx/shared_memory.hpp for
/// the three steps of a round.
template <class T>
void ucx_allreduce_shared_memory(ucx_transport& t, T* data, std::size_t n, reduce_op op) {
  ucx_transport::operation call(t, "allreduce");
  ucx_shared_segments& shared = *t.shared_segments();
  const int p = t.size();
  const int r = t.rank();
  const std::size_t block = std::max<std::size_t>(1, shared.capacity() / sizeof(T));
  const auto staged = [&](int q) { return reinterpret_cast<T*>(shared.data(q)); };
  const auto await = [&](int q, std::atomic<std::uint64_t> ucx_segment_header::*counter, std::uint64_t round) {
    const std::atomic<std::uint64_t>& value = shared.header(q).*counter;
    for (std::uint32_t spins = 0; value.load(std::memory_order_acquire) < round; ++spins) call.idle(q, spins);
  };
  ucx_segment_header& mine = shared.header(r);

  std::size_t offset = 0;
  do {  // at least one round, even for n == 0, so that the ranks' counts are compared
    const std::uint64_t round = shared.next_round();
    const std::size_t m = std::min(block, n - offset);
    T* values = data + offset;

    // 1. Stage the parts the others reduce, once they are done with the previous round.
    for (int q = 0; q < p; ++q) {
      if (q != r) await(q, &ucx_segment_header::released, round - 1);
    }
    for (int q = 0; q < p; ++q) {
      if (q == r) continue;
      const auto [begin, end] = ucx_part(m, static_cast<std::size_t>(p), static_cast<std::size_t>(q));
      if (end > begin) std::memcpy(staged(r) + begin, values + begin, (end - begin) * sizeof(T));  // values may be null
    }
    if (offset == 0) mine.count.store(n, std::memory_order_relaxed);
    mine.arrived.store(round, std::memory_order_release);
    for (int q = 0; q < p; ++q) {
      if (q == r) continue;
      await(q, &ucx_segment_header::arrived, round);
      const std::uint64_t theirs = shared.header(q).count.load(std::memory_order_relaxed);
      if (offset == 0 && theirs != n) {
        // Every rank sees some count unlike its own, so every rank throws here.
        call.fail("expected " + std::to_string(n) + " values from rank " + std::to_string(q) + ", found " +
                  std::to_string(theirs) + " (ranks passed different sizes)");
      }
    }

    // 2. Reduce this rank's part in rank order, accumulating in this rank's own staged part
    // (which no peer reads until `reduced`); the last step writes the caller's buffer too.
    // Not a structured binding: the lambda below captures `begin`, which clang before 16 refuses.
    const std::pair<std::size_t, std::size_t> part =
        ucx_part(m, static_cast<std::size_t>(p), static_cast<std::size_t>(r));
    const std::size_t begin = part.first;
    const std::size_t end = part.second;
    const auto source = [&](int q) -> const T* { return (q == r ? values : staged(q)) + begin; };
    T* accumulator = staged(r) + begin;
    for (int q = 1; q < p; ++q) {
      const T* left = q == 1 ? source(0) : accumulator;
      if (q + 1 < p) {
        ucx_combine(accumulator, left, source(q), end - begin, op);
      } else {
        ucx_combine_twice(values + begin, accumulator, left, source(q), end - begin, op);
      }
    }
    mine.reduced.store(round, std::memory_order_release);

    // 3. Copy the others' reduced parts out of their segments.
    for (int q = 0; q < p; ++q) {
      if (q == r) continue;
      await(q, &ucx_segment_header::reduced, round);
      const auto [their_begin, their_end] = ucx_part(m, static_cast<std::size_t>(p), static_cast<std::size_t>(q));
      if (their_end > their_begin) {
        std::memcpy(values + their_begin, staged(q) + their_begin, (their_end - their_begin) * sizeof(T));
      }
    }
    mine.released.store(round, std::memory_order_release);
    offset += m;
  } while (offset < n);
}

template <class T>
void ucx_allreduce(ucx_transport& t, T* data, std::size_t n, reduce_op op) {
  if (t.size() == 1) return;
  if (t.shared_segments() != nullptr) {
    ucx_allreduce_shared_memory(t, data, n, op);
    return;
  }
  if (n * sizeof(T) < t.options().small_message_bytes || n < static_cast<std::size_t>(t.size())) {
    ucx_allreduce_recursive_doubling(t, data, n, op);
  } else {
    ucx_allreduce_ring(t, data, n, op);
  }
}

/// Binomial tree from `root`, chunked so that inner ranks forward a chunk as soon as it lands.
inline void ucx_broadcast(ucx_transport& t, std::byte* data, std::size_t bytes, int root,
                          const char* name = "broadcast") {
  ucx_transport::operation call(t, name);
  const int p = t.size();
  if (root < 0 || root >= p) {
    throw invalid_argument(call.prefix() + "expected 0 <= root < " + std::to_string(p) +
                           ", found " + std::to_string(root));
  }
  if (p == 1 || bytes == 0) return;
  const int relative = (t.rank() - root + p) % p;
  const std::size_t chunk = t.options().chunk_bytes;
  // The parent clears the lowest set bit of `relative`; children add the bits below it.
  int lowest = 1;
  while (lowest < p && (relative & lowest) == 0) lowest <<= 1;
  std::vector<int> children;
  for (int mask = (relative == 0 ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(p))) : lowest) >> 1;
       mask > 0; mask >>= 1) {
    if (relative + mask < p) children.push_back((relative + mask + root) % p);
  }
  std::vector<std::size_t> receives;
  if (relative != 0) {
    const int parent = (relative - lowest + root) % p;
    for (std::size_t c = 0; c < bytes; c += chunk) {
      receives.push_back(call.receive(parent, data + c, std::min(chunk, bytes - c),
                                      static_cast<std::uint32_t>(c / chunk)));
    }
  }
  std::size_t k = 0;
  for (std::size_t c = 0; c < bytes; c += chunk, ++k) {
    if (relative != 0) call.wait(receives[k]);
    for (const int child : children) {
      call.send(child, data + c, std::min(chunk, bytes - c), static_cast<std::uint32_t>(k));
    }
  }
  call.wait_all();
}

/// Every rank's `bytes` bytes, concatenated in rank order, and each rank's byte count. Direct
/// exchange (each rank sends to every other): p-1 messages per rank, all in flight at once.
inline std::pair<std::vector<std::byte>, std::vector<std::int64_t>> ucx_allgatherv(
    ucx_transport& t, const std::byte* data, std::size_t bytes, const char* name = "allgatherv") {
  ucx_transport::operation call(t, name);
  const int p = t.size();
  const int r = t.rank();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
  counts[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(bytes);
  const std::int64_t mine = counts[static_cast<std::size_t>(r)];
  for (int q = 0; q < p; ++q) {
    if (q == r) continue;
    call.receive(q, &counts[static_cast<std::size_t>(q)], sizeof(std::int64_t), 0);
    call.send(q, &mine, sizeof(std::int64_t), 0);
  }
  call.wait_all();
  std::vector<std::size_t> offsets(static_cast<std::size_t>(p) + 1, 0);
  for (std::size_t q = 0; q < static_cast<std::size_t>(p); ++q) {
    offsets[q + 1] = offsets[q] + static_cast<std::size_t>(counts[q]);
  }
  std::vector<std::byte> gathered(offsets.back());
  if (bytes > 0) std::memcpy(gathered.data() + offsets[static_cast<std::size_t>(r)], data, bytes);
  for (int q = 0; q < p; ++q) {
    const auto uq = static_cast<std::size_t>(q);
    if (q == r) continue;
    if (counts[uq] > 0) call.receive(q, gathered.data() + offsets[uq], static_cast<std::size_t>(counts[uq]), 1);
    if (bytes > 0) call.send(q, data, bytes, 1);
  }
  call.wait_all();
  return {std::move(gathered), std::move(counts)};
}

/// The pieces every rank sent to this one, concatenated in rank order: `data` holds
/// send_bytes[q] bytes for rank q after those for ranks 0..q-1. Direct exchange, as allgatherv:
/// the byte counts first (each rank learns what it will receive), then p-1 pieces out and p-1
/// in, all in flight at once; this rank's own piece is copied.
/// `refusal`: not empty when this rank's counts were refused (the caller's message): the rank
/// still takes part in the count exchange, sending -1 to every rank, and every rank throws
/// invalid_argument after it, so that none waits for the others' pieces.
inline std::vector<std::byte> ucx_alltoallv(ucx_transport& t, const std::byte* data,
                                            std::span<const std::size_t> send_bytes,
                                            const std::string& refusal,
                                            const char* name = "alltoallv") {
  ucx_transport::operation call(t, name);
  const auto p = static_cast<std::size_t>(t.size());
  const auto r = static_cast<std::size_t>(t.rank());
  std::vector<std::int64_t> outgoing(p, -1);
  if (refusal.empty()) std::copy(send_bytes.begin(), send_bytes.end(), outgoing.begin());
  std::vector<std::int64_t> incoming(p, 0);
  incoming[r] = outgoing[r];
  for (std::size_t q = 0; q < p; ++q) {
    if (q == r) continue;
    call.receive(static_cast<int>(q), &incoming[q], sizeof(std::int64_t), 0);
    call.send(static_cast<int>(q), &outgoing[q], sizeof(std::int64_t), 0);
  }
  call.wait_all();
  if (!refusal.empty()) throw invalid_argument(refusal);
  for (std::size_t q = 0; q < p; ++q) {
    if (incoming[q] < 0) {
      throw invalid_argument(call.prefix() + "rank " + std::to_string(q) +
                             "'s counts were refused (expected one per rank, >= 0, summing to its "
                             "values; that rank's error says which)");
    }
  }
  std::vector<std::size_t> send_offsets(p + 1, 0);
  for (std::size_t q = 0; q < p; ++q) send_offsets[q + 1] = send_offsets[q] + send_bytes[q];
  std::vector<std::size_t> offsets(p + 1, 0);
  for (std::size_t q = 0; q < p; ++q) offsets[q + 1] = offsets[q] + static_cast<std::size_t>(incoming[q]);
  std::vector<std::byte> received(offsets.back());
  if (send_bytes[r] > 0) std::memcpy(received.data() + offsets[r], data + send_offsets[r], send_bytes[r]);
  for (std::size_t q = 0; q < p; ++q) {
    if (q == r) continue;
    if (incoming[q] > 0) {
      call.receive(static_cast<int>(q), received.data() + offsets[q], static_cast<std::size_t>(incoming[q]), 1);
    }
    if (send_bytes[q] > 0) call.send(static_cast<int>(q), data + send_offsets[q], send_bytes[q], 1);
  }
  call.wait_all();
  return received;
}

/// Dissemination barrier: ceil(log2 p) rounds of empty messages.
inline void ucx_barrier(ucx_transport& t) {
  ucx_transport::operation call(t, "barrier");
  const int p = t.size();
  const int r = t.rank();
  std::uint32_t round = 0;
  for (int distance = 1; distance < p; distance <<= 1, ++round) {
    const auto received = call.receive((r - distance + p) % p, nullptr, 0, round);
    const auto sent = call.send((r + distance) % p, nullptr, 0, round);
    call.wait(received);
    call.wait(sent);
  }
  call.wait_all();
}

}  // namespace onelearn::exec::detail
