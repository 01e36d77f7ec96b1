#!/usr/bin/env python3
"""Checks what can be checked of deploy/ on a machine without a container runtime or a
cluster:
  - every manifest parses, and every field it uses exists in the Kubernetes API (the
    models of Debian's python3-kubernetes, generated from the Kubernetes 1.22 OpenAPI
    spec; autoscaling/v2 is checked against v2beta2, whose fields it kept);
  - the pieces fit: selectors and labels, Service ports, probes on /health, the grace
    period against --shutdown-grace and preStop, the Secret keys, the autoscaler's
    target and metric, every `qvl serve` flag in the StatefulSet against
    `qvl serve --help`; deploy/kustomization.yaml (its files, its image names), the nginx
    Deployment's ConfigMap mounts against deploy/nginx/qvl.conf's include, and the
    Kubernetes replica list against the StatefulSet's pod names and maxReplicas;
  - deploy/nginx/qvl.conf: nginx's own answers (its JSON 413 and 503, and a preflight
    when every replica is down) carry the replicas' CORS origin, and `location /` adds no
    CORS header of its own; then this machine's nginx runs it (nginx -t, then a real run
    with a temporary prefix in front of two `qvl serve` replicas of the fixture model, or
    of closed ports without --qvl) and the headers are checked on the wire;
  - the Dockerfile builds with `make build`'s own commands and a Node.js the locked web
    packages accept, runs non-root on 0.0.0.0, and installs a package for every shared
    library the binary needs.
Usage: validate.py [--qvl build/qvl]. Exit 0 when all pass, 1 on a finding, 77 (could
not check) when python3-yaml or python3-kubernetes is missing: a python3 without them
runs Debian's /usr/bin/python3 instead when that has them."""

import argparse
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
findings = []


def finding(where, message):
    findings.append(f"{where}: {message}")


# --- fields against the API models -------------------------------------------------

KINDS = {
    ("v1", "PersistentVolumeClaim"): "V1PersistentVolumeClaim",
    ("v1", "Service"): "V1Service",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("v1", "Secret"): "V1Secret",
    ("apps/v1", "Deployment"): "V1Deployment",
    ("apps/v1", "StatefulSet"): "V1StatefulSet",
    ("policy/v1", "PodDisruptionBudget"): "V1PodDisruptionBudget",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "V2beta2HorizontalPodAutoscaler",
}


def check_fields(client, type_name, value, path):
    if type_name.startswith("list["):
        if not isinstance(value, list):
            return finding(path, f"expected a list, got {value!r}")
        for i, item in enumerate(value):
            check_fields(client, type_name[5:-1], item, f"{path}[{i}]")
        return
    if type_name.startswith("dict("):
        if not isinstance(value, dict):
            return finding(path, f"expected a map, got {value!r}")
        inner = type_name[type_name.index(",") + 1:-1].strip()
        for k, v in value.items():
            check_fields(client, inner, v, f"{path}.{k}")
        return
    if type_name == "object":
        return
    if type_name in ("str", "int", "bool", "float", "datetime"):
        expected = {"str": str, "int": int, "bool": bool, "float": (int, float), "datetime": str}
        if not isinstance(value, expected[type_name]) or (type_name == "int" and isinstance(value, bool)):
            finding(path, f"expected {type_name}, got {value!r}")
        return
    model = getattr(client, type_name, None)
    if model is None:
        return finding(path, f"unknown API type {type_name}")
    if not isinstance(value, dict):
        return finding(path, f"expected an object ({type_name}), got {value!r}")
    by_json = {json: attr for attr, json in model.attribute_map.items()}
    for key, item in value.items():
        if key not in by_json:
            finding(path, f"{type_name} has no field '{key}'")
            continue
        check_fields(client, model.openapi_types[by_json[key]], item, f"{path}.{key}")


# --- how the pieces fit ---------------------------------------------------------------

