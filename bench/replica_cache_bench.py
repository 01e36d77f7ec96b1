#!/usr/bin/env python3
"""What the shared Redis cache saves a replica that has never seen an image: time to
first token of a question about the bench image on a fresh replica, with the encoding in
Redis (replica B, after replica A encoded it) and without a shared cache (replica C),
plus the Redis round trip (GET) of that one encoding. Replicas run one after another on
127.0.0.1 so they do not share the CPU.

Usage: bench/replica_cache_bench.py --qvl build/qvl -m MODEL_DIR [--image IMG]
                                    [--threads N] [--weight-cache DIR]"""

import argparse
import base64
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1800)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{r.status}: {data[:300]!r}")
    return json.loads(data)


def healthy(port):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except OSError:
        return False


def serve(args, port, redis_port, log):
    cmd = [args.qvl, "serve", "-m", args.model, "--port", str(port), "--threads", str(args.threads),
           "--weight-cache", args.weight_cache]
    if redis_port:
        cmd += ["--redis", f"redis://127.0.0.1:{redis_port}", "--redis-timeout-ms", "5000"]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    while not healthy(port):
        if p.poll() is not None:
            raise RuntimeError("qvl serve exited; see its log")
        time.sleep(0.2)
    return p


def resp_get(port, key):
    """GET over a raw socket (RESP) into one preallocated buffer: (seconds, bytes)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        cmd = f"*2\r\n$3\r\nGET\r\n${len(key)}\r\n{key}\r\n".encode()
        start = time.perf_counter()
        s.sendall(cmd)
        head = b""
        while b"\r\n" not in head:
            head += s.recv(64)
        header, rest = head.split(b"\r\n", 1)
        size = int(header[1:])
        buf = bytearray(size + 2)
        view = memoryview(buf)
        view[:len(rest)] = rest
        got = len(rest)
        while got < size + 2:
            got += s.recv_into(view[got:])
        return time.perf_counter() - start, size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qvl", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--image", default=os.path.join(HERE, "bench-1024x768.jpg"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--weight-cache", default="")
    args = ap.parse_args()
    if not args.weight_cache:
        args.weight_cache = os.path.join(tempfile.gettempdir(), "qvl-bench-weights")
    with open(args.image, "rb") as f:
        url = "data:image/jpeg;base64," + base64.b64encode(f.read()).decode()

    def question(text):
        return {"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": text}]}],
            "temperature": 0, "max_tokens": 1}

    tmp = tempfile.mkdtemp(prefix="qvl-bench-")
    log = open(os.path.join(tmp, "qvl.log"), "ab")
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", tmp],
                             stdout=subprocess.DEVNULL)
    results = {}
    try:
        time.sleep(0.5)
        for name, with_redis, text in (("A encodes", True, "Describe this image."),
                                       ("B shared cache", True, "What is in the picture?"),
                                       ("C no shared cache", False, "What is in the picture?")):
            port = free_port()
            p = serve(args, port, redis_port if with_redis else 0, log)
            try:
                reply = post(port, question(text))
                t = reply["timings"]
                results[name] = t
                print(f"{name:18s} ttft {t['ttft_ms']:9.0f} ms  preprocess {t['preprocess_ms']:6.0f} ms"
                      f"  vision {t['vision_encode_ms']:8.0f} ms  prefill {t['prefill_ms']:8.0f} ms"
                      f"  image from {t['images'][0]['source']}", flush=True)
                if name == "A encodes":
                    time.sleep(3)  # the background write
            finally:
                p.terminate()
                p.wait()
        keys = subprocess.run(["redis-cli", "-p", str(redis_port), "--scan", "--pattern", "qvl:enc:*"],
                              capture_output=True, text=True).stdout.split()
        trips = [resp_get(redis_port, keys[0]) for _ in range(5)]
        seconds = statistics.median(t for t, _ in trips)
        print(f"Redis GET of one encoding: {trips[0][1] / 2**20:.1f} MiB in {seconds * 1e3:.1f} ms "
              f"(median of 5, loopback)")
        b, c = results["B shared cache"], results["C no shared cache"]
        print(f"time to first token on a replica that never saw the image: "
              f"{c['ttft_ms'] / 1e3:.1f} s without, {b['ttft_ms'] / 1e3:.1f} s with the shared cache "
              f"({c['ttft_ms'] / b['ttft_ms']:.2f}x)")
    finally:
        redis.kill()
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
