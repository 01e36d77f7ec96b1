#!/usr/bin/env python3
"""Three `qvl serve` replicas of the tiny fixture model behind nginx (the repository's
deploy/nginx configuration, rendered for loopback ports), sharing one redis-server; a
fourth replica without Redis computes the reference answers. Checks stickiness, shared
image encodings and answers, a corrupted Redis value, Redis killed under load and one
replica killed with SIGKILL under load, and that nginx's own errors (every replica down,
a body over its limit) are JSON in qvl's error shapes.

Usage: replicas_test.py --qvl build/qvl --data tests/data --source .
Exits 0 on success, 77 (skipped) when redis-server or nginx is missing."""

import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
STARTUP_SECONDS = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def check(condition, message):
    if not condition:
        raise AssertionError(message)


class Http:
    """One request; returns (status, headers, body bytes). Raises OSError when the
    connection breaks."""

    @staticmethod
    def call(port, method, path, body=None, headers=None, timeout=120):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            h = {"Content-Type": "application/json"} if data else {}
            h.update(headers or {})
            conn.request(method, path, body=data, headers=h)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()


class Cluster:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.procs = {}
        self.redis_port = free_port()
        self.replica_ports = [free_port() for _ in range(3)]
        self.reference_port = free_port()
        self.nginx_port = free_port()
        self.logs = []

    def log(self, name):
        f = open(os.path.join(self.tmp, name + ".log"), "ab")
        self.logs.append(f)
        return f

    # Redis
    def start_redis(self):
        self.procs["redis"] = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.tmp, "--maxmemory", "256mb",
             "--maxmemory-policy", "allkeys-lru"],
            stdout=self.log("redis"), stderr=subprocess.STDOUT)
        wait_for("redis", lambda: self.redis_cli("PING").strip() == "PONG", 10)

    def kill_redis(self):
        p = self.procs.pop("redis")
        p.kill()
        p.wait()

    def redis_cli(self, *args):
        return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.redis_port), *args],
                              capture_output=True, text=True, timeout=10).stdout

    # Replicas
    def start_replica(self, i):
        port = self.reference_port if i < 0 else self.replica_ports[i]
        cmd = [self.args.qvl, "serve", "-m", os.path.join(self.args.data, "tiny-qwen3vl", "model"),
               "--port", str(port), "--threads", "1", "--weight-cache", "none", "--dtype", "f32",
               "--max-tokens", "16", "--shutdown-grace", "1"]
        if i >= 0:
            cmd += ["--redis", f"redis://127.0.0.1:{self.redis_port}", "--redis-prefix", "test:"]
        name = "reference" if i < 0 else f"replica{i}"
        self.procs[name] = subprocess.Popen(cmd, stdout=self.log(name), stderr=subprocess.STDOUT)
        wait_for(name, lambda: Http.call(port, "GET", "/health", timeout=2)[0] == 200,
                 STARTUP_SECONDS)

    def kill_replica(self, i):
        p = self.procs.pop(f"replica{i}")
        p.send_signal(signal.SIGKILL)
        p.wait()

    # nginx, with the repository's configuration
    def start_nginx(self):
        conf_dir = os.path.join(self.tmp, "nginx")
        os.makedirs(os.path.join(conf_dir, "temp"), exist_ok=True)
        replicas = os.path.join(conf_dir, "replicas.conf")
        with open(os.path.join(self.args.source, "deploy/nginx/replicas.conf")) as f:
            template = [l for l in f if l.startswith("server ")]
        check(len(template) == 3, "deploy/nginx/replicas.conf should list three replicas")
        with open(replicas, "w") as f:
            for line, port in zip(template, self.replica_ports):
                host = line.split()[1]
                f.write(line.replace(host, f"127.0.0.1:{port}"))
        with open(os.path.join(self.args.source, "deploy/nginx/qvl.conf")) as f:
            site = f.read()
        check("/etc/nginx/qvl/replicas.conf" in site and "listen 8080;" in site,
              "deploy/nginx/qvl.conf changed its include or listen line")
        # The header naming the replica that answered is off by default (it shows internal
        # addresses); the test turns it on to see where each request went.
        replica_header = "# add_header X-Qvl-Replica $upstream_addr always;"
        check(replica_header in site, "deploy/nginx/qvl.conf lost its X-Qvl-Replica line")
        site = site.replace(replica_header, replica_header[2:])
        site = site.replace("/etc/nginx/qvl/replicas.conf", replicas)
        site = site.replace("listen 8080;", f"listen 127.0.0.1:{self.nginx_port};")
        with open(os.path.join(conf_dir, "qvl.conf"), "w") as f:
            f.write(site)
        temp = os.path.join(conf_dir, "temp")
        with open(os.path.join(conf_dir, "nginx.conf"), "w") as f:
            f.write(f"""worker_processes 1;
pid {conf_dir}/nginx.pid;
error_log {self.tmp}/nginx-error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {self.tmp}/nginx-access.log;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {conf_dir}/qvl.conf;
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.procs["nginx"] = subprocess.Popen(
            [nginx, "-e", "stderr", "-p", conf_dir, "-c", os.path.join(conf_dir, "nginx.conf"),
             "-g", "daemon off;" + ("" if os.getuid() != 0 else " user root;")],
            stdout=self.log("nginx"), stderr=subprocess.STDOUT)
        wait_for("nginx", lambda: Http.call(self.nginx_port, "GET", "/health", timeout=2)[0] == 200,
                 10)

    def stop(self):
        for name, p in self.procs.items():
            # nginx's master stops its workers on SIGTERM; SIGKILL would orphan them.
            p.send_signal(signal.SIGTERM if name == "nginx" else signal.SIGKILL)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in self.logs:
            f.close()

    def replica_of(self, headers):
        """Which replica (index) answered through nginx."""
        addr = headers.get("x-qvl-replica", "").split(",")[-1].strip()
        for i, port in enumerate(self.replica_ports):
            if addr == f"127.0.0.1:{port}":
                return i
        raise AssertionError(f"X-Qvl-Replica {addr!r} is not a replica")

    def metric(self, i, name):
        status, _, body = Http.call(self.replica_ports[i], "GET", "/metrics")
        check(status == 200, f"/metrics of replica {i}: {status}")
        total = 0.0
        for line in body.decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.split()[-1])
        return total


def image_part(path):
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    kind = "png" if path.endswith(".png") else "jpeg"
    return {"type": "image_url", "image_url": {"url": f"data:image/{kind};base64,{data}"}}


def chat(messages, **extra):
    body = {"messages": messages, "temperature": 0, "max_tokens": 12}
    body.update(extra)
    return body


def ask(port, body, session=None, timeout=120):
    headers = {"X-Session-Id": session} if session else {}
    status, headers, raw = Http.call(port, "POST", "/v1/chat/completions", body, headers, timeout)
    check(status == 200, f"status {status}: {raw[:300]!r}")
    return json.loads(raw), headers


def content(reply):
    return reply["choices"][0]["message"]["content"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qvl", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    for tool in ("redis-server", "redis-cli"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} is not installed (scripts/setup.sh installs it)")
            return SKIP
    if shutil.which("nginx") is None and not os.path.exists("/usr/sbin/nginx"):
        print("SKIP: nginx is not installed (scripts/setup.sh installs nginx-light)")
        return SKIP

    tmp = tempfile.mkdtemp(prefix="qvl-replicas-")
    cluster = Cluster(args, tmp)
    try:
        run(cluster, args)
    except Exception:
        for name in sorted(os.listdir(tmp)):
            if name.endswith(".log"):
                with open(os.path.join(tmp, name), errors="replace") as f:
                    print(f"---- {name} (tail)\n" + "".join(f.readlines()[-20:]))
        raise
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")
    return 0


def sessions_by_replica(cluster, count_each=2):
    """Session ids that nginx maps to each replica, found with text-only probes."""
    found = {0: [], 1: [], 2: []}
    for k in range(200):
        sid = f"session-{k}"
        _, headers = ask(cluster.nginx_port, chat([{"role": "user", "content": f"probe {k}"}],
                                                  max_tokens=1), sid)
        i = cluster.replica_of(headers)
        if len(found[i]) < count_each:
            found[i].append(sid)
        if all(len(v) >= count_each for v in found.values()):
            return found
    raise AssertionError(f"200 session ids did not reach all three replicas: {found}")


def run(cluster, args):
    images = os.path.join(args.data, "tiny-qwen3vl", "cases")
    photo = image_part(os.path.join(images, "02_one_image_jpeg", "images", "photo.jpg"))
    others = sorted(os.listdir(os.path.join(images, "03_two_images", "images")))
    second = image_part(os.path.join(images, "03_two_images", "images", others[0]))
    third = image_part(os.path.join(images, "03_two_images", "images", others[1]))
    unseen = [image_part(os.path.join(images, case, "images", name))
              for case in ("05_tall_and_tiny", "06_rgba_png")
              for name in sorted(os.listdir(os.path.join(images, case, "images")))][:2]

    cluster.start_redis()
    for i in range(-1, 3):
        cluster.start_replica(i)
    cluster.start_nginx()
    n = cluster.nginx_port
    ref = cluster.reference_port
    sessions = sessions_by_replica(cluster)

    # 1. A conversation sticks to one replica; every follow-up reuses its KV prefix.
    home = 0
    sid = sessions[home][0]
    messages = [{"role": "user", "content": [photo, {"type": "text", "text": "What is this?"}]}]
    first, headers = ask(n, chat(messages), sid)
    check(cluster.replica_of(headers) == home, "first turn on the wrong replica")
    check(first["timings"]["images"][0]["source"] == "encoder", f"first encode: {first['timings']}")
    check(content(first) == content(ask(ref, chat(messages))[0]), "first turn differs from reference")
    for turn in range(2):
        messages += [{"role": "assistant", "content": content(first)},
                     {"role": "user", "content": f"And then? ({turn})"}]
        reply, headers = ask(n, chat(messages), sid)
        check(cluster.replica_of(headers) == home, f"follow-up {turn} left replica {home}")
        cached = reply["usage"]["prompt_tokens_details"]["cached_tokens"]
        check(cached > 0, f"follow-up {turn}: cached_tokens {cached}")
        source = reply["timings"]["images"][0]["source"]
        check(source == "local_cache", f"follow-up {turn}: image from {source}")
        check(content(reply) == content(ask(ref, chat(messages))[0]),
              f"follow-up {turn} differs from reference")
    print("ok: follow-ups stay on one replica with cached_tokens > 0")

    # 2. Another replica answers about the same image from the shared encoding.
    wait_for("encoding stored", lambda: cluster.metric(home, "qvl_shared_cache_image_stores_total") >= 1, 10)
    other = 1
    question = [{"role": "user", "content": [photo, {"type": "text", "text": "Colours?"}]}]
    reply, headers = ask(n, chat(question), sessions[other][0])
    check(cluster.replica_of(headers) == other, "second session on the wrong replica")
    image = reply["timings"]["images"][0]
    check(image["source"] == "shared_cache" and reply["timings"]["vision_encode_ms"] == 0,
          f"expected a shared-cache hit: {reply['timings']}")
    check(content(reply) == content(ask(ref, chat(question))[0]),
          "answer from the shared encoding differs from the reference")
    check(cluster.metric(other, "qvl_shared_cache_image_hits_total") == 1, "image hit not counted")
    print("ok: a new session on another replica uses the shared encoding, same answer")

    # 3. A deterministic request repeated on another replica comes from the answer cache.
    # Every request so far was greedy: once home has written as many answers as it
    # finished, the first turn's is in Redis.
    wait_for("answers stored", lambda: cluster.metric(home, "qvl_shared_cache_answer_stores_total")
             == cluster.metric(home, 'qvl_requests_total{outcome="finished"}'), 10)
    again, headers = ask(n, chat(messages[:1], stream=False), sessions[2][0])
    check(cluster.replica_of(headers) == 2, "repeat on the wrong replica")
    check(headers.get("x-qvl-answer-cache") == "shared", f"no answer-cache hit: {headers}")
    check(content(again) == content(first), "cached answer differs")
    status, headers, raw = Http.call(n, "POST", "/v1/chat/completions", chat(messages[:1], stream=True),
                                     {"X-Session-Id": sessions[1][1]})
    events = [json.loads(line[6:]) for line in raw.decode().splitlines()
              if line.startswith("data: {")]
    streamed = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e.get("choices"))
    check(status == 200 and headers.get("x-qvl-answer-cache") == "shared" and streamed == content(first),
          f"streamed repeat not answered from the cache: {headers} {streamed!r}")
    seeded = chat([{"role": "user", "content": "Tell a story"}], temperature=0.9, seed=7)
    stored = cluster.metric(0, "qvl_shared_cache_answer_stores_total")
    a, _ = ask(n, seeded, sessions[0][1])
    wait_for("seeded answer stored",
             lambda: cluster.metric(0, "qvl_shared_cache_answer_stores_total") > stored, 10)
    b, headers = ask(n, seeded, sessions[1][1])
    check(headers.get("x-qvl-answer-cache") == "shared" and content(a) == content(b),
          "a seeded request was not answered from the cache")
    unseeded = chat([{"role": "user", "content": "Tell a story"}], temperature=0.9)
    _, headers = ask(n, unseeded, sessions[0][1])
    _, headers = ask(n, unseeded, sessions[0][1])
    check("x-qvl-answer-cache" not in headers, "a sampled request without seed was cached")
    # A corrupted answer is ignored: the request is computed again, and stored again.
    answers = cluster.redis_cli("--scan", "--pattern", "test:ans:*").split()
    for key in answers:
        cluster.redis_cli("SETRANGE", key, "40", "garbage")
    rejected = sum(cluster.metric(i, "qvl_shared_cache_answer_rejected_total") for i in range(3))
    recomputed, headers = ask(n, chat(messages[:1]), sessions[1][1])
    check("x-qvl-answer-cache" not in headers, "a corrupted answer was used")
    check(content(recomputed) == content(first), "recomputed answer differs")
    check(sum(cluster.metric(i, "qvl_shared_cache_answer_rejected_total") for i in range(3)) == rejected + 1,
          "the corrupted answer was not counted")
    print("ok: deterministic answers are shared, sampled ones without a seed are not, corrupted ones are ignored")

    # 4. A value corrupted by hand is detected and ignored: replica 2 encodes itself.
    keys = cluster.redis_cli("--scan", "--pattern", "test:enc:*").split()
    check(len(keys) == 1, f"expected one stored encoding, found {keys}")
    cluster.redis_cli("SETRANGE", keys[0], "100", "garbage")
    question = [{"role": "user", "content": [photo, {"type": "text", "text": "Shapes?"}]}]
    reply, headers = ask(n, chat(question), sessions[2][0])
    check(cluster.replica_of(headers) == 2, "third session on the wrong replica")
    check(reply["timings"]["images"][0]["source"] == "encoder", f"corrupt value used: {reply['timings']}")
    check(cluster.metric(2, "qvl_shared_cache_image_rejected_total") == 1, "rejection not counted")
    check(content(reply) == content(ask(ref, chat(question))[0]), "answer after corruption differs")
    print("ok: a corrupted Redis value is detected and ignored")

    # 5. Redis killed and restarted under load: nothing fails, faults are counted, sharing resumes.
    faults_before = sum(cluster.metric(i, "qvl_shared_cache_faults_total") for i in range(3))
    def load(k):
        body = chat([{"role": "user", "content": [second if k % 2 else third,
                                                   {"type": "text", "text": f"load {k}"}]}])
        return ask(n, body, f"load-{k}")[0]
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(load, k) for k in range(12)]
        time.sleep(0.3)
        cluster.kill_redis()
        futures += [pool.submit(load, k) for k in range(12, 24)]  # these start without Redis
        for f in futures:
            f.result()  # raises on any failed request
    faults_after = sum(cluster.metric(i, "qvl_shared_cache_faults_total") for i in range(3))
    check(faults_after > faults_before, "Redis down but no fault counted")
    cluster.start_redis()
    time.sleep(1.5)  # the clients' back-off
    fresh = [{"role": "user", "content": unseen + [{"type": "text", "text": "Compare."}]}]
    ask(n, chat(fresh), sessions[0][0])
    wait_for("encodings stored again",
             lambda: len(cluster.redis_cli("--scan", "--pattern", "test:enc:*").split()) >= 2, 10)
    # (Redis restarted empty: only the two new encodings are there.)
    fresh[0]["content"][2]["text"] = "Compare again."
    reply, _ = ask(n, chat(fresh), sessions[1][0])
    sources = [im["source"] for im in reply["timings"]["images"]]
    check(sources == ["shared_cache", "shared_cache"], f"sharing did not resume: {sources}")
    print(f"ok: Redis killed under load: no request failed, faults {faults_before:.0f} -> {faults_after:.0f}, sharing resumed")

    # 6. SIGKILL of one replica under load.
    victim = 1
    def stream(k, sid):
        body = chat([{"role": "user", "content": f"long answer {k}"}], max_tokens=400,
                    ignore_eos=True, stream=True)
        try:
            status, headers, raw = Http.call(n, "POST", "/v1/chat/completions", body,
                                             {"X-Session-Id": sid}, timeout=60)
        except (OSError, http.client.HTTPException) as e:
            return ("broken", str(e))
        text = raw.decode(errors="replace")
        if status == 200 and text.rstrip().endswith("data: [DONE]"):
            return ("ok", cluster.replica_of(headers))
        return ("error", status)
    jobs = [(k, sessions[k % 3][1]) for k in range(9)]
    with concurrent.futures.ThreadPoolExecutor(9) as pool:
        futures = [pool.submit(stream, k, sid) for k, sid in jobs]
        time.sleep(0.5)
        cluster.kill_replica(victim)
        results = [f.result() for f in futures]
    for (k, sid), result in zip(jobs, results):
        if k % 3 != victim:
            check(result[0] == "ok", f"request {k} on a surviving replica failed: {result}")
        else:
            check(result[0] in ("ok", "broken", "error"), f"request {k}: {result}")
    moved = [{"role": "user", "content": [photo, {"type": "text", "text": "Colours?"}]}]
    reply, headers = ask(n, chat(moved), sessions[victim][0])
    check(cluster.replica_of(headers) != victim, "a session stayed on the dead replica")
    check(content(reply) == content(ask(ref, chat(moved))[0]), "moved session answers differently")
    cluster.start_replica(victim)
    def back():
        _, headers = ask(n, chat([{"role": "user", "content": "ping"}], max_tokens=1),
                         sessions[victim][0])
        return cluster.replica_of(headers) == victim
    wait_for("the restarted replica to take traffic", back, 20)
    print(f"ok: SIGKILL of a replica under load: {results}; its sessions moved and came back")

    # 7. A stored response is continued, read and deleted on other replicas.
    def respond(body, sid):
        status, headers, raw = Http.call(n, "POST", "/v1/responses", body, {"X-Session-Id": sid})
        check(status == 200, f"/v1/responses: {status} {raw[:300]!r}")
        return json.loads(raw), cluster.replica_of(headers)

    def stored(path, sid):
        status, headers, raw = Http.call(n, "GET", path, None, {"X-Session-Id": sid})
        return status, json.loads(raw), cluster.replica_of(headers)

    turn = {"input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": photo["image_url"]["url"]},
        {"type": "input_text", "text": "What is this?"}]}], "max_output_tokens": 12,
        "temperature": 0}
    kept, where = respond(turn, sessions[0][0])
    check(where == 0 and kept["store"] is True, f"stored response on replica {where}: {kept}")
    path = f"/v1/responses/{kept['id']}"
    status, got, where = stored(path, sessions[1][0])
    check(status == 200 and where == 1 and got == kept, f"GET on replica {where}: {status} {got}")
    follow, where = respond({"input": "And then?", "previous_response_id": kept["id"],
                             "max_output_tokens": 12, "temperature": 0}, sessions[2][0])
    whole = dict(turn, input=turn["input"] + kept["output"] + [{"role": "user", "content": "And then?"}])
    resent, _ = respond(whole, sessions[2][0])
    check(where == 2 and follow["usage"]["input_tokens"] == resent["usage"]["input_tokens"]
          and follow["output"] == [dict(item, id=follow["output"][i]["id"])
                                   for i, item in enumerate(resent["output"])],
          f"continued on replica {where} differs from the whole conversation: {follow} {resent}")
    status, _, raw = Http.call(n, "DELETE", path, None, {"X-Session-Id": sessions[1][0]})
    check(status == 200 and json.loads(raw)["deleted"] is True, f"DELETE: {status} {raw!r}")
    status, _, where = stored(path, sessions[0][0])
    check(status == 404 and where == 0, f"deleted response still on replica {where}: {status}")
    print("ok: stored responses are continued, read and deleted on any replica")

    # 8. nginx's own errors are JSON in qvl's shapes, never its HTML pages.
    status, headers, raw = too_large(n, "/v1/chat/completions")
    check(status == 413 and headers.get("content-type") == "application/json"
          and json_error(raw).get("code") == "too_large",
          f"body over nginx's limit: {status} {headers} {raw!r}")
    status, headers, raw = too_large(n, "/api/chat")
    check(status == 413 and isinstance(json_error(raw), str),
          f"Ollama body over nginx's limit: {status} {raw!r}")
    # Every replica down: refused connections first, then "no live upstreams" once nginx
    # has taken them all out (max_fails): both answer a JSON 503 with Retry-After.
    for i in range(3):
        cluster.kill_replica(i)
    for k in range(8):
        path = "/api/chat" if k % 2 else "/v1/chat/completions"
        status, headers, raw = Http.call(n, "POST", path, chat([{"role": "user", "content": "hi"}]),
                                         {"X-Session-Id": f"down-{k}"} if k % 4 < 2 else {})
        check(status == 503 and headers.get("content-type") == "application/json"
              and headers.get("retry-after") == "5", f"all replicas down, {path}: {status} {headers} {raw!r}")
        error = json_error(raw)
        if path == "/api/chat":
            check(isinstance(error, str), f"Ollama error shape: {raw!r}")
        else:
            check(error.get("type") == "server_error" and error.get("code") == "unavailable",
                  f"OpenAI error shape: {raw!r}")
    status, headers, raw = Http.call(n, "GET", "/health")
    check(status == 503 and json_error(raw), f"/health with every replica down: {status} {raw!r}")
    print("ok: every replica down gives a JSON 503 with Retry-After in the route's shape; an oversized body a JSON 413")


def json_error(raw):
    """The "error" member of a JSON body; {} when the body is not JSON (an HTML page)."""
    try:
        return json.loads(raw)["error"]
    except (ValueError, KeyError, TypeError):
        return {}


def too_large(port, path):
    """A request whose Content-Length is over nginx's client_max_body_size: nginx refuses it
    from the headers alone, before any body is sent."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", path)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(600 << 20))
        conn.endheaders()
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(main())