def serve_help(qvl):
    return subprocess.run([qvl, "serve", "--help"], capture_output=True, text=True).stdout


def serve_flags(help_text):
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text)) | {"-m"}


def flag_value(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


def check_deployment(doc, docs, flags):
    where = f"{doc['kind']} {doc['metadata']['name']}"
    spec = doc["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"].get("labels", {})
    for k, v in spec["selector"]["matchLabels"].items():
        if labels.get(k) != v:
            finding(where, f"selector {k}={v} does not match the pod labels")
    if doc["metadata"]["name"] != "qvl":
        return
    if doc["kind"] != "StatefulSet":
        finding(where, "qvl runs as a StatefulSet: nginx hashes sessions to its pods' names")
    c = next(c for c in pod["containers"] if c["name"] == "qvl")
    args = [str(a) for a in c["args"]]
    if args[0] != "serve":
        finding(where, "the container does not run `qvl serve`")
    if flag_value(args, "--host") != "0.0.0.0":
        finding(where, "qvl serve must listen on 0.0.0.0 in a pod")
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    if str(ports.get("http")) != flag_value(args, "--port"):
        finding(where, "containerPort 'http' differs from --port")
    if flags:
        for a in args:
            if a.startswith("-") and a not in flags:
                finding(where, f"`qvl serve` has no flag {a}")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = c.get(probe, {}).get("httpGet", {})
        if get.get("path") != "/health" or get.get("port") != "http":
            finding(where, f"{probe} should be GET /health on port http")
    grace = float(flag_value(args, "--shutdown-grace") or 10)
    sleep = c["lifecycle"]["preStop"]["exec"]["command"]
    pre_stop = float(sleep[1]) if sleep[0] == "sleep" else 0
    if pod["terminationGracePeriodSeconds"] < grace + pre_stop + 5:
        finding(where, f"terminationGracePeriodSeconds {pod['terminationGracePeriodSeconds']} "
                       f"leaves under 5 s after preStop {pre_stop} s + --shutdown-grace {grace} s")
    if not pod.get("securityContext", {}).get("runAsNonRoot"):
        finding(where, "pods should run as non-root")
    init = [i for i in pod.get("initContainers", []) if i["args"][0] == "pull"]
    if not init:
        finding(where, "no init container runs `qvl pull`")
    model = flag_value(args, "-m")
    if init and init[0]["args"][1] != model:
        finding(where, "the init container pulls another model than the one served")
    mounted = {v["name"] for v in pod["volumes"]}
    for container in pod["containers"] + pod.get("initContainers", []):
        for m in container.get("volumeMounts", []):
            if m["name"] not in mounted:
                finding(where, f"volumeMount {m['name']} has no volume")
    for v in pod["volumes"]:
        claim = v.get("persistentVolumeClaim", {}).get("claimName")
        if claim and not any(d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == claim
                             for d in docs):
            finding(where, f"no PersistentVolumeClaim {claim}")


def check_service(doc, docs):
    where = f"Service {doc['metadata']['name']}"
    selector = doc["spec"]["selector"]
    pods = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet") and
            all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items())]
    if not pods:
        return finding(where, "selects no Deployment's pods")
    names = {p.get("name") for c in pods[0]["spec"]["template"]["spec"]["containers"]
             for p in c.get("ports", [])}
    for port in doc["spec"]["ports"]:
        if port["targetPort"] not in names:
            finding(where, f"targetPort {port['targetPort']} is no container port name")


