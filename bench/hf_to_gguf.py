#!/usr/bin/python3
"""Writes a Qwen3-VL Hugging Face folder as llama.cpp GGUF files, for the side-by-side
benchmark (bench/compare_llamacpp.sh). Only the benchmark needs this; qvl itself reads
the Hugging Face folder.

llama.cpp's own convert_hf_to_gguf.py needs torch and transformers, which Debian does
not ship. This script writes the same files with llama.cpp's gguf-py package (taken
from LLAMA_CPP_DIR, nothing copied) and numpy, reading the safetensors itself:

  text model  general.architecture = qwen3vl, tokenizer from tokenizer.json,
              weights in --text-type (bf16 or f16; norms f32), tied output
  mmproj      general.architecture = clip, projector qwen3vl_merger, weights in
              --mmproj-type (f16 or bf16; norms, biases, position embedding and the
              patch embedding f32, as the converter does for bf16)

Tensor names, metadata keys and dtype rules follow convert_hf_to_gguf.py
(conversion/qwen3vl.py, conversion/base.py) of the llama.cpp version it is run with.
Quantized variants (Q8_0, Q4_K_M) are made from the bf16 file with llama-quantize.

Usage:
  /usr/bin/python3 bench/hf_to_gguf.py MODEL_DIR OUT_DIR --llama-cpp LLAMA_CPP_DIR
      [--text-type bf16] [--mmproj-type f16] [--skip-text] [--skip-mmproj]
Needs Debian's python3-numpy (gguf-py also imports yaml: python3-yaml).
"""

import argparse
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np


def read_safetensors(path):
    """name -> (dtype, shape, numpy memmap of the raw bytes)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    base = 8 + n
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], raw[base + begin:base + end])
    return tensors


def load_tensors(model_dir):
    index = model_dir / "model.safetensors.index.json"
    files = ([model_dir / f for f in sorted(set(json.load(open(index))["weight_map"].values()))]
             if index.exists() else [model_dir / "model.safetensors"])
    tensors = {}
    for f in files:
        tensors.update(read_safetensors(f))
    return tensors


def as_f32(entry):
    dtype, shape, raw = entry
    if dtype == "BF16":
        bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(shape)
    if dtype == "F16":
        return np.frombuffer(raw, dtype=np.float16).astype(np.float32).reshape(shape)
    if dtype == "F32":
        return np.frombuffer(raw, dtype=np.float32).reshape(shape)
    raise SystemExit(f"unsupported dtype {dtype}")


def to_bf16(x):
    """float32 -> bfloat16 bits, round to nearest even (as torch and gguf-py)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def add(writer, gguf, name, x, qtype, entry=None):
    """Adds float32 array x as `qtype` (F32, F16 or BF16). A bf16 checkpoint tensor
    written as bf16 (`entry` given) goes in as a view of the mapped file, so the writer,
    which holds every tensor until it writes, keeps no copy of the weights in memory."""
    if entry is not None and entry[0] == "BF16" and qtype == "bf16":
        writer.add_tensor(name, np.frombuffer(entry[2], dtype=np.uint16).reshape(entry[1]),
                          raw_shape=entry[1], raw_dtype=gguf.GGMLQuantizationType.BF16)
    elif qtype == "f32":
        writer.add_tensor(name, np.ascontiguousarray(x, dtype=np.float32))
    elif qtype == "f16":
        writer.add_tensor(name, np.ascontiguousarray(x, dtype=np.float16))
    else:
        writer.add_tensor(name, to_bf16(x), raw_shape=x.shape,
                          raw_dtype=gguf.GGMLQuantizationType.BF16)


def file_type(gguf, qtype):
    return {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
            "bf16": gguf.LlamaFileType.MOSTLY_BF16}[qtype]


