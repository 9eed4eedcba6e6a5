#pragma once
// A benchmark compiled without optimisation says so on stderr before it times anything:
// scripts/test.sh builds bench/ at -O0 (ONELEARN_BENCH_OPTIMIZE=OFF), since its tests only run
// --help and --version, and such a binary must not be mistaken for one that measures.
#include <cstdio>

namespace onelearn::bench {

inline void warn_if_unoptimised(const char* program) {
#ifndef __OPTIMIZE__
  std::fprintf(stderr,
               "%s: compiled without optimisation (ONELEARN_BENCH_OPTIMIZE=OFF, as scripts/test.sh "
               "builds it): its timings mean nothing; build it as bench/README.md says\n",
               program);
#else
  (void)program;
#endif
}

}  // namespace onelearn::bench
