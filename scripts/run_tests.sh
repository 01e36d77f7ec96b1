#!/usr/bin/env bash
# Runs every test suite of qvl against the build in $1 (default build/), then the
# hardening stages in build folders beside it:
#   normal  ctest in $1 (unit, golden, server, web and the 60 s soak)
#   asan    $1-asan: the unit, engine and server tests again under AddressSanitizer +
#           UndefinedBehaviorSanitizer (leaks included); only tests labelled "slow"
#           (the biggest golden model runs), "web", "soak" and "replicas" (nginx and
#           Redis around the built qvl) are left out
#   fuzz    $1-fuzz (clang): every libFuzzer target for QVL_FUZZ_SECONDS (20) seconds
#           from its seed corpus (scripts/run_fuzzer.sh; findings printed again last)
#   arm     $1's files with CPU-specific code compiled for aarch64 by the cross compiler
#           (scripts/check_arm.sh; `scripts/check_arm.sh build --all` compiles every file),
#           then $1-arm: the kernels' tests built for aarch64 and run under qemu on a CPU
#           with dotprod and one without (`scripts/check_arm.sh --run $1-arm`)
# QVL_TEST_STAGES picks stages (default "arm normal asan fuzz"); each prints its duration.
set -euo pipefail
build=${1:-build}
stages=${QVL_TEST_STAGES:-arm normal asan fuzz}
jobs=$(nproc)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
fuzz_seconds=${QVL_FUZZ_SECONDS:-20}

# Sanitizer reports stop the test and name where they come from.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

timed() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== stage $name"
  "$@"
  echo "== stage $name passed in $((SECONDS - start)) s"
}

normal_stage() {
  ctest --test-dir "$build" --output-on-failure -j"$jobs"
}

asan_stage() {
  local dir=${build}-asan
  local skip='slow|web|soak|replicas'
  # -O1 with line tables: fast enough to run the model tests, and reports name lines.
  cmake -S "$source_dir" -B "$dir" -DQVL_SANITIZE=ON -DQVL_WEB=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null
  # Only what the tests run: their binaries (targets named like the tests) and qvl.
  local targets=(qvl) test
  local known
  known=$(cmake --build "$dir" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
  for test in $(ctest --test-dir "$dir" -N -LE "$skip" | sed -n 's/^ *Test *#[0-9]*: //p'); do
    if grep -qx "$test" <<<"$known"; then targets+=("$test"); fi
  done
  cmake --build "$dir" -j"$jobs" --target "${targets[@]}"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" -LE "$skip"
}

fuzz_stage() {
  local dir=${build}-fuzz
  CC=clang CXX=clang++ cmake -S "$source_dir" -B "$dir" -DQVL_FUZZ=ON -DQVL_WEB=OFF \
    -DQVL_FUZZ_SECONDS="$fuzz_seconds" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" >/dev/null
  cmake --build "$dir" -j"$jobs" --target qvl_fuzzers
  # A finding is printed again last, where a CI log's tail keeps it.
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" -L fuzz ||
    { cat "$dir"/fuzz/*/finding.txt 2>/dev/null; return 1; }
}

arm_stage() {
  "$source_dir/scripts/check_arm.sh" "$build"
  "$source_dir/scripts/check_arm.sh" --run "${build}-arm"
}

total_start=$SECONDS
for stage in $stages; do
  case $stage in
    normal) timed normal normal_stage ;;
    asan) timed asan asan_stage ;;
    fuzz) timed fuzz fuzz_stage ;;
    arm) timed arm arm_stage ;;
    *)
      echo "run_tests.sh: unknown stage '$stage' (arm, normal, asan, fuzz)" >&2
      exit 2
      ;;
  esac
done
echo "== all stages passed in $((SECONDS - total_start)) s"
