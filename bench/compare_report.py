#!/usr/bin/python3
"""Markdown table of a bench/compare_llamacpp.sh run: qvl against llama.cpp per stage,
medians of the runs, and the ratio (how many times faster qvl is; > 1 favours qvl).

Usage: /usr/bin/python3 bench/compare_report.py OUT_DIR VARIANT...   (standard library)
"""

import glob
import json
import re
import statistics
import sys
from pathlib import Path


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def timed_run(log_path):
    """Vision encode (llama-mtmd-cli only), wall time and peak RSS of one run of
    llama-mtmd-cli or qvl run (its stderr, with GNU time's report)."""
    text = Path(log_path).read_text(errors="replace")

    def find(pattern, cast=float):
        m = re.search(pattern, text)
        return cast(m.group(1)) if m else None

    run = {
        "vision_ms": find(r"mtmd batch encoding done in (\d+) ms"),
        "rss_kib": find(r"Maximum resident set size \(kbytes\): (\d+)", int),
        "cpu_s": None,
        "wall_s": None,
    }
    user, system = find(r"User time \(seconds\): ([\d.]+)"), find(r"System time \(seconds\): ([\d.]+)")
    if user is not None and system is not None:
        run["cpu_s"] = user + system
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
    if m:
        run["wall_s"] = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    return run


def llama_bench(path):
    """tok/s of the prompt test ("pp") and the generation test ("tg") in a file of one or
    more concatenated llama-bench -o json arrays."""
    out = {}
    try:
        text = Path(path).read_text()
    except OSError:
        return out
    decoder, pos = json.JSONDecoder(), 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            rows, pos = decoder.raw_decode(text, pos)
        except ValueError:
            break
        for row in rows:
            out["pp" if row.get("n_gen", 0) == 0 else "tg"] = row.get("avg_ts")
    return out


def fmt(v, digits=1):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def ratio(qvl, llama, higher_is_better):
    if qvl is None or llama is None or qvl == 0 or llama == 0:
        return "n/a"
    r = qvl / llama if higher_is_better else llama / qvl
    return f"{r:.2f}x"


def main():
    out_dir = Path(sys.argv[1])
    variants = sys.argv[2:]
    machine = (out_dir / "machine.txt").read_text().strip() if (out_dir / "machine.txt").exists() else ""
    print(f"# qvl vs llama.cpp ({machine})\n")
    print("Ratio = how many times better qvl is (time: llama/qvl, speed: qvl/llama).\n")
    for v in variants:
        q = json.loads((out_dir / f"qvl-{v}.json").read_text())
        runs = [timed_run(p) for p in sorted(glob.glob(str(out_dir / f"mtmd-{v}-*.log")))]
        qvl_runs = [timed_run(p) for p in sorted(glob.glob(str(out_dir / f"qvl-run-{v}-*.log")))]
        qvl_tg_path = out_dir / f"qvl-tg-{v}.json"
        qvl_tg = json.loads(qvl_tg_path.read_text()) if qvl_tg_path.exists() else {}
        lb = llama_bench(out_dir / f"llama-bench-{v}.json")
        request = llama_bench(out_dir / f"llama-request-{v}.json")
        vision = median([r["vision_ms"] for r in runs])
        prompt = q["prompt_tokens"] / request["pp"] * 1e3 if request.get("pp") else None
        decode = request.get("tg")
        ttft = vision + prompt if vision is not None and prompt is not None else None
        wall = median([r["wall_s"] for r in runs])
        rss = median([r["rss_kib"] for r in runs])
        qvl_wall = median([r["wall_s"] for r in qvl_runs])
        qvl_rss = median([r["rss_kib"] for r in qvl_runs])
        rows = [
            ("vision encode (ms)", q["vision_encode_ms"], vision, False),
            ("prefill of the image prompt (ms; llama.cpp: llama-bench)", q["prefill_ms"], prompt,
             False),
            ("time to first token (ms)", q["time_to_first_token_ms"], ttft, False),
            ("decode after the image prompt (tok/s; llama.cpp: llama-bench -d)", q["decode_tok_s"],
             decode, True),
            ("process start to last token (s; qvl run, llama-mtmd-cli)", qvl_wall, wall, False),
            ("peak RSS (MiB; qvl run, llama-mtmd-cli)", qvl_rss / 1024 if qvl_rss else None,
             rss / 1024 if rss else None, False),
            ("prefill pp512 (tok/s; qvl: image prompt)", q["prefill_tok_s"], lb.get("pp"), True),
            ("decode tg128 at depth 0 (tok/s)", qvl_tg.get("decode_tok_s"), lb.get("tg"), True),
        ]
        print(f"## {v} (qvl --dtype {q['dtype']}, vision {q['vision_dtype']}; "
              f"{q['prompt_tokens']} prompt tokens, {q['generated_tokens']} generated)\n")
        print("| stage | qvl | llama.cpp | ratio |")
        print("| --- | ---: | ---: | ---: |")
        for name, a, b, higher in rows:
            print(f"| {name} | {fmt(a)} | {fmt(b)} | {ratio(a, b, higher)} |")
        if qvl_tg:
            print(f"\nqvl tg128: {qvl_tg['decode_percent_of_bound']:.0f}% of the bandwidth bound "
                  f"({qvl_tg['memory_bandwidth_gb_s']:.1f} GB/s measured in that run).")
        print(f"\nqvl: decode {q['decode_percent_of_bound']:.0f}% of the bandwidth bound "
              f"({q['memory_bandwidth_gb_s']:.1f} GB/s measured, "
              f"{q['decode_bytes_per_token'] / 1e9:.2f} GB per step); load cold "
              f"{q['load_cold_ms']:.0f} ms, warm {q['load_warm_ms']:.0f} ms; "
              f"kernels {q['kernel_tier']}.\n")


if __name__ == "__main__":
    main()
