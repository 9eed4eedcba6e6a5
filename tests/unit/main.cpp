// The single-process test runner. Tests that draw random numbers print their seed on failure.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