def check_kustomization(docs):
    """deploy/kustomization.yaml: its files exist, every image is named in images:, the
    nginx Deployment mounts the generated ConfigMap where qvl.conf includes the list."""
    import yaml
    where = "kustomization.yaml"
    with open(os.path.join(HERE, "kustomization.yaml")) as f:
        k = yaml.safe_load(f)
    resources = set(k.get("resources", []))
    for r in resources:
        if not os.path.exists(os.path.join(HERE, r)):
            finding(where, f"no file {r}")
    for path in glob.glob(os.path.join(HERE, "kubernetes", "*.yaml")):
        name = os.path.relpath(path, HERE)
        if name not in resources and os.path.basename(path) != "prometheus.yaml":
            finding(where, f"{name} is not among the resources")
    generated = {}
    for g in k.get("configMapGenerator", []):
        for entry in g.get("files", []):
            key, _, file = entry.partition("=")
            if not os.path.exists(os.path.join(HERE, file or key)):
                finding(where, f"no file {file or key}")
            generated.setdefault(g["name"], {})[key] = file or key
    nginx = generated.get("qvl-nginx", {})
    if nginx.get("qvl.conf") != "nginx/qvl.conf":
        finding(where, "the nginx ConfigMap's qvl.conf should be deploy/nginx/qvl.conf itself")
    named = {i["name"] for i in k.get("images", [])}
    for d in docs:
        if d["kind"] not in ("Deployment", "StatefulSet"):
            continue
        pod = d["spec"]["template"]["spec"]
        for c in pod["containers"] + pod.get("initContainers", []):
            image = c["image"].rsplit(":", 1)[0]
            if image not in named and not image.startswith("redis"):
                finding(where, f"image {image} of {d['metadata']['name']} is not in images:")
    # The nginx pods: qvl.conf in conf.d, the replica list where qvl.conf includes it.
    with open(os.path.join(HERE, "nginx", "qvl.conf")) as f:
        site = f.read()
    include = re.search(r"include (/\S+)/replicas\.conf;", site)
    front = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "qvl-nginx"]
    if not front:
        return finding(where, "no Deployment qvl-nginx")
    pod = front[0]["spec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for c in pod["containers"] for m in c.get("volumeMounts", [])}
    wanted = {"qvl.conf": "/etc/nginx/conf.d", "replicas.conf": include.group(1) if include else None}
    for v in pod["volumes"]:
        cm = v.get("configMap")
        if not cm:
            continue
        if cm["name"] not in generated:
            finding("Deployment qvl-nginx", f"ConfigMap {cm['name']} is generated by no configMapGenerator")
        for item in cm.get("items", []):
            if mounts.get(v["name"]) != wanted.get(item["key"]):
                finding("Deployment qvl-nginx", f"{item['key']} is mounted at {mounts.get(v['name'])}, "
                                                f"not {wanted.get(item['key'])}")
    image = pod["containers"][0]["image"]
    tag = next((i.get("newTag") for i in k.get("images", []) if image.startswith(i["name"])), None)
    version = re.match(r"(\d+)\.(\d+)", str(tag or image.rsplit(":", 1)[-1]))
    if not version or (int(version.group(1)), int(version.group(2))) < (1, 28):
        finding("Deployment qvl-nginx", f"nginx {tag or image} has no `resolve` in upstream servers "
                                        "(nginx >= 1.27.3; stable 1.28 and later)")
    # The replica list names every pod the autoscaler may make, on the qvl port.
    sts = next((d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "qvl"), None)
    hpa = next((d for d in docs if d["kind"] == "HorizontalPodAutoscaler"), None)
    if not sts or not hpa:
        return finding(where, "no StatefulSet qvl or no autoscaler")
    headless = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == sts["spec"]["serviceName"]]
    if not headless or headless[0]["spec"].get("clusterIP") != "None":
        finding("StatefulSet qvl", f"serviceName {sts['spec']['serviceName']} is no headless Service")
    with open(os.path.join(HERE, nginx.get("replicas.conf", "kubernetes/nginx-replicas.conf"))) as f:
        servers = re.findall(r"^server (\S+)(.*);", f.read(), flags=re.M)
    port = next(p["containerPort"] for c in sts["spec"]["template"]["spec"]["containers"]
                for p in c["ports"] if p["name"] == "http")
    names = [f"{sts['metadata']['name']}-{i}.{sts['spec']['serviceName']}." for i in
             range(hpa["spec"]["maxReplicas"])]
    listed = [s for s, _ in servers]
    for n in names:
        if not any(s.startswith(n) and s.endswith(f".svc.cluster.local:{port}") for s in listed):
            finding("nginx-replicas.conf", f"no server {n}NAMESPACE.svc.cluster.local:{port} "
                                           f"(maxReplicas {hpa['spec']['maxReplicas']})")
    for s, params in servers:
        if "resolve" not in params.split():
            finding("nginx-replicas.conf", f"{s} without resolve: its address would never change")


