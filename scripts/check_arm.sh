#!/usr/bin/env bash
# Compiles qvl for 64-bit ARM (aarch64) with Debian's cross compiler, as `make` on an ARM
# machine would: every command of the x86-64 build in $1 (default build/, from its
# compile_commands.json) with its flags, warnings as errors, less the x86 kernel tiers
# (the files built with -mavx* or -mamx*). Only the compiler runs (objects go to
# /dev/null), so no ARM libraries are needed: headers come from the cross sysroot first,
# then from this machine's /usr/include.
#   scripts/check_arm.sh [BUILD]        the files with CPU-specific code (what CI runs)
#   scripts/check_arm.sh [BUILD] --all  every file, tests included (about 20 CPU-minutes)
# Needs aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu; scripts/setup.sh installs it).
set -euo pipefail
build=${1:-build}
scope=${2:-}
if [ "$(uname -m)" = aarch64 ]; then
  echo "check_arm: this machine is aarch64: its own build is the ARM build"
  exit 0
fi
compiler=aarch64-linux-gnu-g++
command -v "$compiler" >/dev/null || {
  echo "check_arm: $compiler is missing (apt-get install g++-aarch64-linux-gnu)" >&2
  exit 1
}
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
