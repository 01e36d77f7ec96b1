#!/usr/bin/env bash
# The same 10 s of content four ways through `qvl bench`, alternating, ROUNDS rounds
# (each `qvl bench` one warm-up and one timed run), then the medians over the rounds:
#   video   the H.264 clip as a video file, at the video budget MAX_VIDEO_TOKENS
#   frames  its 20 sampled frames as a frame list at 2 fps, same budget
#   images  the same 20 frames as 20 images, each at the size the video path resizes a
#           frame to (MAX_IMAGE_TOKENS per image)
#   image   one of them as one image at the model's default budget
# Inputs from scripts/make_bench_clip.sh MEDIA_DIR.
# Usage: bench/video_vs_images.sh MODEL_DIR MEDIA_DIR [DTYPE] [ROUNDS]
# Environment: QVL (default build/qvl), THREADS (2), TOKENS (64),
# MAX_VIDEO_TOKENS (2048), MAX_IMAGE_TOKENS (204: 608x320, as the clip's frames at 2048).
set -euo pipefail
model=$1 media=$2 dtype=${3:-q8} rounds=${4:-3}
qvl=${QVL:-build/qvl} threads=${THREADS:-2} tokens=${TOKENS:-64}
video_tokens=${MAX_VIDEO_TOKENS:-2048} image_tokens=${MAX_IMAGE_TOKENS:-204}
out=$media/results-$dtype
mkdir -p "$out"
frames=("$media"/frames/*.jpg)
common=(-m "$model" --dtype "$dtype" --vision-dtype q8 --threads "$threads" --tokens "$tokens"
        --runs 1 --json)
for round in $(seq 1 "$rounds"); do
  for kind in video frames images image; do
    case $kind in
      video) args=(--video "$media/clip-1280x720-10s.mp4" --max-video-tokens "$video_tokens") ;;
      frames) args=(--video-frames "${frames[@]}" --video-fps 2 --max-video-tokens "$video_tokens") ;;
      images) args=(--max-image-tokens "$image_tokens" --prompt "Describe this video.")
              for f in "${frames[@]}"; do args+=(--image "$f"); done ;;
      image) args=(--image "$media/still.jpg") ;;
    esac
    echo "== round $round: $kind ($(date -u +%H:%M:%S))" >&2
    "$qvl" bench "${common[@]}" "${args[@]}" > "$out/$kind-$round.json"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = [("prompt tokens", "prompt_tokens", "{:.0f}"), ("visual tokens", None, "{:.0f}"),
        ("video demux + decode (ms)", "video_demux_decode_ms", "{:.0f}"),
        ("video sample/resize/patches (ms)", "video_sample_resize_patches_ms", "{:.0f}"),
        ("preprocess, all (ms)", "preprocess_ms", "{:.0f}"),
        ("vision encode (s)", "vision_encode_ms", "{:.2f}", 1e-3),
        ("prefill (s)", "prefill_ms", "{:.2f}", 1e-3),
        ("prefill (tok/s)", "prefill_tok_s", "{:.0f}"),
        ("time to first token (s)", "time_to_first_token_ms", "{:.2f}", 1e-3),
        ("decode (tok/s)", "decode_tok_s", "{:.1f}"),
        ("peak RSS (MiB)", "peak_rss_mib", "{:.0f}")]
kinds = ["video", "frames", "images", "image"]
runs = {k: [json.load(open(f"{out}/{k}-{r}.json")) for r in range(1, rounds + 1)] for k in kinds}
print("| | " + " | ".join(kinds) + " |")
print("| --- |" + " ---: |" * len(kinds))
for row in rows:
    name, key, fmt = row[:3]
    scale = row[3] if len(row) > 3 else 1
    cells = []
    for k in kinds:
        if key is None:
            vals = [j["image_tokens"] + j.get("video_tokens", 0) for j in runs[k]]
        elif key not in runs[k][0]:
            cells.append("—"); continue
        else:
            vals = [j[key] for j in runs[k]]
        med = statistics.median(vals) * scale
        spread = f" ({fmt.format(min(vals) * scale)}–{fmt.format(max(vals) * scale)})" if rounds > 1 and key not in (None, "prompt_tokens") else ""
        cells.append(fmt.format(med) + spread)
    print(f"| {name} | " + " | ".join(cells) + " |")
v = runs["video"][0]
print(f"\nvideo: {v['video_frames']} frames, {v['video_decoded_frames']} decoded, "
      f"{v['video_sampled_frames']} sampled, {v['video_size']} -> {v['video_resized_size']}, "
      f"grid {v['video_grid_thw']}; images: {runs['images'][0]['resized_size']} each; "
      f"image: {runs['image'][0]['resized_size']}; cpu {v['cpu']}, kernels {v['kernel_tier']}")
PY
