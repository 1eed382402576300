#!/usr/bin/python3
"""Offline checks of the Kubernetes manifests in deploy/kubernetes (no cluster needed).

  k8s_check.py validate RENDERED.yaml...   structure, references and llmserve's topology
  k8s_check.py typed RENDERED.yaml...      kubectl decodes each object into its Go type and
                                           keeps every field (a misspelt field is dropped)
  k8s_check.py script RENDERED.yaml WORKLOAD [--replace OLD=NEW]... [--append FLAGS]
                                           the workload's container command as a sh script
  k8s_check.py same A.yaml B.yaml          the two files hold the same objects
  k8s_check.py chart CHART_DIR             Chart.yaml's fields; every .Values path a template
                                           names is in values.yaml; blocks are closed
  k8s_check.py resources KUSTOMIZATION_DIR the files its kustomization.yaml lists, as one
                                           stream (for machines without kubectl)
RENDERED.yaml is `kubectl kustomize` output (several documents).
"""
import json
import os
import re
import shlex
import subprocess
import sys

import yaml

KINDS = {
    ("v1", "Secret"), ("v1", "Service"), ("v1", "ConfigMap"), ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"), ("autoscaling/v2", "HorizontalPodAutoscaler"),
}
WORKLOADS = ("Deployment", "StatefulSet")
# Fields of the kinds kubectl cannot round-trip offline (it drops unknown fields silently).
SCHEMAS = {
    "Secret": {"apiVersion": 1, "kind": 1, "metadata": 1, "type": 1, "data": 1, "stringData": 1, "immutable": 1},
    "HorizontalPodAutoscaler": {"apiVersion": 1, "kind": 1, "metadata": 1, "spec": {
        "scaleTargetRef": {"apiVersion": 1, "kind": 1, "name": 1}, "minReplicas": 1, "maxReplicas": 1,
        "metrics": [{"type": 1, "pods": {"metric": {"name": 1, "selector": 1}, "target": {
            "type": 1, "value": 1, "averageValue": 1, "averageUtilization": 1}}}],
        "behavior": {"scaleUp": 1, "scaleDown": {"stabilizationWindowSeconds": 1, "selectPolicy": 1, "policies": 1}}}},
}
errors = []


def err(obj, message):
    errors.append(f"{obj['kind']}/{obj['metadata']['name']}: {message}")


def load(paths):
    docs = []
    for path in paths:
        with open(path) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def containers(obj):
    return obj["spec"]["template"]["spec"]["containers"]


def flag(args, name):
    """The value of --name=V or --name V in an argument list, else None."""
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def check_workload(obj, by_kind):
    spec, pod = obj["spec"], obj["spec"]["template"]["spec"]
    labels = obj["spec"]["template"]["metadata"].get("labels", {})
    match = spec["selector"]["matchLabels"]
    if any(labels.get(k) != v for k, v in match.items()):
        err(obj, f"selector {match} does not match the pod labels {labels}")
    if not pod.get("securityContext", {}).get("runAsNonRoot"):
        err(obj, "pod securityContext lacks runAsNonRoot: true")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for v in volumes.values():
        if "secret" in v and v["secret"]["secretName"] not in by_kind["Secret"]:
            err(obj, f"volume {v['name']} names a missing Secret {v['secret']['secretName']}")
    for c in containers(obj):
        if not c.get("image"):
            err(obj, f"container {c['name']} has no image")
        if c.get("securityContext", {}).get("allowPrivilegeEscalation") is not False:
            err(obj, f"container {c['name']} allows privilege escalation")
        for m in c.get("volumeMounts", []):
            if m["name"] not in volumes:
                err(obj, f"container {c['name']} mounts unknown volume {m['name']}")
        names = [p["name"] for p in c.get("ports", [])]
        if len(set(names)) != len(names) or any(len(n) > 15 for n in names):
            err(obj, f"container {c['name']} port names repeat or exceed 15 characters: {names}")
        if "http" in names:  # an API server: probed on /health
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                get = c.get(probe, {}).get("httpGet", {})
                if get.get("path") != "/health" or get.get("port") not in ("http", 8000):
                    err(obj, f"container {c['name']} has no {probe} on /health")


def selects(service, obj):
    labels = obj["spec"]["template"]["metadata"].get("labels", {})
    selector = service["spec"].get("selector", {})
    return selector and all(labels.get(k) == v for k, v in selector.items())


def check_service(svc, workloads):
    targets = [w for w in workloads if selects(svc, w)]
    if not targets:
        err(svc, f"selector {svc['spec'].get('selector')} selects no Deployment or StatefulSet")
    for port in svc["spec"].get("ports", []):
        target = port.get("targetPort", port["port"])
        for w in targets:
            ports = [p for c in containers(w) for p in c.get("ports", [])]
            if not any(target in (p.get("name"), p["containerPort"]) for p in ports):
                err(svc, f"targetPort {target} is no container port of {w['kind']}/{w['metadata']['name']}")