def check_autoscaler(doc, docs):
    where = f"HorizontalPodAutoscaler {doc['metadata']['name']}"
    ref = doc["spec"]["scaleTargetRef"]
    if not any(d["kind"] == ref["kind"] and d["metadata"]["name"] == ref["name"] for d in docs):
        finding(where, f"no {ref['kind']} {ref['name']}")
    if any(m["type"] == "Resource" and m["resource"]["name"] == "cpu" for m in doc["spec"]["metrics"]):
        finding(where, "scales on CPU: one decoding stream keeps a replica's threads busy")
    with open(os.path.join(ROOT, "src/server/server_metrics.cc")) as f:
        exported = f.read()
    for m in doc["spec"]["metrics"]:
        if m["type"] == "Pods" and f'"{m["pods"]["metric"]["name"]}"' not in exported:
            finding(where, f"qvl exports no metric {m['pods']['metric']['name']}")


def check_secret_keys(docs):
    keys = set()
    for d in docs:
        for ref in re.findall(r"secretKeyRef': \{'name': 'qvl', 'key': '([a-z-]+)'", str(d)):
            keys.add(ref)
    documented = {"api-key", "redis-password", "hf-token"}
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    for k in keys | documented:
        if f"--from-literal={k}=" not in readme and k != "hf-token":
            finding("README", f"the Secret key {k} is not in the `kubectl create secret` command")
    for k in keys - documented:
        finding("manifests", f"unknown Secret key {k}")


# --- nginx's own answers ----------------------------------------------------------------

CORS_ORIGIN = "Access-Control-Allow-Origin"


