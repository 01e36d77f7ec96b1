#!/usr/bin/env bash
# The video benchmark's inputs, made from the bench image (README "Speed", video):
#   OUT/clip-1280x720-10s.mp4  10 s, 30 fps, 1280x720 H.264 (yuv420p, High profile,
#                              a keyframe every 2 s, 2 B-frames): a slow diagonal pan
#                              over the image scaled to 1600x1200, so every frame differs;
#   OUT/frames/NN.jpg          the 20 frames of it that the video path samples at 2 fps
#                              (round(linspace(0, 299, 20)), as qvl and transformers pick
#                              them), decoded from the clip, JPEG quality 2;
#   OUT/still.jpg              the middle one of them, for the one-image request.
# Needs the ffmpeg command (Debian: apt-get install ffmpeg); only this script does.
# Usage: scripts/make_bench_clip.sh [OUT_DIR] [IMAGE]
set -euo pipefail
out=${1:-/tmp/qvl-bench-video}
image=${2:-$(dirname "$0")/../bench/bench-1024x768.jpg}
command -v ffmpeg >/dev/null || { echo "ffmpeg not found (apt-get install ffmpeg)" >&2; exit 1; }
mkdir -p "$out/frames"
rm -f "$out"/frames/*.jpg

seconds=10 fps=30
# One encoder thread: x264's output is then the same on every run.
ffmpeg -v error -y -loop 1 -framerate $fps -i "$image" -t $seconds \
  -vf "scale=1600:1200:flags=bicubic,crop=1280:720:x='(iw-ow)*t/$seconds':y='(ih-oh)*t/$seconds',format=yuv420p" \
  -c:v libx264 -profile:v high -preset medium -crf 20 -g 60 -bf 2 -threads 1 \
  -movflags +faststart "$out/clip-1280x720-10s.mp4"

frames=$((seconds * fps))
indices=$(python3 -c "
n, total = $seconds * 2, $frames
step = (total - 1) / (n - 1)
print(' '.join(str(round(i * step) if i + 1 < n else total - 1) for i in range(n)))")
select=$(for i in $indices; do printf 'eq(n\\,%d)+' "$i"; done)
ffmpeg -v error -y -i "$out/clip-1280x720-10s.mp4" -vf "select='${select%+}'" \
  -fps_mode passthrough -q:v 2 "$out/frames/%02d.jpg"
count=$(ls "$out"/frames/*.jpg | wc -l)
[ "$count" -eq $((seconds * 2)) ] || { echo "extracted $count frames, not $((seconds * 2))" >&2; exit 1; }
cp "$out/frames/10.jpg" "$out/still.jpg"
echo "sampled frames: $indices"
ls -l "$out/clip-1280x720-10s.mp4" "$out/still.jpg"