def check_topology(by_kind):
    """The frontend and the engine StatefulSet describe one data-parallel deployment."""
    front = by_kind["Deployment"].get("llmserve-frontend")
    engine = by_kind["StatefulSet"].get("llmserve-engine")
    if not front or not engine:
        return
    args = containers(front)[0]["args"]
    size = int(flag(args, "--data-parallel-size"))
    head_local = int(flag(args, "--data-parallel-size-local"))
    api_servers = int(flag(args, "--api-server-count"))
    rpc, address = int(flag(args, "--data-parallel-rpc-port")), flag(args, "--data-parallel-address")
    env = {e["name"]: e.get("value") for e in containers(engine)[0].get("env", [])}
    if int(env["DP_SIZE"]) != size:
        err(engine, f"DP_SIZE {env['DP_SIZE']} is not the frontend's --data-parallel-size {size}")
    if engine["spec"]["replicas"] * int(env["DP_SIZE_LOCAL"]) != size - head_local:
        err(engine, f"replicas x DP_SIZE_LOCAL does not cover ranks {head_local}..{size - 1}")
    script = containers(engine)[0]["args"][0]
    for needed in (f"--data-parallel-address {address}", f"--data-parallel-rpc-port {rpc}", "--headless",
                   "${HOSTNAME##*-}", "--data-parallel-start-rank"):
        if needed not in script:
            err(engine, f"its command lacks {needed}")
    # The head listens on rpc .. rpc+2+2*api_servers; the Service the engines dial forwards them all.
    svc = by_kind["Service"].get(address)
    if not svc or not selects(svc, front):
        err(front, f"--data-parallel-address {address} is not a Service of the frontend")
        return
    want = set(range(rpc, rpc + 3 + 2 * api_servers))
    if {p["port"] for p in svc["spec"]["ports"]} != want:
        err(svc, f"ports are not {sorted(want)}")
    if not svc["spec"].get("publishNotReadyAddresses"):
        err(svc, "needs publishNotReadyAddresses: the head is ready only once the engines joined through it")


def validate(docs):
    by_kind = {k: {} for _, k in KINDS}
    for d in docs:
        if (d.get("apiVersion"), d.get("kind")) not in KINDS or not d.get("metadata", {}).get("name"):
            errors.append(f"unexpected object {d.get('apiVersion')} {d.get('kind')} {d.get('metadata')}")
            continue
        if d["metadata"]["name"] in by_kind[d["kind"]]:
            err(d, "defined twice")
        by_kind[d["kind"]][d["metadata"]["name"]] = d
    workloads = [w for k in WORKLOADS for w in by_kind[k].values()]
    for w in workloads:
        check_workload(w, by_kind)
    for svc in by_kind["Service"].values():
        check_service(svc, workloads)
    for sts in by_kind["StatefulSet"].values():
        svc = by_kind["Service"].get(sts["spec"].get("serviceName"))
        if not svc or svc["spec"].get("clusterIP") != "None" or not selects(svc, sts):
            err(sts, "serviceName is not a headless Service selecting its pods")
    for hpa in by_kind["HorizontalPodAutoscaler"].values():
        ref = hpa["spec"]["scaleTargetRef"]
        if ref["name"] not in by_kind.get(ref["kind"], {}):
            err(hpa, f"scales a missing {ref['kind']} {ref['name']}")
        names = [m.get("pods", m.get("object", m.get("external", {}))).get("metric", {}).get("name", "")
                 for m in hpa["spec"].get("metrics", [])]
        if not any("num_requests_waiting" in n for n in names):
            err(hpa, f"does not scale on vllm:num_requests_waiting (metrics {names})")
        if hpa["spec"].get("minReplicas", 1) > hpa["spec"]["maxReplicas"]:
            err(hpa, "minReplicas > maxReplicas")
    check_topology(by_kind)
    return sum(len(v) for v in by_kind.values())


