#pragma once
// ONELEARN_BEGIN_NO_FMA / ONELEARN_END_NO_FMA: no fused multiply-add between them, whatever the
// flags. With -march=native GCC fuses a * b + c into one rounding; where onelearn reproduces
// scikit-learn's arithmetic to the bit (the trees' split criteria, histogram boosting's bins
// and gains), a fused sum would round differently and two exactly equal candidates could compare
// the other way round: another tree (measured: a different node 1320 of 4589 on the tree
// benchmark at -O3 -march=native). Wrap whole namespaces of such headers, not single functions:
// GCC does not inline across functions compiled with different options.
//
// GCC only: Clang contracts within one expression by default (-ffp-contract=on) and has no
// scoped way to turn it off for a header's functions at namespace scope.
//
// Under nvcc the pragmas reach g++, which compiles the host code; nvcc's own front end does not
// know them and would warn (#1675-D, "unrecognized GCC pragma") at every use: silenced there.

#if defined(__CUDACC__) && defined(__GNUC__) && !defined(__clang__)
#define ONELEARN_BEGIN_NO_FMA                                                              \
  _Pragma("nv_diagnostic push") _Pragma("nv_diag_suppress 1675") _Pragma("GCC push_options") \
      _Pragma("GCC optimize(\"fp-contract=off\")") _Pragma("nv_diagnostic pop")
#define ONELEARN_END_NO_FMA                                                                 \
  _Pragma("nv_diagnostic push") _Pragma("nv_diag_suppress 1675") _Pragma("GCC pop_options") \
      _Pragma("nv_diagnostic pop")
#elif defined(__GNUC__) && !defined(__clang__)
#define ONELEARN_BEGIN_NO_FMA _Pragma("GCC push_options") _Pragma("GCC optimize(\"fp-contract=off\")")
#define ONELEARN_END_NO_FMA _Pragma("GCC pop_options")
#else
#define ONELEARN_BEGIN_NO_FMA
#define ONELEARN_END_NO_FMA
#endif
