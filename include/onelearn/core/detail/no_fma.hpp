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

#if defined(__GNUC__) && !defined(__clang__)
#define ONELEARN_BEGIN_NO_FMA _Pragma("GCC push_options") _Pragma("GCC optimize(\"fp-contract=off\")")
#define ONELEARN_END_NO_FMA _Pragma("GCC pop_options")
#else
#define ONELEARN_BEGIN_NO_FMA
#define ONELEARN_END_NO_FMA
#endif
