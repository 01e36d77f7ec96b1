#!/usr/bin/env bash
# Checks qvl for 64-bit ARM (aarch64) on another machine, with Debian's cross compiler.
#
# Compile check: every command of the x86-64 build in BUILD (default build/, from its
# compile_commands.json) with its flags, warnings as errors, less the x86 kernel tiers
# (the files built with -mavx* or -mamx*), as `make` on an ARM machine would. Only the
# compiler runs (objects go to /dev/null), so no ARM libraries are needed: headers come
# from the cross sysroot first, then from this machine's /usr/include.
#   scripts/check_arm.sh [BUILD]        the files with CPU-specific code (what CI runs)
#   scripts/check_arm.sh [BUILD] --all  every file, tests included (about 20 CPU-minutes)
#
# Run check: builds the kernels and their tests (base_test, ops_test) for aarch64 into
# DIR (default build-arm; cmake/aarch64-linux-gnu.cmake, QVL_KERNELS_ONLY) and runs them
# under qemu user-mode emulation on two CPU models: "max" (NEON, dotprod, bf16, i8mm)
# and cortex-a57 (NEON without dotprod, as Cortex-A53/A72 boards), so the kernels with
# and without dot products are both dispatched. Each run prints the CPU line qvl
# detected; arguments after DIR go to ops_test (e.g. --gtest_filter='PackedKernels*').
# Logs go to DIR/qemu-CPU-TEST.log. The emulator is the toolchain file's, from DIR's cache.
#   scripts/check_arm.sh --run [DIR] [ops_test arguments...]
#
# Needs aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu) and, to run, qemu-aarch64
# (qemu-user) and GoogleTest's sources (googletest); scripts/setup.sh installs them.
set -euo pipefail
if [ "$(uname -m)" = aarch64 ]; then
  echo "check_arm: this machine is aarch64: its own build is the ARM build"
  exit 0
fi
compiler=aarch64-linux-gnu-g++
command -v "$compiler" >/dev/null || {
  echo "check_arm: $compiler is missing (apt-get install g++-aarch64-linux-gnu)" >&2
  exit 1
}

# The run check: build, then each CPU model's runs; every run happens, and any failure
# fails the check at the end.
run_check() {
  local dir=${1:-build-arm}
  shift || true
  local source_dir
  source_dir=$(cd "$(dirname "$0")/.." && pwd)
  command -v qemu-aarch64 >/dev/null || {
    echo "check_arm: qemu-aarch64 is missing (apt-get install qemu-user)" >&2
    exit 1
  }
  [ -f /usr/src/googletest/CMakeLists.txt ] || {
    echo "check_arm: /usr/src/googletest is missing (apt-get install googletest)" >&2
    exit 1
  }
  local start=$SECONDS
  cmake -S "$source_dir" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$source_dir/cmake/aarch64-linux-gnu.cmake" \
    -DQVL_KERNELS_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target base_test ops_test
  echo "check_arm: built for aarch64 in $((SECONDS - start)) s"
  local emulator
  read -ra emulator <<<"$(sed -n 's/^CMAKE_CROSSCOMPILING_EMULATOR:[A-Z]*=//p' "$dir/CMakeCache.txt" | tr ';' ' ')"
  [ ${#emulator[@]} -gt 0 ] || {
    echo "check_arm: $dir/CMakeCache.txt names no emulator: configure it with the toolchain file" >&2
    exit 1
  }
  local failed=()
  # run_test CPU BINARY ARGS...: one test binary on one emulated CPU; its output goes to
  # a log, of which the summary is shown, or all of it when the test fails.
  run_test() {
    local cpu=$1 binary=$2
    shift 2
    local log
    log=$dir/qemu-$cpu-$(basename "$binary").log
    # qemu-aarch64 reads QEMU_CPU itself.
    if QEMU_CPU=$cpu "${emulator[@]}" "$binary" --gtest_brief=1 "$@" >"$log" 2>&1; then
      grep -E '^CPU: |^\[  (PASSED|SKIPPED) +\] [0-9]' "$log" || true
    else
      failed+=("-cpu $cpu $(basename "$binary") (log: $log)")
      # --gtest_brief keeps the log to the failures and the summary (or a crash's end).
      tail -n 200 "$log"
    fi
  }
  local cpu t
  for cpu in max cortex-a57; do
    t=$SECONDS
    echo "check_arm: qemu-aarch64 -cpu $cpu"
    run_test "$cpu" "$dir/src/base/base_test"
    run_test "$cpu" "$dir/src/ops/ops_test" "$@"
    echo "check_arm: -cpu $cpu took $((SECONDS - t)) s"
  done
  if [ ${#failed[@]} -gt 0 ]; then
    printf 'check_arm: FAILED under qemu: %s\n' "${failed[@]}" >&2
    exit 1
  fi
  echo "check_arm: base_test and ops_test pass for aarch64 under qemu in $((SECONDS - start)) s"
}
if [ "${1:-}" = --run ]; then
  run_check "${@:2}"
  exit 0
fi
build=${1:-build}
scope=${2:-}
[ -f "$build/compile_commands.json" ] || {
  echo "check_arm: $build/compile_commands.json is missing: configure $build with cmake first" >&2
  exit 1
}
commands=$(mktemp)
trap 'rm -f "$commands"' EXIT
python3 - "$build/compile_commands.json" "$compiler" "$scope" >"$commands" <<'PY'
import json, re, shlex, sys

path, compiler, scope = sys.argv[1:4]
# Code that differs by CPU: where an ARM build can break while x86-64 passes.
cpu_specific = re.compile(rb"__x86_64__|__aarch64__|__ARM_NEON|immintrin|arm_neon|__AVX")
for entry in json.load(open(path)):
    source = entry["file"]
    args = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
    if any(a.startswith(("-mavx", "-mamx")) for a in args):
        continue  # an x86 tier: not built on ARM
    if scope != "--all" and not cpu_specific.search(open(source, "rb").read()):
        continue
    cross, skip = [compiler], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a not in ("-c", source):
            cross.append(a)
    cross += ["-idirafter", "/usr/include", "-idirafter", "/usr/include/x86_64-linux-gnu",
              "-c", "-o", "/dev/null", source]
    sys.stdout.write(" ".join(shlex.quote(a) for a in cross) + "\0")
PY
count=$(tr -cd '\0' <"$commands" | wc -c)
echo "check_arm: compiling $count files for aarch64"
xargs -0 -P"$(nproc)" -n1 bash -c <"$commands"
echo "check_arm: $count files compile for aarch64"
