#!/usr/bin/env bash
# Runs every test suite of qvl against the build in $1 (default build/).
set -euo pipefail
build=${1:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
