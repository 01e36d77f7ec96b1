#!/usr/bin/env python3
"""Checks what can be checked of deploy/ on a machine without a container runtime or a
cluster:
  - every manifest parses, and every field it uses exists in the Kubernetes API (the
    models of Debian's python3-kubernetes, generated from the Kubernetes 1.22 OpenAPI
    spec; autoscaling/v2 is checked against v2beta2, whose fields it kept);
  - the pieces fit: selectors and labels, Service and Ingress ports, probes on /health,
    the grace period against --shutdown-grace and preStop, the Secret keys, the ingress
    hash key, the autoscaler's target and metric, every `qvl serve` flag in the
    Deployment against `qvl serve --help`;
  - the Dockerfile builds with `make build`'s own commands, runs non-root on
    0.0.0.0, and installs a package for every shared library the binary needs.
Usage: validate.py [--qvl build/qvl]. Exit 0 when all pass, 1 on a finding, 77 when
python3-yaml is missing."""

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
    ("networking.k8s.io/v1", "Ingress"): "V1Ingress",
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

def serve_flags(qvl):
    help_text = subprocess.run([qvl, "serve", "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text)) | {"-m"}


def flag_value(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


def check_deployment(doc, docs, flags):
    where = f"Deployment {doc['metadata']['name']}"
    spec = doc["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"].get("labels", {})
    for k, v in spec["selector"]["matchLabels"].items():
        if labels.get(k) != v:
            finding(where, f"selector {k}={v} does not match the pod labels")
    if doc["metadata"]["name"] != "qvl":
        return
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
    pods = [d for d in docs if d["kind"] == "Deployment" and
            all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items())]
    if not pods:
        return finding(where, "selects no Deployment's pods")
    names = {p.get("name") for c in pods[0]["spec"]["template"]["spec"]["containers"]
             for p in c.get("ports", [])}
    for port in doc["spec"]["ports"]:
        if port["targetPort"] not in names:
            finding(where, f"targetPort {port['targetPort']} is no container port name")


def check_ingress(doc, docs):
    where = f"Ingress {doc['metadata']['name']}"
    for rule in doc["spec"]["rules"]:
        for p in rule["http"]["paths"]:
            s = p["backend"]["service"]
            svc = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == s["name"]]
            if not svc:
                finding(where, f"no Service {s['name']}")
            elif s["port"]["name"] not in {x["name"] for x in svc[0]["spec"]["ports"]}:
                finding(where, f"Service {s['name']} has no port {s['port']['name']}")
    annotations = doc["metadata"]["annotations"]
    key = annotations.get("nginx.ingress.kubernetes.io/upstream-hash-by", "")
    snippets = "".join(d.get("data", {}).get("http-snippet", "") for d in docs if d["kind"] == "ConfigMap")
    if key.startswith("$qvl") and f"map $http_x_session_id {key}" not in snippets:
        finding(where, f"{key} is defined by no http-snippet")
    if annotations.get("nginx.ingress.kubernetes.io/proxy-buffering") != "off":
        finding(where, "streams must pass unbuffered")


def check_autoscaler(doc, docs):
    where = f"HorizontalPodAutoscaler {doc['metadata']['name']}"
    ref = doc["spec"]["scaleTargetRef"]
    if not any(d["kind"] == ref["kind"] and d["metadata"]["name"] == ref["name"] for d in docs):
        finding(where, f"no {ref['kind']} {ref['name']}")
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


# --- Dockerfile ------------------------------------------------------------------------

def check_dockerfile(qvl):
    path = os.path.join(HERE, "Dockerfile")
    with open(path) as f:
        text = f.read()
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    if len(stages) != 2:
        return finding("Dockerfile", "expected two stages (build, run)")
    build, run = stages
    if not build.startswith("debian:") or not run.startswith("debian:"):
        finding("Dockerfile", "both stages should be Debian")
    if "RUN scripts/setup.sh" not in build or "RUN make build" not in build:
        finding("Dockerfile", "the build stage should run scripts/setup.sh and make build")
    with open(os.path.join(ROOT, "Makefile")) as f:
        makefile = f.read()
    if "build: setup" not in makefile:
        finding("Makefile", "make build no longer runs setup first; review the Dockerfile")
    user = re.search(r"^USER (\S+)", run, flags=re.M)
    if not user or user.group(1).split(":")[0] in ("0", "root"):
        finding("Dockerfile", "the image should run as a non-root user")
    if '"--host", "0.0.0.0"' not in run:
        finding("Dockerfile", "the default command should serve on 0.0.0.0")
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
        client = None
        print("note: python3-kubernetes is not installed: fields are not checked against the API")
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
    flags = serve_flags(args.qvl) if args.qvl else None
    for d in docs:
        {"Deployment": lambda d: check_deployment(d, docs, flags),
         "Service": lambda d: check_service(d, docs),
         "Ingress": lambda d: check_ingress(d, docs),
         "HorizontalPodAutoscaler": lambda d: check_autoscaler(d, docs)}.get(d["kind"], lambda d: None)(d)
    check_secret_keys(docs)
    check_dockerfile(args.qvl)
    for f in findings:
        print(f"FAIL {f}")
    print(f"{len(docs)} manifests, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
