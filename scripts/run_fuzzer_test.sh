#!/usr/bin/env bash
# Tests scripts/run_fuzzer.sh with stand-in fuzzers: a finding leaves finding.txt with the
# report and the minimized input in base64, and the fuzzer's exit status; a clean run
# leaves none.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "run_fuzzer_test: $*" >&2
  exit 1
}

# Finds a 5000-byte crash; asked to minimize it, writes 100 bytes.
cat >"$work/crashing" <<'FUZZER'
#!/usr/bin/env bash
for a in "$@"; do
  case $a in
    -artifact_prefix=*) prefix=${a#-artifact_prefix=} ;;
    -exact_artifact_path=*) head -c 100 /dev/zero | tr '\0' 'q' >"${a#-exact_artifact_path=}"; exit 0 ;;
  esac
done
echo "INFO: Seed: 1"
echo "src/x.cc:1:2: runtime error: load of value 142, which is not a valid value"
echo "SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior src/x.cc:1:2"
head -c 5000 /dev/zero >"${prefix}crash-abc"
echo "stat::number_of_executed_units: 10"
exit 1
FUZZER
printf '#!/usr/bin/env bash\necho "Done 10 runs"\n' >"$work/clean"
chmod +x "$work/crashing" "$work/clean"

mkdir "$work/found" "$work/quiet"
"$here/run_fuzzer.sh" "$work/found" "$work/crashing" -max_total_time=1 >"$work/out" 2>&1
status=$?
[ "$status" -eq 1 ] || fail "a finding should keep the fuzzer's exit status 1, got $status"
finding=$work/found/finding.txt
[ -f "$finding" ] || fail "no finding.txt"
grep -q "^==== crashing found (exit status 1):" "$finding" || fail "no header in finding.txt"
grep -q "runtime error: load of value 142" "$finding" || fail "the report is missing"
grep -q "^==== input crash-abc.min: 100 bytes" "$finding" || fail "the minimized input is not named"
grep -qx "$(head -c 100 /dev/zero | tr '\0' 'q' | base64 -w 100 | head -n 1)" "$finding" ||
  fail "the minimized input is not in base64"
[ "$(tail -n 1 "$work/out")" = "$(tail -n 1 "$finding")" ] || fail "the finding is not printed last"

"$here/run_fuzzer.sh" "$work/quiet" "$work/clean" >/dev/null 2>&1 || fail "a clean run failed"
[ ! -e "$work/quiet/finding.txt" ] || fail "a clean run left a finding"
echo "run_fuzzer_test: passed"
