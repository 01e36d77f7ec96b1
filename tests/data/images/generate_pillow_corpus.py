#!/usr/bin/python3
"""Writes tests/data/images/pillow/: small images in every layout qvl decodes, and for
each the RGB pixels Pillow produces with the reference pipeline
(ImageOps.exif_transpose, then RGBA pasted onto white / convert("RGB")), saved as
8-bit RGB PNG, plus manifest.json. src/image/image_decoder_test.cc checks qvl against
them byte for byte. Also writes tests/data/images/resize/: Pillow BICUBIC resizes for
src/image/bicubic_resize_test.cc.

Run from the repository root with Debian's Pillow (python3-pil):
  /usr/bin/python3 tests/data/images/generate_pillow_corpus.py [YCCK_JPEG]
YCCK_JPEG is an Adobe YCCK JPEG (Pillow cannot write one); without it the existing
pillow/ycck.jpg is kept.
"""

import io
import json
import os
import re
import shutil
import struct
import sys
import zlib

from PIL import Image, ImageOps

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pillow")
W, H = 36, 26


def rgb(x, y):
    return ((x * 37 + y * 11) % 256, (x * 5 + y * 29 + 60) % 256, ((x ^ y) * 13) % 256)


def alpha(x, y):
    if x < 3:
        return 0
    if y < 3:
        return 255
    return (x * 23 + y * 7) % 256


def gray16(x, y):
    # Mixes values below 256 with large ones: Pillow clips 16-bit grey at 255.
    return (x * 7 + y) % 256 if x % 3 == 0 else (x * y * 997 + 300) % 65536


def base_image(w=W, h=H):
    im = Image.new("RGB", (w, h))
    im.putdata([rgb(x, y) for y in range(h) for x in range(w)])
    return im


# --- a minimal PNG writer, for layouts Pillow cannot write -----------------------------

def chunk(tag, data):
    return (struct.pack(">I", len(data)) + tag + data +
            struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))


def pack_row(pixels, bit_depth):
    if bit_depth == 16:
        return b"".join(struct.pack(">H", v) for p in pixels for v in p)
    if bit_depth == 8:
        return bytes(v for p in pixels for v in p)
    out, acc, bits = bytearray(), 0, 0
    for p in pixels:
        for v in p:
            acc = (acc << bit_depth) | v
            bits += bit_depth
            if bits == 8:
                out.append(acc)
                acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


def png(pixels, color_type, bit_depth, palette=None, trns=None, interlace=False,
        before_idat=(), after_idat=()):
    h, w = len(pixels), len(pixels[0])
    raw = bytearray()
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            cols = range(x0, w, dx)
            if not cols:
                continue
            for y in range(y0, h, dy):
                raw += b"\0" + pack_row([pixels[y][x] for x in cols], bit_depth)
    else:
        for row in pixels:
            raw += b"\0" + pack_row(row, bit_depth)
    out = b"\x89PNG\r\n\x1a\n" + chunk(
        b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, int(interlace)))
    for c in before_idat:
        out += c
    if palette is not None:
        out += chunk(b"PLTE", bytes(v for entry in palette for v in entry))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    for c in after_idat:
        out += c
    return out + chunk(b"IEND", b"")


def grid(fn, w=W, h=H):
    return [[fn(x, y) for x in range(w)] for y in range(h)]


def exif_bytes(orientation, big_endian=False):
    if big_endian:
        return b"MM\0*" + struct.pack(">IH", 8, 1) + struct.pack(">HHIHH", 0x112, 3, 1,
                                                                 orientation, 0) + b"\0\0\0\0"
    return b"II*\0" + struct.pack("<IH", 8, 1) + struct.pack("<HHIHH", 0x112, 3, 1,
                                                             orientation, 0) + b"\0\0\0\0"


def xmp_packet(orientation):
    return ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description '
            f'tiff:Orientation="{orientation}"/></rdf:RDF></x:xmpmeta>').encode()


