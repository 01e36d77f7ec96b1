#!/usr/bin/env bash
# The fuzz tests' runner (CMakeLists.txt's qvl_fuzzer): runs a libFuzzer target and, when
# it finds something, keeps the finding in ARTIFACT_DIR/finding.txt: the report (which
# libFuzzer prints mid-log, before its statistics) and the input that triggers it,
# minimized for up to a minute and spelled out in base64 when small enough to copy from
# a CI log (libFuzzer spells out only inputs of a few hundred bytes). run_tests.sh
# prints every finding again at the end of the fuzz stage.
# Usage: run_fuzzer.sh ARTIFACT_DIR FUZZER [libFuzzer arguments...]
set -uo pipefail
artifacts=$1
fuzzer=$2
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rm -f "$artifacts/finding.txt"
"$@" -artifact_prefix="$artifacts/" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && exit 0

finding=$artifacts/finding.txt
{
  echo "==== $(basename "$fuzzer") found (exit status $status):"
  grep -m1 -A40 -E 'ERROR: |runtime error:|ALARM|out-of-memory' "$log" | grep -v 'NEW_FUNC'
} >"$finding"
for input in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
  [[ -f $input && $input != *.min ]] || continue
  small=$input
  if [ "$(stat -c %s "$input")" -gt 3072 ]; then
    "$fuzzer" -minimize_crash=1 -max_total_time=60 -exact_artifact_path="$input.min" "$input" \
      >/dev/null 2>&1
    [ -f "$input.min" ] && small=$input.min
  fi
  {
    echo "==== input $(basename "$small"): $(stat -c %s "$small") bytes"
    if [ "$(stat -c %s "$small")" -le 3072 ]; then base64 -w 100 "$small"; fi
  } >>"$finding"
done
cat "$finding"
exit "$status"
