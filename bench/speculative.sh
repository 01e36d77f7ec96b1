#!/usr/bin/env bash
# Speculative decoding on and off, side by side: `qvl run --json` with --draft-tokens 0
# and DRAFT alternating, ROUNDS rounds, greedy with EOS ignored; prints per setting the
# median decode rate and the drafted and kept tokens, and fails if an answer with drafts
# differs from the one without (it never should: see README "Speculative decoding").
# Usage: bench/speculative.sh MODEL_DIR [DTYPE] [ROUNDS] [-- qvl run arguments...]
#   e.g. bench/speculative.sh M q8 3 -- "Copy this list exactly: apples, pears, plums."
#        bench/speculative.sh M q8 3 -- --request bench/some_request.json
# Environment: QVL (default build/qvl), THREADS (2), TOKENS (128), DRAFT (3),
# WEIGHT_CACHE (qvl's default cache when unset).
set -euo pipefail
model=$1 dtype=${2:-q8} rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
[[ ${1:-} == "--" ]] && shift
[[ $# -gt 0 ]] || set -- "Copy this list exactly: apples, pears, plums, cherries, apples, pears."
qvl=${QVL:-build/qvl} threads=${THREADS:-2} tokens=${TOKENS:-128} draft=${DRAFT:-3}
out=$(mktemp -d)
common=(-m "$model" --dtype "$dtype" --threads "$threads" --temperature 0 --ignore-eos
        -n "$tokens" --json -q)
[[ -n ${WEIGHT_CACHE:-} ]] && common+=(--weight-cache "$WEIGHT_CACHE")
for round in $(seq 1 "$rounds"); do
  for d in 0 "$draft"; do
    echo "== round $round: --draft-tokens $d ($(date -u +%H:%M:%S))" >&2
    "$qvl" run "${common[@]}" --draft-tokens "$d" "$@" > "$out/d$d-$round.json"
  done
done
python3 - "$out" "$rounds" "$draft" <<'PY'
import json, statistics, sys
out, rounds, draft = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(d, r):
    with open(f"{out}/d{d}-{r}.json") as f:
        return json.load(f)
rates = {"0": [], draft: []}
for r in range(1, rounds + 1):
    off, on = load("0", r), load(draft, r)
    if off["choices"][0]["message"]["content"] != on["choices"][0]["message"]["content"]:
        sys.exit(f"round {r}: the answer with drafts differs from the one without")
    for d, resp in (("0", off), (draft, on)):
        rates[d].append(resp["timings"]["decode_tokens_per_s"])
t = load(draft, 1)["timings"]
u = load(draft, 1)["usage"]
print(f"answer tokens {u['completion_tokens']}, drafted {t.get('draft_n', 0)}, "
      f"kept {t.get('draft_n_accepted', 0)}; answers identical in {rounds} rounds")
off, on = statistics.median(rates["0"]), statistics.median(rates[draft])
print(f"decode --draft-tokens 0: {off:.2f} tok/s (" + ", ".join(f"{x:.2f}" for x in rates["0"]) + ")")
print(f"decode --draft-tokens {draft}: {on:.2f} tok/s (" + ", ".join(f"{x:.2f}" for x in rates[draft]) + ")")
print(f"ratio {on / off:.2f}x")
PY
rm -rf "$out"