def contained(a, b):
    """True when every field of a is in b with the same value (b may add defaults)."""
    if isinstance(a, dict):  # Go leaves out empty values (false, 0, "", {}): absent is equal
        return isinstance(b, dict) and all(contained(v, b[k]) if k in b else not v for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and len(b) >= len(a) and all(contained(x, y) for x, y in zip(a, b))
    return a == b or str(a) == str(b)


def unknown_fields(value, schema, path=""):
    """Field paths in value that schema (nested dicts; 1 = any value) does not list."""
    if schema == 1:
        return []
    if isinstance(schema, list):
        return [f for i, v in enumerate(value) for f in unknown_fields(v, schema[0], f"{path}[{i}]")]
    if not isinstance(value, dict):
        return [path]
    return [f for k, v in value.items()
            for f in (unknown_fields(v, schema[k], f"{path}.{k}") if k in schema else [f"{path}.{k}"])]


def kubectl(args, obj):
    env = dict(os.environ, KUBECONFIG=os.devnull)  # --local: nothing is sent anywhere
    return subprocess.run(["kubectl", *args, "--local", "-f", "-"], input=json.dumps(obj), env=env,
                          capture_output=True, text=True)


def typed(docs):
    for d in docs:
        if d["kind"] in WORKLOADS:
            run = kubectl(["set", "env", "-o", "json", "LLMSERVE_TYPED_CHECK=1"], d)
        elif d["kind"] == "Service":
            selector = [f"{k}={v}" for k, v in d["spec"]["selector"].items()]
            run = kubectl(["set", "selector", "-o", "json", ",".join(selector)], d)
        else:  # decoded into its Go type, then refused as not a pod: the decode is the check
            run = kubectl(["set", "image", "-o", "json", "none=none"], d)
            if "not a pod or does not have a pod template" not in run.stderr:
                err(d, f"kubectl cannot decode it: {run.stderr.strip()}")
            for field in unknown_fields(d, SCHEMAS.get(d["kind"], 1)):
                err(d, f"unknown field {field}")
            continue
        if run.returncode != 0:
            err(d, f"kubectl cannot decode it: {run.stderr.strip()}")
        elif not contained(d, json.loads(run.stdout)):
            err(d, "kubectl dropped or changed fields (misspelt or of the wrong type)")
    return len(docs)


def script(docs, name, replace, append):
    obj = next(d for d in docs if d["kind"] in WORKLOADS and d["metadata"]["name"] == name)
    c = containers(obj)[0]
    lines = [f"export {e['name']}={shlex.quote(e['value'])}" for e in c.get("env", []) if "value" in e]
    if c.get("command") == ["/bin/sh", "-c"]:
        lines.append(c["args"][0].strip())
    else:  # the image's entrypoint is the launcher
        lines.append("exec " + shlex.join([*(c.get("command") or ["llmserve"]), *c.get("args", [])]))
    text = "\n".join(lines) + append
    for old, new in replace:
        text = text.replace(old, new)
    return text


def chart(path):
    with open(os.path.join(path, "Chart.yaml")) as f:
        meta = yaml.safe_load(f)
    for field, pattern in (("apiVersion", r"v2"), ("name", r"[a-z0-9-]+"), ("version", r"\d+\.\d+\.\d+.*")):
        if not re.fullmatch(pattern, str(meta.get(field, ""))):
            errors.append(f"Chart.yaml: {field} is {meta.get(field)!r}")
    with open(os.path.join(path, "values.yaml")) as f:
        values = yaml.safe_load(f)
    templates = sorted(os.listdir(os.path.join(path, "templates")))
    for name in templates:
        with open(os.path.join(path, "templates", name)) as f:
            text = f.read()
        for ref in re.findall(r"\.Values((?:\.\w+)+)", text):
            if not has_path(values, ref.split(".")[1:]):
                errors.append(f"templates/{name}: .Values{ref} is not in values.yaml")
        actions = re.findall(r"\{\{-?\s*(\w+)", text)
        opened = sum(a in ("if", "with", "range", "define", "block") for a in actions)
        if opened != actions.count("end") or text.count("{{") != text.count("}}"):
            errors.append(f"templates/{name}: unbalanced {{{{ }}}} or blocks without end")
    return len(templates)


def has_path(values, keys):
    for key in keys:
        if not isinstance(values, dict) or key not in values:
            return False
        values = values[key]
    return True


def resources(path):
    with open(os.path.join(path, "kustomization.yaml")) as f:
        names = yaml.safe_load(f)["resources"]
    for name in names:
        with open(os.path.join(path, name)) as f:
            print("---\n" + f.read())


def canonical(docs):
    return sorted(json.dumps(d, sort_keys=True) for d in docs)


def main(argv):
    command = argv[1]
    if command == "validate":
        count = validate(load(argv[2:]))
    elif command == "typed":
        count = typed(load(argv[2:]))
    elif command == "script":
        replace, append, rest = [], "", argv[4:]
        while rest:
            if rest[0] == "--replace":
                replace.append(tuple(rest[1].split("=", 1)))
            elif rest[0] == "--append":
                append += " " + rest[1]
            rest = rest[2:]
        print(script(load([argv[2]]), argv[3], replace, append))
        return 0
    elif command == "chart":
        count = chart(argv[2])
    elif command == "resources":
        resources(argv[2])
        return 0
    elif command == "same":
        a, b = load([argv[2]]), load([argv[3]])
        if canonical(a) != canonical(b):
            in_b = canonical(b)
            only_a = {(d["kind"], d["metadata"]["name"]) for d in a if json.dumps(d, sort_keys=True) not in in_b}
            errors.append(f"{argv[2]} and {argv[3]} differ in {sorted(only_a) or 'the objects they hold'}")
        count = len(a)
    else:
        print(__doc__)
        return 2
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"{command}: {count} {'templates' if command == 'chart' else 'objects'} ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