def check_nginx_static(flags_help, docs):
    """Every answer nginx writes itself (the error_page locations) carries the replicas'
    Access-Control-Allow-Origin, so that a page on another origin reads the JSON error
    instead of failing on CORS; `location /` adds none (the replicas' would be repeated)."""
    with open(os.path.join(HERE, "nginx", "qvl.conf")) as f:
        site = f.read()
    where = "nginx/qvl.conf"
    origin = re.search(r'map "" \$qvl_cors_origin \{\s*default "([^"]*)";', site)
    if not origin:
        return finding(where, "no map of $qvl_cors_origin, the origin nginx's own answers allow")
    if flags_help is not None:
        default = re.search(r"--cors-origin TEXT=(\S+)", flags_help)
        if not default or default.group(1) != origin.group(1):
            finding(where, f"$qvl_cors_origin is {origin.group(1)!r} but qvl serve's --cors-origin "
                           f"default is {default.group(1) if default else 'unknown'!r}")
    for d in docs:
        for c in d.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            given = flag_value(c.get("args", []) + c.get("command", []), "--cors-origin")
            if given is not None and given != origin.group(1):
                finding(where, f"$qvl_cors_origin is {origin.group(1)!r} but {d['metadata']['name']} "
                               f"serves --cors-origin {given!r}")
    blocks = dict(re.findall(r"^    location (\S+) \{\n(.*?)^    \}", site, flags=re.M | re.S))
    targets = set(re.findall(r"error_page [\d ]+= (@\w+);", site))
    if not targets:
        finding(where, "no error_page: nginx would answer its errors with HTML pages")
    for name in targets:
        if f"add_header {CORS_ORIGIN} $qvl_cors_origin always;" not in blocks.get(name, ""):
            finding(where, f"location {name} answers without {CORS_ORIGIN}: a browser on another "
                           "origin sees a CORS failure instead of the JSON error")
    if "Access-Control-" in re.sub(r"#.*", "", blocks.get("/", "")):
        finding(where, "location / adds Access-Control headers: the replicas send their own, and "
                       "a repeated Access-Control-Allow-Origin is refused by browsers")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_call(port, method, path, headers, body=b""):
    """(status, [(header, value)...], body) of one request to 127.0.0.1:port."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders(body or None)
        r = conn.getresponse()
        return r.status, r.getheaders(), r.read()
    finally:
        conn.close()


def values(headers, name):
    return [v for k, v in headers if k.lower() == name.lower()]


def check_nginx_live(qvl):
    """deploy/nginx/qvl.conf run by this machine's nginx (with a temporary prefix) in front of
    two `qvl serve` replicas of the fixture model on loopback ports (or closed ports without
    --qvl): a replica's answer carries one Access-Control-Allow-Origin, and nginx's own 413,
    503 and preflight with every replica down carry theirs."""
    import shutil
    import tempfile
    import time
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        print("note: no nginx on this machine; qvl.conf was not run")
        return
    where = "nginx/qvl.conf (run)"
    tmp = tempfile.mkdtemp(prefix="qvl-validate-nginx-")
    procs = []
    try:
        ports = [free_port(), free_port()]
        front = free_port()
        with open(os.path.join(tmp, "replicas.conf"), "w") as f:
            for p in ports:
                f.write(f"server 127.0.0.1:{p} max_fails=3 fail_timeout=2s;\n")
        with open(os.path.join(HERE, "nginx", "qvl.conf")) as f:
            site = f.read().replace("/etc/nginx/qvl/replicas.conf", os.path.join(tmp, "replicas.conf"))
        site = site.replace("listen 8080;", f"listen 127.0.0.1:{front};")
        with open(os.path.join(tmp, "qvl.conf"), "w") as f:
            f.write(site)
        temp = os.path.join(tmp, "temp")
        os.mkdir(temp)
        with open(os.path.join(tmp, "nginx.conf"), "w") as f:
            f.write(f"worker_processes 1;\npid {tmp}/nginx.pid;\nerror_log {tmp}/error.log warn;\n"
                    "events { worker_connections 64; }\nhttp {\n"
                    f"    access_log off;\n    client_body_temp_path {temp}/body;\n"
                    f"    proxy_temp_path {temp}/proxy;\n    fastcgi_temp_path {temp}/fastcgi;\n"
                    f"    uwsgi_temp_path {temp}/uwsgi;\n    scgi_temp_path {temp}/scgi;\n"
                    f"    include {tmp}/qvl.conf;\n}}\n")
        run = [nginx, "-e", "stderr", "-p", tmp, "-c", os.path.join(tmp, "nginx.conf"),
               "-g", "daemon off;" + (" user root;" if os.getuid() == 0 else "")]
        test = subprocess.run(run + ["-t"], capture_output=True, text=True)
        if test.returncode != 0:
            return finding(where, f"nginx -t: {test.stderr.strip()}")
        model = os.path.join(ROOT, "tests", "data", "tiny-qwen3vl", "model")
        if qvl:
            for p in ports:
                procs.append(subprocess.Popen(
                    [qvl, "serve", "-m", model, "--port", str(p), "--dtype", "f32",
                     "--weight-cache", "none", "-t", "1"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        origin = {"Origin": "http://page.example"}
        deadline = time.time() + 60
        while True:
            try:
                status, headers, _ = http_call(front, "GET", "/health", {})
                if status == 200 or (not qvl and status == 503):
                    break
            except OSError:
                pass
            if time.time() > deadline:
                return finding(where, "nginx (and the replicas) did not answer /health in 60 s")
            time.sleep(0.2)
        if qvl:
            status, headers, _ = http_call(front, "GET", "/v1/models", origin)
            if status != 200 or values(headers, CORS_ORIGIN) != ["*"]:
                finding(where, f"a replica's answer through nginx: {status}, {CORS_ORIGIN} "
                               f"{values(headers, CORS_ORIGIN)} (one '*' expected)")
        big = dict(origin, **{"Content-Type": "application/json", "Content-Length": str(600 << 20)})
        status, headers, body = http_call(front, "POST", "/v1/chat/completions", big)
        if status != 413 or values(headers, CORS_ORIGIN) != ["*"] or b'"too_large"' not in body:
            finding(where, f"body over client_max_body_size: {status} {headers} {body[:200]!r}")
        for p in procs[:-1]:
            p.kill()
            p.wait()
        post = dict(origin, **{"Content-Type": "application/json"})
        status, headers, body = http_call(front, "POST", "/v1/chat/completions", post, b"{}")
        if status != 503 or values(headers, CORS_ORIGIN) != ["*"] \
                or values(headers, "Access-Control-Expose-Headers") != ["Retry-After"] \
                or values(headers, "Retry-After") != ["5"] or b'"unavailable"' not in body:
            finding(where, f"every replica down: {status} {headers} {body[:200]!r}")
        preflight = dict(origin, **{"Access-Control-Request-Method": "POST",
                                    "Access-Control-Request-Headers": "authorization,content-type"})
        status, headers, _ = http_call(front, "OPTIONS", "/v1/chat/completions", preflight)
        if status != 204 or values(headers, CORS_ORIGIN) != ["*"] \
                or values(headers, "Access-Control-Allow-Methods") != ["POST"] \
                or values(headers, "Access-Control-Allow-Headers") != ["authorization,content-type"]:
            finding(where, f"a preflight with every replica down: {status} {headers}")
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


# --- Dockerfile ------------------------------------------------------------------------

def check_dockerfile(qvl):
    path = os.path.join(HERE, "Dockerfile")
    with open(path) as f:
        text = f.read()
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    if len(stages) != 3:
        return finding("Dockerfile", "expected three stages (node, build, run)")
    node, build, run = stages
    if not build.startswith("debian:") or not run.startswith("debian:"):
        finding("Dockerfile", "the build and run stages should be Debian")
    # Node.js: the highest "node >= N" any locked package that is not only for
    # development asks for (npm only warns, but the build may then fail).
    import json
    with open(os.path.join(ROOT, "web", "package-lock.json")) as f:
        lock = json.load(f)
    need = 0
    for pkg in lock["packages"].values():
        engines = pkg.get("engines")
        floor = re.match(r"\s*>=\s*v?(\d+)", engines.get("node", "")) if isinstance(engines, dict) else None
        if floor and not pkg.get("dev"):
            need = max(need, int(floor.group(1)))
    tag = re.match(r"node:(\d+)-(\w+)", node)
    release = re.match(r"debian:(\w+)", build)
    if not tag or int(tag.group(1)) < need:
        finding("Dockerfile", f"the node stage ({node.split()[0]}) should be Node.js >= {need}")
    elif not release or not tag.group(2).startswith(release.group(1)):
        finding("Dockerfile", "the node stage should be built on the build stage's Debian release")
    if "COPY --from=node" not in build:
        finding("Dockerfile", "the build stage should take node and npm from the node stage")
    if "RUN scripts/setup.sh" not in build or "RUN make build" not in build:
        finding("Dockerfile", "the build stage should run scripts/setup.sh and make build")
    with open(os.path.join(ROOT, "Makefile")) as f:
        makefile = f.read()
    if "build: setup" not in makefile:
        finding("Makefile", "make build no longer runs setup first; review the Dockerfile")
    user = re.search(r"^USER (\S+)", run, flags=re.M)
    if not user or user.group(1).split(":")[0] in ("0", "root"):
        finding("Dockerfile", "the image should run as a non-root user")
    # `docker run IMAGE serve` (SageMaker's start) must serve on 0.0.0.0:8080 by itself.
    env = dict(re.findall(r"\b(QVL_[A-Z]+)=(\S+)", "\n".join(
        line for line in run.splitlines() if line.startswith("ENV "))))
    if not re.search(r'^CMD \["serve"\]$', run, flags=re.M):
        finding("Dockerfile", 'the default command should be ["serve"], its flags in ENV')
    if env.get("QVL_HOST") != "0.0.0.0" or env.get("QVL_PORT") != "8080":
        finding("Dockerfile", "the image should serve on 0.0.0.0:8080 (QVL_HOST, QVL_PORT)")
    if not env.get("QVL_MODEL"):
        finding("Dockerfile", "the image should name the model it serves (QVL_MODEL)")
    if qvl:
        needed = re.findall(r"\(NEEDED\).*\[(.+)\]", subprocess.run(
            ["readelf", "-d", qvl], capture_output=True, text=True).stdout)
        installed = set(re.findall(r"\b(lib[a-z0-9.+-]+)", run))
        for lib in needed:
            if re.match(r"lib(a|ub|t|l)san\.so", lib):
                continue  # the runtime of a sanitizer build (make test's asan stage), never shipped
            owners = subprocess.run(["dpkg", "-S", f"*/{lib}"], capture_output=True, text=True).stdout
            packages = {line.split(":")[0] for line in owners.splitlines()}
            if packages & {"libc6", "libc6-i386"}:
                continue  # in every Debian image
            if not packages & installed:
                finding("Dockerfile", f"{lib} ({', '.join(sorted(packages)) or 'no package'}) "
                                      "is not installed in the run stage")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qvl")
    args = ap.parse_args()
    try:
        import yaml
    except ImportError:
        print("SKIP: python3-yaml is not installed (scripts/setup.sh installs it)")
        return 77
    try:
        import kubernetes.client as client
    except ImportError:
        # Another python3 first on PATH (pyenv, a venv): Debian's has python3-kubernetes.
        debian = "/usr/bin/python3"
        if os.path.exists(debian) and os.path.realpath(sys.executable) != os.path.realpath(debian) \
                and not os.environ.get("QVL_VALIDATE_REEXEC"):
            os.environ["QVL_VALIDATE_REEXEC"] = "1"
            os.execv(debian, [debian, os.path.abspath(__file__)] + sys.argv[1:])
        client = None
    docs = []
    for path in sorted(glob.glob(os.path.join(HERE, "kubernetes", "*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc is None:
                    continue
                name = f"{os.path.basename(path)}: {doc.get('kind')} {doc.get('metadata', {}).get('name')}"
                kind = KINDS.get((doc.get("apiVersion"), doc.get("kind")))
                if kind is None:
                    finding(name, f"apiVersion/kind {doc.get('apiVersion')}/{doc.get('kind')} not known to this check")
                elif client is not None:
                    check_fields(client, kind, doc, name)
                docs.append(doc)
    help_text = serve_help(args.qvl) if args.qvl else None
    flags = serve_flags(help_text) if help_text is not None else None
    for d in docs:
        {"Deployment": lambda d: check_deployment(d, docs, flags),
         "StatefulSet": lambda d: check_deployment(d, docs, flags),
         "Service": lambda d: check_service(d, docs),
         "HorizontalPodAutoscaler": lambda d: check_autoscaler(d, docs)}.get(d["kind"], lambda d: None)(d)
    check_kustomization(docs)
    check_secret_keys(docs)
    check_nginx_static(help_text, docs)
    check_nginx_live(args.qvl)
    check_dockerfile(args.qvl)
    for f in findings:
        print(f"FAIL {f}")
    print(f"{len(docs)} manifests, {len(findings)} findings")
    if findings:
        return 1
    if client is None:
        print(f"COULD NOT CHECK: {sys.executable} has no kubernetes module (Debian: python3-kubernetes), "
              "so no field was checked against the Kubernetes API; the other checks passed")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