def png_files():
    files = {}
    palette16 = [(i * 16, 255 - i * 16, (i * 77) % 256) for i in range(16)]
    palette256 = [((i * 3) % 256, (i * 7) % 256, (255 - i) % 256) for i in range(256)]
    files["png_gray1.png"] = png(grid(lambda x, y: ((x + y) % 2,)), 0, 1)
    files["png_gray2.png"] = png(grid(lambda x, y: ((x + 2 * y) % 4,)), 0, 2)
    files["png_gray4.png"] = png(grid(lambda x, y: ((x * y) % 16,)), 0, 4)
    files["png_gray8.png"] = png(grid(lambda x, y: (rgb(x, y)[0],)), 0, 8)
    files["png_gray8_trns.png"] = png(grid(lambda x, y: (rgb(x, y)[0],)), 0, 8,
                                      trns=struct.pack(">H", 37))
    files["png_gray16.png"] = png(grid(lambda x, y: (gray16(x, y),)), 0, 16)
    files["png_gray16_interlaced.png"] = png(grid(lambda x, y: (gray16(x, y),)), 0, 16,
                                             interlace=True)
    files["png_graya8.png"] = png(grid(lambda x, y: (rgb(x, y)[1], alpha(x, y))), 4, 8)
    files["png_graya16.png"] = png(
        grid(lambda x, y: (rgb(x, y)[1] * 256 + x, alpha(x, y) * 256 + y)), 4, 16)
    files["png_rgb8.png"] = png(grid(rgb), 2, 8)
    files["png_rgb8_trns.png"] = png(grid(rgb), 2, 8, trns=struct.pack(">HHH", *rgb(5, 5)))
    files["png_rgb16.png"] = png(grid(lambda x, y: tuple(v * 256 + (x * y) % 256
                                                        for v in rgb(x, y))), 2, 16)
    files["png_rgba8.png"] = png(grid(lambda x, y: rgb(x, y) + (alpha(x, y),)), 6, 8)
    files["png_rgba8_interlaced.png"] = png(grid(lambda x, y: rgb(x, y) + (alpha(x, y),)), 6,
                                            8, interlace=True)
    files["png_rgba16.png"] = png(grid(lambda x, y: tuple(v * 257 for v in rgb(x, y)) +
                                       (alpha(x, y) * 256 + x,)), 6, 16)
    files["png_pal1.png"] = png(grid(lambda x, y: ((x // 3 + y) % 2,)), 3, 1,
                                palette=palette16[:2])
    files["png_pal2.png"] = png(grid(lambda x, y: ((x + y // 2) % 4,)), 3, 2,
                                palette=palette16[:4])
    files["png_pal4.png"] = png(grid(lambda x, y: ((x * 3 + y) % 16,)), 3, 4, palette=palette16)
    files["png_pal4_interlaced.png"] = png(grid(lambda x, y: ((x * 3 + y) % 16,)), 3, 4,
                                           palette=palette16, interlace=True)
    files["png_pal8.png"] = png(grid(lambda x, y: ((x * 17 + y * 5) % 256,)), 3, 8,
                                palette=palette256)
    files["png_pal8_trns.png"] = png(grid(lambda x, y: ((x * 17 + y * 5) % 256,)), 3, 8,
                                     palette=palette256,
                                     trns=bytes((i * 40) % 256 for i in range(200)))
    rgba = grid(lambda x, y: rgb(x, y) + (alpha(x, y),))
    files["png_exif6.png"] = png(rgba, 6, 8, before_idat=[chunk(b"eXIf", exif_bytes(6))])
    files["png_exif3_after_idat.png"] = png(grid(rgb), 2, 8,
                                            after_idat=[chunk(b"eXIf", exif_bytes(3, True))])
    raw_profile = ("\nexif\n%8d\n" % len(exif_bytes(8))) + exif_bytes(8).hex() + "\n"
    files["png_raw_profile8.png"] = png(
        grid(rgb), 2, 8,
        before_idat=[chunk(b"zTXt", b"Raw profile type exif\0\0" +
                           zlib.compress(raw_profile.encode()))])
    files["png_xmp5.png"] = png(
        grid(rgb), 2, 8,
        before_idat=[chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + xmp_packet(5))])
    return files


def save(im, fmt, **kwargs):
    buf = io.BytesIO()
    im.save(buf, fmt, **kwargs)
    return buf.getvalue()


def insert_after_soi(jpeg, segment_id, payload):
    return jpeg[:2] + struct.pack(">BBH", 0xFF, segment_id, len(payload) + 2) + payload + jpeg[2:]


def jpeg_files():
    files = {}
    big = base_image(45, 37)
    files["jpeg_420.jpg"] = save(big, "JPEG", quality=90)
    files["jpeg_422.jpg"] = save(big, "JPEG", quality=90, subsampling=1)
    files["jpeg_444.jpg"] = save(big, "JPEG", quality=90, subsampling=0)
    files["jpeg_progressive.jpg"] = save(big, "JPEG", quality=85, progressive=True)
    files["jpeg_gray.jpg"] = save(big.convert("L"), "JPEG", quality=90)
    files["jpeg_cmyk.jpg"] = save(big.convert("CMYK"), "JPEG", quality=90)
    small = base_image(40, 24)
    for orientation in range(1, 9):
        files[f"jpeg_exif{orientation}.jpg"] = insert_after_soi(
            save(small, "JPEG", quality=90), 0xE1, b"Exif\0\0" + exif_bytes(orientation))
    files["jpeg_exif6_bigendian.jpg"] = insert_after_soi(
        save(small, "JPEG", quality=90), 0xE1, b"Exif\0\0" + exif_bytes(6, True))
    files["jpeg_xmp8.jpg"] = insert_after_soi(save(small, "JPEG", quality=90), 0xE1,
                                              b"http://ns.adobe.com/xap/1.0/\0" + xmp_packet(8))
    return files


def webp_files():
    files = {}
    im = base_image()
    rgba = im.copy()
    rgba.putalpha(Image.frombytes("L", im.size, bytes(alpha(x, y) for y in range(H)
                                                      for x in range(W))))
    files["webp_lossy.webp"] = save(im, "WEBP", quality=80)
    files["webp_lossless.webp"] = save(im, "WEBP", lossless=True)
    files["webp_lossy_alpha.webp"] = save(rgba, "WEBP", quality=80)
    files["webp_lossless_alpha.webp"] = save(rgba, "WEBP", lossless=True)
    second = ImageOps.invert(im)
    files["webp_animated.webp"] = save(im, "WEBP", save_all=True, append_images=[second],
                                       duration=100, lossless=True)
    files["webp_animated_alpha.webp"] = save(rgba, "WEBP", save_all=True,
                                             append_images=[second.convert("RGBA")],
                                             duration=100, quality=80)
    files["webp_exif6.webp"] = save(im, "WEBP", quality=80, exif=b"Exif\0\0" + exif_bytes(6))
    return files


def gif_files():
    files = {}
    p = base_image().quantize(colors=50)
    files["gif_basic.gif"] = save(p, "GIF", interlace=False)
    files["gif_interlaced.gif"] = save(p, "GIF", interlace=True)
    files["gif_transparent.gif"] = save(p, "GIF", transparency=7)
    files["gif_gray.gif"] = save(base_image().convert("L"), "GIF")
    files["gif_animated.gif"] = save(p, "GIF", save_all=True,
                                     append_images=[ImageOps.invert(base_image()).quantize(50)],
                                     duration=100)
    # First frame smaller than the logical screen and offset inside it: patch the
    # screen size and the frame position of a plain file.
    small = bytearray(save(base_image(20, 12).quantize(colors=16), "GIF", interlace=False,
                           transparency=3))
    struct.pack_into("<HH", small, 6, 30, 20)
    desc = small.index(b",")
    struct.pack_into("<HH", small, desc + 1, 6, 5)
    files["gif_offset_frame.gif"] = bytes(small)
    return files


def bmp_file(width, height, bits, rows, compression=0, masks=None, header_size=40,
             palette=None, top_down=False):
    """rows: list of packed row bytes, top row first."""
    stride = ((width * bits + 31) >> 3) & ~3
    data = b"".join((r + b"\0" * stride)[:stride] for r in (rows if top_down else rows[::-1]))
    header = struct.pack("<IiiHHIIiiII", header_size, width, -height if top_down else height, 1,
                         bits, compression, len(data), 2835, 2835,
                         len(palette) if palette else 0, 0)
    extra = b""
    if header_size > 40:
        m = list(masks or (0, 0, 0, 0)) + [0] * 4
        extra = struct.pack("<IIII", *m[:4]) + b"\0" * (header_size - 56)
    elif masks:
        extra = struct.pack("<III", *masks[:3])
    pal = b"".join(bytes((b, g, r, 0)) for r, g, b in palette) if palette else b""
    offset = 14 + len(header) + len(extra) + len(pal)
    return b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset) + header + extra + \
        pal + data


def bmp_files():
    files = {}
    im = base_image()
    files["bmp_24.bmp"] = save(im, "BMP")
    rgba = im.copy()
    rgba.putalpha(128)
    files["bmp_32_pillow.bmp"] = save(rgba, "BMP")
    files["bmp_8.bmp"] = save(im.quantize(colors=60), "BMP")
    files["bmp_8_gray.bmp"] = save(im.convert("L"), "BMP")
    files["bmp_1.bmp"] = save(im.convert("1"), "BMP")
    pal16 = [(i * 16, (i * 50) % 256, 255 - i * 16) for i in range(16)]
    files["bmp_4.bmp"] = bmp_file(W, H, 4, [pack_row([((x + y) % 16,) for x in range(W)], 4)
                                            for y in range(H)], palette=pal16)

    def rgb555(x, y):
        r, g, b = rgb(x, y)
        return struct.pack("<H", (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3))

    def rgb565(x, y):
        r, g, b = rgb(x, y)
        return struct.pack("<H", (r >> 3) << 11 | (g >> 2) << 5 | (b >> 3))

    files["bmp_16_555.bmp"] = bmp_file(W, H, 16, [b"".join(rgb555(x, y) for x in range(W))
                                                  for y in range(H)])
    files["bmp_16_565.bmp"] = bmp_file(W, H, 16, [b"".join(rgb565(x, y) for x in range(W))
                                                  for y in range(H)], compression=3,
                                       masks=(0xF800, 0x7E0, 0x1F))
    bgra = [b"".join(bytes((rgb(x, y)[2], rgb(x, y)[1], rgb(x, y)[0], alpha(x, y)))
                     for x in range(W)) for y in range(H)]
    files["bmp_32_bitfields_alpha.bmp"] = bmp_file(W, H, 32, bgra, compression=3,
                                                   masks=(0xFF0000, 0xFF00, 0xFF, 0xFF000000),
                                                   header_size=108)
    files["bmp_32_bitfields_noalpha.bmp"] = bmp_file(W, H, 32, bgra, compression=3,
                                                     masks=(0xFF0000, 0xFF00, 0xFF))
    files["bmp_24_topdown.bmp"] = bmp_file(
        W, H, 24, [b"".join(bytes(rgb(x, y)[::-1]) for x in range(W)) for y in range(H)],
        top_down=True)
    return files


def newer_pillow_xmp_orientation(image):
    """Pillow >= 11.2 also takes the orientation from JPEG/WebP XMP (info["xmp"]) when
    EXIF has none; Debian's older Pillow does not, so that rule is applied here."""
    if image.format != "JPEG" or 0x0112 in image.getexif():
        return None
    xmp = None
    for marker, data in image.applist:
        if marker == "APP1" and data.startswith(b"http://ns.adobe.com/xap/1.0/\0"):
            xmp = data.split(b"\0", 1)[1]
    match = re.search(rb'tiff:Orientation(="|>)([0-9])', xmp) if xmp else None
    return int(match[2]) if match else None


TRANSPOSE = {2: Image.FLIP_LEFT_RIGHT, 3: Image.ROTATE_180, 4: Image.FLIP_TOP_BOTTOM,
             5: Image.TRANSPOSE, 6: Image.ROTATE_270, 7: Image.TRANSVERSE, 8: Image.ROTATE_90}


def reference_rgb(data):
    image = Image.open(io.BytesIO(data))
    mode = image.mode
    xmp_orientation = newer_pillow_xmp_orientation(image)
    image = ImageOps.exif_transpose(image)
    if xmp_orientation in TRANSPOSE:
        image = image.transpose(TRANSPOSE[xmp_orientation])
    if image.mode == "RGBA":
        white = Image.new("RGB", image.size, (255, 255, 255))
        white.paste(image, mask=image.split()[3])
        image = white
    else:
        image = image.convert("RGB")
    return mode, image


# Pillow BICUBIC resizes of base_image(w, h) (the same pattern bicubic_resize_test.cc
# draws), mostly downscaling, which the fixture cases do not cover.
RESIZES = [((97, 61), (40, 25)), ((97, 61), (97, 20)), ((97, 61), (13, 61)),
           ((97, 61), (30, 150)), ((97, 61), (1, 1)), ((300, 7), (9, 7)),
           ((300, 7), (301, 9))]


def write_resize_goldens():
    out = os.path.join(os.path.dirname(OUT), "resize")
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for (w, h), (ow, oh) in RESIZES:
        base_image(w, h).resize((ow, oh), Image.BICUBIC).save(
            os.path.join(out, f"{w}x{h}_to_{ow}x{oh}.png"))


def write_limit_cases():
    """Files that must be refused: headers claiming 20000 x 20000 pixels (no pixel data
    behind them) and images too small or too thin for smart_resize."""
    out = os.path.join(os.path.dirname(OUT), "limits")
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    side = 20000
    files = {}
    files["bomb.png"] = png([[(0, 0, 0)]], 2, 8)
    files["bomb.png"] = files["bomb.png"][:16] + struct.pack(">II", side, side) + \
        files["bomb.png"][24:29] + struct.pack(
            ">I", zlib.crc32(b"IHDR" + struct.pack(">II", side, side) +
                             files["bomb.png"][24:29]) & 0xFFFFFFFF) + files["bomb.png"][33:]
    jpeg = bytearray(save(base_image(8, 8), "JPEG"))
    sof = jpeg.index(b"\xff\xc0")
    struct.pack_into(">HH", jpeg, sof + 5, side, side)
    files["bomb.jpg"] = bytes(jpeg)
    gif = bytearray(save(base_image(8, 8).quantize(4), "GIF"))
    struct.pack_into("<HH", gif, 6, side, side)
    files["bomb.gif"] = bytes(gif)
    webp = bytearray(save(base_image(8, 8), "WEBP", save_all=True,
                          append_images=[ImageOps.invert(base_image(8, 8))],
                          lossless=True))
    vp8x = webp.index(b"VP8X")
    webp[vp8x + 12:vp8x + 18] = struct.pack("<I", side - 1)[:3] + struct.pack("<I", side - 1)[:3]
    files["bomb.webp"] = bytes(webp)
    files["bomb.bmp"] = bmp_file(side, side, 24, [b""])[:54]
    files["1x1.png"] = png([[(10, 20, 30)]], 2, 8)
    files["31x1000.png"] = png(grid(lambda x, y: (x * 8, 40, 0), 31, 1000), 2, 8)
    files["1x10000.png"] = png(grid(lambda x, y: (y % 256,), 1, 10000), 0, 8)
    files["32x6401.png"] = png(grid(lambda x, y: (y % 256,), 32, 6401), 0, 8)
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def main():
    ycck = sys.argv[1] if len(sys.argv) > 1 else os.path.join(OUT, "ycck.jpg")
    ycck_bytes = open(ycck, "rb").read()
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "expected"))
    files = {}
    for group in (png_files, jpeg_files, webp_files, gif_files, bmp_files):
        files.update(group())
    files["ycck.jpg"] = ycck_bytes
    manifest = []
    for name in sorted(files):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(files[name])
        mode, image = reference_rgb(files[name])
        expected = "expected/" + os.path.splitext(name)[0] + ".png"
        image.save(os.path.join(OUT, expected))
        manifest.append({"file": name, "pillow_mode": mode, "expected": expected,
                         "width": image.size[0], "height": image.size[1]})
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    write_resize_goldens()
    write_limit_cases()
    print(f"wrote {len(manifest)} images to {OUT} and {len(RESIZES)} resize goldens")


if __name__ == "__main__":
    main()
