// onelearn-space-bench-cuda: space_bench.cpp compiled by nvcc, so that --space cuda exists
// (space::thrust_cuda needs its kernels compiled for the device). Built with ONELEARN_CUDA=ON;
// scripts/test-gpu.sh builds and runs it.
#include "space_bench.cpp"
