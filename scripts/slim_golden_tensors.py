#!/usr/bin/env python3
"""Writes the repository's copy of the golden fixture cases without the preprocessor's
tensors, which qvl reproduces bit for bit from each case's images and frames.

For every case of SOURCE (the reference's cases, default the shared fixtures) that
holds one of DERIVED, this writes into DEST/<case>/:
  derived_digests.json  name, dtype, shape, byte count and SHA-256 of the raw
                        little-endian bytes of each derived tensor, and where it came from;
  tensors.safetensors   every other tensor with its name, dtype, shape and bytes unchanged
                        (and the __metadata__, if any), in the source's data order.
Then it reads each written file back and checks every kept tensor is byte-identical to
the source's. The tests (tests/golden/golden_case.cc) preprocess the case's inputs with
qvl, check the bytes against the digest and use them as the reference's tensor.
Cases without a derived tensor (text only) are left alone. Needs only the standard library.
"""
import argparse
import hashlib
import json
import os
import struct
import sys

# The preprocessor's outputs: patches of the images and of the video frames.
DERIVED = ("pixel_values", "pixel_values_videos")
SOURCE_OF = {
    "pixel_values": "qvl's PreprocessImage of meta.json images[].file, in message order",
    "pixel_values_videos": "qvl's PreprocessVideo of meta.json videos[].frames at videos[].fps, "
    "in message order",
}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (header_size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_size])
    metadata = header.pop("__metadata__", None)
    data = blob[8 + header_size :]
    tensors = []
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        tensors.append((begin, name, entry["dtype"], entry["shape"], data[begin:end]))
    tensors.sort(key=lambda t: t[0])
    return metadata, [t[1:] for t in tensors]


def write_safetensors(path, metadata, tensors):
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data section starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


def slim_case(source_dir, dest_dir, case):
    source = os.path.join(source_dir, case, "tensors.safetensors")
    metadata, tensors = read_safetensors(source)
    derived = [t for t in tensors if t[0] in DERIVED]
    if not derived:
        return 0
    kept = [t for t in tensors if t[0] not in DERIVED]
    digests = {
        "note": "Tensors of the reference (transformers) that qvl's preprocessing reproduces bit "
        "for bit from this case's inputs; tensors.safetensors no longer holds them. The tests "
        "preprocess the inputs, check the bytes against sha256 (raw little-endian data) and use "
        "them as the reference's tensor. Regenerate with scripts/slim_golden_tensors.py.",
        "source": f"tiny-qwen3vl/cases/{case}/tensors.safetensors of the shared fixtures",
        "tensors": [
            {
                "name": name,
                "dtype": dtype,
                "shape": shape,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "derived_from": SOURCE_OF[name],
            }
            for name, dtype, shape, data in derived
        ],
    }
    out_dir = os.path.join(dest_dir, case)
    with open(os.path.join(out_dir, "derived_digests.json"), "w") as f:
        json.dump(digests, f, indent=1)
        f.write("\n")
    dest = os.path.join(out_dir, "tensors.safetensors")
    write_safetensors(dest, metadata, kept)

    written_metadata, written = read_safetensors(dest)
    if written_metadata != metadata or written != kept:
        sys.exit(f"{dest}: the kept tensors differ from {source}")
    saved = os.path.getsize(source) - os.path.getsize(dest)
    names = ", ".join(t[0] for t in derived)
    print(f"{case}: {names} -> derived_digests.json; {len(kept)} tensors kept, {saved} bytes less")
    return saved


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default="/work/shared/fixtures/tiny-qwen3vl/cases",
                        help="the reference's cases (upstream format, every tensor present)")
    parser.add_argument("--dest", default=os.path.join(REPO, "tests/data/tiny-qwen3vl/cases"),
                        help="the repository's copy of the cases")
    args = parser.parse_args()
    total = 0
    for case in sorted(os.listdir(args.source)):
        if os.path.isfile(os.path.join(args.source, case, "tensors.safetensors")):
            if not os.path.isdir(os.path.join(args.dest, case)):
                sys.exit(f"{args.dest}/{case}: missing (copy the case folder first)")
            total += slim_case(args.source, args.dest, case)
    print(f"{total} bytes less in all")


if __name__ == "__main__":
    main()
