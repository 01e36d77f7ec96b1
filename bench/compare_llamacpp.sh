#!/usr/bin/env bash
# Side-by-side speed of qvl and llama.cpp on this machine, in one session, same model,
# same image, same prompt, same thread count: qvl bench against llama-bench (pp512,
# tg128, and the request's prompt / decode sizes), and qvl run against llama-mtmd-cli
# (the image request in a fresh process: wall time and peak RSS under GNU time; vision
# encode), medians of RUNS. Writes the logs and a
# markdown table (qvl / llama.cpp and their ratio per stage) to OUT_DIR.
#
# llama.cpp is built outside this repository and nothing of it is vendored: give its
# source folder (with build/bin/llama-bench, llama-mtmd-cli and llama-quantize).
#
#   LLAMA_CPP_DIR=/work/llama/llama.cpp bench/compare_llamacpp.sh MODEL_DIR [OUT_DIR]
#
# Environment (defaults): QVL=./build/qvl  IMAGE=bench/bench-1024x768.jpg
#   PROMPT="Describe this image."  TOKENS=64  THREADS=<physical cores>  RUNS=3
#   VARIANTS="bf16 q8 q4"  GGUF_DIR=OUT_DIR/gguf  MMPROJ=F16 (or BF16)  CTX=4096
# The GGUF files are made once (bench/hf_to_gguf.py, then llama-quantize for Q8_0 and
# Q4_K_M) and reused. qvl variant -> llama.cpp file: bf16 -> BF16, q8 -> Q8_0,
# q4 -> Q4_K_M; the vision tower uses qvl's default weights and llama.cpp's mmproj.
set -euo pipefail

MODEL_DIR=${1:?usage: LLAMA_CPP_DIR=... $0 MODEL_DIR [OUT_DIR]}
OUT_DIR=${2:-bench-results/compare-$(date +%Y%m%d-%H%M%S)}
: "${LLAMA_CPP_DIR:?set LLAMA_CPP_DIR to a llama.cpp source folder with build/bin}"
HERE=$(cd "$(dirname "$0")" && pwd)
QVL=${QVL:-./build/qvl}
IMAGE=${IMAGE:-$HERE/bench-1024x768.jpg}
PROMPT=${PROMPT:-Describe this image.}
TOKENS=${TOKENS:-64}
THREADS=${THREADS:-$(lscpu -p=Core,Socket | grep -v '^#' | sort -u | wc -l)}
RUNS=${RUNS:-3}
VARIANTS=${VARIANTS:-bf16 q8 q4}
GGUF_DIR=${GGUF_DIR:-$OUT_DIR/gguf}
MMPROJ=${MMPROJ:-F16}
CTX=${CTX:-4096}  # the model's 256K default context would reserve tens of GB of KV cache
BIN=$LLAMA_CPP_DIR/build/bin
PY=/usr/bin/python3

for tool in llama-bench llama-mtmd-cli llama-quantize; do
  [[ -x $BIN/$tool ]] || { echo "missing $BIN/$tool (build llama.cpp first)" >&2; exit 1; }
done
[[ -x $QVL ]] || { echo "missing $QVL (make build)" >&2; exit 1; }
mkdir -p "$OUT_DIR" "$GGUF_DIR"

gguf_name() { case $1 in bf16) echo BF16 ;; q8) echo Q8_0 ;; q4) echo Q4_K_M ;; esac; }

# GGUF files, made once.
if [[ ! -f $GGUF_DIR/text-BF16.gguf || ! -f $GGUF_DIR/mmproj-$MMPROJ.gguf ]]; then
  $PY "$HERE/hf_to_gguf.py" "$MODEL_DIR" "$GGUF_DIR" --llama-cpp "$LLAMA_CPP_DIR" \
    --text-type bf16 --mmproj-type "${MMPROJ,,}"
fi
for v in $VARIANTS; do
  f=$GGUF_DIR/text-$(gguf_name "$v").gguf
  [[ -f $f ]] || "$BIN/llama-quantize" "$GGUF_DIR/text-BF16.gguf" "$f" "$(gguf_name "$v")" \
    "$THREADS" > "$OUT_DIR/quantize-$v.log" 2>&1
