#!/usr/bin/env bash
# Installs onelearn's build and test dependencies on Debian 12, and only what is missing,
# so running it twice costs one dpkg query.
#
# Never add python3-sklearn here: it pulls Boost 1.74 headers, which shadow the Boost 1.81
# that Boost.PFR needs.
set -euo pipefail

packages=(
  g++ cmake ccache make
  libeigen3-dev libxtensor-dev libboost1.81-dev doctest-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin libucx-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libthrust-dev libtbb-dev libopenblas-dev  # the Thrust compute spaces (cpp, omp, tbb)
  libcli11-dev pkg-config  # the tools' argument parsing; the pkg-config file's test
  clang libclang-rt-14-dev  # libFuzzer, for the ONNX loader's fuzz target
  python3-jsonschema  # run_k8s: onelearn-run k8s's MPIJob against the CRD's schema (tests/k8s/)
  python3-matplotlib  # script_plot: scripts/plot.py draws its pictures
  doxygen  # docs_doxygen: scripts/docs.sh builds the reference manual (docs/Doxyfile)
)
# Node runs onnxruntime (the npm package onnxruntime-node) in the ONNX export tests. A Node
# that is already installed (NodeSource's nodejs ships npm) is used as it is.
if ! command -v npm >/dev/null; then packages+=(nodejs npm); fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