def write_vocab(writer, gguf, model_dir, vocab_size):
    tok = json.load(open(model_dir / "tokenizer.json", encoding="utf-8"))
    id_to_token = {i: t for t, i in tok["model"]["vocab"].items()}
    added = {a["id"]: a for a in tok.get("added_tokens", [])}
    for i, a in added.items():
        id_to_token[i] = a["content"]
    tokens, types = [], []
    for i in range(vocab_size):
        if i not in id_to_token:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        elif i in added:
            t = id_to_token[i]
            looks_special = t.startswith("<") and t.endswith(">")
            tokens.append(t)
            types.append(gguf.TokenType.CONTROL if added[i].get("special") or looks_special
                         else gguf.TokenType.USER_DEFINED)
        else:
            tokens.append(id_to_token[i])
            types.append(gguf.TokenType.NORMAL)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")  # Qwen2/2.5/3 pre-tokenizer
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    gguf.SpecialVocab(model_dir, load_merges=True).add_to_gguf(writer)


def write_text(gguf, model_dir, cfg, tensors, out, qtype):
    tc = cfg["text_config"]
    writer = gguf.GGUFWriter(str(out), "qwen3vl")
    writer.add_name(model_dir.name)
    writer.add_block_count(tc["num_hidden_layers"])
    writer.add_context_length(tc["max_position_embeddings"])
    writer.add_embedding_length(tc["hidden_size"])
    writer.add_feed_forward_length(tc["intermediate_size"])
    writer.add_head_count(tc["num_attention_heads"])
    writer.add_head_count_kv(tc["num_key_value_heads"])
    rope = tc.get("rope_scaling") or tc.get("rope_parameters") or {}
    sections = list(rope.get("mrope_section", [24, 20, 20]))
    writer.add_rope_dimension_sections((sections + [0, 0, 0, 0])[:4])
    writer.add_rope_freq_base(tc.get("rope_theta", rope.get("rope_theta", 5000000)))
    writer.add_layer_norm_rms_eps(tc["rms_norm_eps"])
    writer.add_key_length(tc["head_dim"])
    writer.add_value_length(tc["head_dim"])
    writer.add_file_type(file_type(gguf, qtype))
    writer.add_num_deepstack_layers(len(cfg["vision_config"].get("deepstack_visual_indexes", [])))
    write_vocab(writer, gguf, model_dir, tc["vocab_size"])

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN3VL, tc["num_hidden_layers"])
    for name in sorted(tensors):
        if not name.startswith("model.language_model."):
            continue
        hf = name.replace("model.language_model.", "model.", 1)
        new = names.get_name(hf, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise SystemExit(f"no GGUF name for {name}")
        entry = tensors[name]
        f32 = len(entry[1]) <= 1 or new.endswith("_norm.weight")
        add(writer, gguf, new, None if not f32 and entry[0] == "BF16" and qtype == "bf16"
            else as_f32(entry), "f32" if f32 else qtype, entry)
    if not cfg.get("tie_word_embeddings", tc.get("tie_word_embeddings", False)):
        add(writer, gguf, "output.weight", as_f32(tensors["lm_head.weight"]), qtype)
    finish(writer)


def write_mmproj(gguf, model_dir, cfg, tensors, out, qtype):
    vc = cfg["vision_config"]
    pre = json.load(open(model_dir / "preprocessor_config.json"))
    writer = gguf.GGUFWriter(str(out), "clip")
    writer.add_type(gguf.GGUFType.MMPROJ)
    writer.add_file_type(file_type(gguf, qtype))
    writer.add_clip_has_vision_encoder(True)
    writer.add_vision_projection_dim(cfg["text_config"]["hidden_size"])
    writer.add_vision_image_size(int(math.sqrt(vc.get("num_position_embeddings", 2304)) *
                                     vc["patch_size"]))
    writer.add_vision_patch_size(vc["patch_size"])
    writer.add_vision_embedding_length(vc["hidden_size"])
    writer.add_vision_feed_forward_length(vc["intermediate_size"])
    writer.add_vision_block_count(vc["depth"])
    writer.add_vision_head_count(vc["num_heads"])
    writer.add_vision_image_mean(pre["image_mean"])
    writer.add_vision_image_std(pre["image_std"])
    writer.add_clip_projector_type(gguf.VisionProjectorType.QWEN3VL)
    writer.add_vision_use_gelu(True)
    writer.add_vision_spatial_merge_size(vc["spatial_merge_size"])
    writer.add_vision_attention_layernorm_eps(cfg["text_config"].get("rms_norm_eps", 1e-6))
    deepstack = vc.get("deepstack_visual_indexes", [])
    writer.add_vision_is_deepstack_layers([i in deepstack for i in range(vc["depth"])])

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MMPROJ, vc["depth"])
    tn = gguf.TENSOR_NAMES
    T = gguf.MODEL_TENSOR
    for name in sorted(tensors):
        if not name.startswith("model.visual."):
            continue
        hf = name.replace("model.visual.", "visual.", 1)
        x = as_f32(tensors[name])
        suffix = "." + hf.rsplit(".", 1)[1]
        if hf == "visual.patch_embed.proj.weight":
            # Conv3d [out, c, 2, p, p] -> two Conv2d kernels, one per frame (F32 for bf16).
            patch_type = "f16" if qtype == "f16" else "f32"
            add(writer, gguf, tn[T.V_ENC_EMBD_PATCH] + ".weight", x[:, :, 0], patch_type)
            add(writer, gguf, tn[T.V_ENC_EMBD_PATCH] + ".weight.1", x[:, :, 1], patch_type)
            continue
        if hf == "visual.patch_embed.proj.bias":
            new = tn[T.V_ENC_EMBD_PATCH] + ".bias"
        elif hf.startswith("visual.deepstack_merger_list."):
            _, _, i, part, _ = hf.split(".")
            kind = {"norm": T.V_DS_NORM, "linear_fc1": T.V_DS_FC1, "linear_fc2": T.V_DS_FC2}[part]
            new = tn[kind].format(bid=deepstack[int(i)]) + suffix
        elif hf.startswith("visual.merger."):
            part = hf.split(".")[2]
            if part == "norm":
                new = tn[T.V_POST_NORM] + suffix
            else:
                new = tn[T.V_MMPROJ].format(bid=0 if part == "linear_fc1" else 2) + suffix
        else:
            new = names.get_name(hf, try_suffixes=(".weight", ".bias"))
            if new is None:
                raise SystemExit(f"no GGUF name for {name}")
        f32 = x.ndim <= 1 or new.endswith("_norm.weight") or new.startswith(tn[T.V_ENC_EMBD_POS])
        add(writer, gguf, new, x, "f32" if f32 else qtype)
    finish(writer)


def finish(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=False)
    writer.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model_dir", type=Path)
    p.add_argument("out_dir", type=Path)
    p.add_argument("--llama-cpp", type=Path, required=True, help="llama.cpp source folder")
    p.add_argument("--text-type", choices=["bf16", "f16", "f32"], default="bf16")
    p.add_argument("--mmproj-type", choices=["f16", "bf16", "f32"], default="f16")
    p.add_argument("--skip-text", action="store_true")
    p.add_argument("--skip-mmproj", action="store_true")
    args = p.parse_args()
    sys.path.insert(0, str(args.llama_cpp / "gguf-py"))
    import gguf  # noqa: E402  (from the llama.cpp checkout)

    cfg = json.load(open(args.model_dir / "config.json"))
    tensors = load_tensors(args.model_dir)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if not args.skip_text:
        out = args.out_dir / f"text-{args.text_type.upper()}.gguf"
        write_text(gguf, args.model_dir, cfg, tensors, out, args.text_type)
        print(out)
    if not args.skip_mmproj:
        out = args.out_dir / f"mmproj-{args.mmproj_type.upper()}.gguf"
        write_mmproj(gguf, args.model_dir, cfg, tensors, out, args.mmproj_type)
        print(out)


if __name__ == "__main__":
    main()