done

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $THREADS threads; load: $(cut -d' ' -f1-3 /proc/loadavg)" \
  | tee "$OUT_DIR/machine.txt"

# A step whose result is already in OUT_DIR is skipped, so an interrupted comparison can
# be resumed by running the same command again.
done_already() { [[ -s $1 ]] && grep -q "$2" "$1"; }

for v in $VARIANTS; do
  text=$GGUF_DIR/text-$(gguf_name "$v").gguf
  if ! done_already "$OUT_DIR/qvl-$v.json" decode_tok_s; then
    echo "== $v: qvl bench"
    "$QVL" bench -m "$MODEL_DIR" --image "$IMAGE" --prompt "$PROMPT" --tokens "$TOKENS" \
      --dtype "$v" --threads "$THREADS" --runs "$RUNS" --json > "$OUT_DIR/qvl-$v.json"
  fi
  if ! done_already "$OUT_DIR/qvl-tg-$v.json" decode_tok_s; then
    echo "== $v: qvl bench, text only, 128 tokens (llama-bench's tg128)"
    "$QVL" bench -m "$MODEL_DIR" --prompt "Hi" --tokens 128 --dtype "$v" \
      --threads "$THREADS" --runs "$RUNS" --json > "$OUT_DIR/qvl-tg-$v.json"
  fi
  # Peak RSS and wall time of the whole request in a fresh process, measured the way
  # llama-mtmd-cli's are below.
  for r in $(seq 1 "$RUNS"); do
    done_already "$OUT_DIR/qvl-run-$v-$r.log" "Exit status: 0" && continue
    echo "== $v: qvl run $r"
    /usr/bin/time -v "$QVL" run -m "$MODEL_DIR" --image "$IMAGE" -n "$TOKENS" --ignore-eos \
      --dtype "$v" --vision-dtype q8 -t "$THREADS" "$PROMPT" \
      > "$OUT_DIR/qvl-run-$v-$r.out" 2> "$OUT_DIR/qvl-run-$v-$r.log"
  done
  if ! done_already "$OUT_DIR/llama-bench-$v.json" avg_ts; then
    echo "== $v: llama-bench pp512 / tg128"
    "$BIN/llama-bench" -m "$text" -p 512 -n 128 -t "$THREADS" -r "$RUNS" -o json \
      > "$OUT_DIR/llama-bench-$v.json" 2> "$OUT_DIR/llama-bench-$v.log"
  fi
  # llama-mtmd-cli times the vision encode but not the prompt and the decode (its
  # closing perf report is lost on exit), so those come from llama-bench at the request's
  # sizes: the prompt's tokens, then TOKENS decoded at that depth.
  n_prompt=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['prompt_tokens'])" \
    "$OUT_DIR/qvl-$v.json")
  if ! done_already "$OUT_DIR/llama-request-$v.json" avg_ts; then
    echo "== $v: llama-bench pp$n_prompt, tg$TOKENS at depth $n_prompt"
    { "$BIN/llama-bench" -m "$text" -p "$n_prompt" -n 0 -t "$THREADS" -r "$RUNS" -o json
      "$BIN/llama-bench" -m "$text" -p 0 -n "$TOKENS" -d "$n_prompt" -t "$THREADS" -r "$RUNS" \
        -o json; } > "$OUT_DIR/llama-request-$v.json" 2> "$OUT_DIR/llama-request-$v.log"
  fi
  for r in $(seq 1 "$RUNS"); do
    done_already "$OUT_DIR/mtmd-$v-$r.log" "Exit status: 0" && continue
    echo "== $v: llama-mtmd-cli run $r"
    /usr/bin/time -v "$BIN/llama-mtmd-cli" -m "$text" --mmproj "$GGUF_DIR/mmproj-$MMPROJ.gguf" \
      --image "$IMAGE" -p "$PROMPT" -n "$TOKENS" --ignore-eos --temp 0 -t "$THREADS" -c "$CTX" \
      > "$OUT_DIR/mtmd-$v-$r.out" 2> "$OUT_DIR/mtmd-$v-$r.log"
  done
done

$PY "$HERE/compare_report.py" "$OUT_DIR" $VARIANTS | tee "$OUT_DIR/report.md"
