#!/usr/bin/python3
"""Baseline for qvl's image preprocessing: Pillow + numpy, the way Hugging Face does it.

Reproduces the reference pipeline of the Qwen3-VL fixtures (tests/data/README.md,
section 4): decode, EXIF transpose, RGBA composited onto white, smart_resize, PIL
bicubic resize, rescale 1/255 in float64 then float32 normalize, temporal duplication
and the patch flattening of transformers' Qwen2VLImageProcessor (the non-fast one).

Usage:
  /usr/bin/python3 bench/pillow_preprocess.py IMAGE [--runs N] [--min-pixels P]
      [--max-pixels P] [--save OUT.npy]
Prints the median and min wall time and the median CPU time of the whole pipeline over
N runs (after one warm-up run), and the output shape. On a busy machine compare CPU
times with the "CPU" column of src/image/preprocess_benchmark. Needs Debian's
python3-pil and python3-numpy.
"""

import argparse
import io
import math
import statistics
import sys
import time

import numpy as np
from PIL import Image, ImageOps

PATCH = 16
MERGE = 2
TEMPORAL = 2
MEAN = (0.5, 0.5, 0.5)
STD = (0.5, 0.5, 0.5)


def smart_resize(height, width, factor, min_pixels, max_pixels):
    if height < factor or width < factor:
        raise ValueError(f"height {height} or width {width} is below {factor}")
    if max(height, width) / min(height, width) > 200:
        raise ValueError("aspect ratio over 200")
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def to_rgb(image):
    if image.mode == "RGBA":
        white = Image.new("RGB", image.size, (255, 255, 255))
        white.paste(image, mask=image.split()[3])
        return white
    return image.convert("RGB")


def preprocess(data, min_pixels, max_pixels):
    image = Image.open(io.BytesIO(data))
    image = to_rgb(ImageOps.exif_transpose(image))
    width, height = image.size
    factor = PATCH * MERGE
    h, w = smart_resize(height, width, factor, min_pixels, max_pixels)
    image = image.resize((w, h), resample=Image.BICUBIC)
    pixels = np.array(image)
    # transformers' rescale multiplies in float64 and casts back to float32.
    pixels = (pixels.astype(np.float64) * (1 / 255)).astype(np.float32)
    mean = np.array(MEAN, dtype=np.float32)
    std = np.array(STD, dtype=np.float32)
    pixels = (pixels - mean) / std
    patches = pixels.transpose(2, 0, 1)[np.newaxis]  # [1, C, H, W]
    patches = np.concatenate([patches] * TEMPORAL, axis=0)
    channels = patches.shape[1]
    grid_t, grid_h, grid_w = patches.shape[0] // TEMPORAL, h // PATCH, w // PATCH
    patches = patches.reshape(grid_t, TEMPORAL, channels, grid_h // MERGE, MERGE, PATCH,
                              grid_w // MERGE, MERGE, PATCH)
    patches = patches.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    flat = patches.reshape(grid_t * grid_h * grid_w, channels * TEMPORAL * PATCH * PATCH)
    return flat, (grid_t, grid_h, grid_w)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--min-pixels", type=int, default=65536)
    parser.add_argument("--max-pixels", type=int, default=16777216)
    parser.add_argument("--save", help="write pixel_values to this .npy file")
    args = parser.parse_args()
    with open(args.image, "rb") as f:
        data = f.read()
    flat, grid = preprocess(data, args.min_pixels, args.max_pixels)
    times, cpu_times = [], []
    for _ in range(args.runs):
        start, cpu_start = time.perf_counter(), time.process_time()
        flat, grid = preprocess(data, args.min_pixels, args.max_pixels)
        times.append((time.perf_counter() - start) * 1000)
        cpu_times.append((time.process_time() - cpu_start) * 1000)
    if args.save:
        np.save(args.save, flat)
    print(f"pillow+numpy {args.image}: pixel_values {list(flat.shape)} grid {list(grid)}")
    print(f"wall median {statistics.median(times):.2f} ms  min {min(times):.2f} ms  "
          f"CPU median {statistics.median(cpu_times):.2f} ms  ({args.runs} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
