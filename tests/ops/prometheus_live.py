#!/usr/bin/env python3
"""A real Prometheus server (Debian's prometheus) scrapes a running
homa-bench server and client (their --metrics-port) with the shipped alert
rules loaded; then every query of the Grafana dashboard and every alert
expression must return data, and every rule must evaluate without error.

An alert expression is checked with its threshold comparisons turned into
`bool` comparisons (`x > 0.01` becomes `x > bool 0.01`), which return a
sample for every series the left side has: so a healthy run still shows
that the metric names, labels and arithmetic of each alert match what
libhoma serves.
    prometheus_live.py HOMA_BENCH SOURCE_DIR
Exit status 0 when all pass; 1 with the failing queries listed."""
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request


def free_port(kind=socket.SOCK_STREAM):
    """A port nothing listens on now (TCP, or UDP with kind=SOCK_DGRAM)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_ports():
    """A port P free for UDP (Homa) with P+1 free for TCP (control)."""
    for _ in range(100):
        p = free_port(socket.SOCK_DGRAM)
        if p >= 65535:
            continue
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", p + 1))
            return p
        except OSError:
            continue
    raise RuntimeError("no free port pair")


def query(web, expr):
    """Instant query; returns the result list (raises on an API error)."""
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (web, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError("%s: %s" % (expr, body.get("error")))
    return body["data"]["result"]


def get_json(web, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (web, path), timeout=10) as r:
        return json.load(r)


def wait_for(what, fn, timeout):
    """Call fn() until it returns true or timeout seconds pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if fn():
                return
        except (OSError, RuntimeError, ValueError):
            pass
        time.sleep(0.5)
    raise RuntimeError("timed out waiting for " + what)


def as_bool(expr):
    """Turn every comparison with a number into its bool form."""
    return re.sub(r"(==|!=|>=|<=|>|<)\s*(-?[0-9][0-9.e+-]*)\b", r"\1 bool \2", expr)


def finite(result):
    return any(math.isfinite(float(s["value"][1])) for s in result)


def main():
    bench, src = sys.argv[1], sys.argv[2]
    rules = os.path.abspath(os.path.join(src, "ops/prometheus/homa-alerts.yml"))
    dash = json.load(open(os.path.join(src, "ops/grafana/homa-dashboard.json")))
    tmp = tempfile.mkdtemp(prefix="homa-prom-")
    procs = []
    failures = []
    try:
        port = bench_ports()
        m_srv, m_cli, web = free_port(), free_port(), free_port()
        log = open(os.path.join(tmp, "bench.log"), "w")
        procs.append(subprocess.Popen([bench, "server", "--port", str(port), "--bind", "127.0.0.1",
                                       "--metrics-port", str(m_srv), "--quiet"],
                                      stdout=log, stderr=log))
        wait_for("homa-bench server metrics",
                 lambda: urllib.request.urlopen("http://127.0.0.1:%d/metrics" % m_srv, timeout=2), 30)
        procs.append(subprocess.Popen([bench, "client", "--servers", "127.0.0.1:%d" % port,
                                       "--workload", "w3", "--rate", "500", "--duration", "120",
                                       "--warmup", "0", "--metrics-port", str(m_cli), "--quiet"],
                                      stdout=log, stderr=log))
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                    "rule_files: [%s]\n"
                    "scrape_configs:\n"
                    "  - job_name: homa\n"
                    "    static_configs: [{targets: ['127.0.0.1:%d', '127.0.0.1:%d']}]\n"
                    % (json.dumps(rules), m_srv, m_cli))
        plog = open(os.path.join(tmp, "prometheus.log"), "w")
        procs.append(subprocess.Popen(["prometheus", "--config.file", os.path.join(tmp, "prometheus.yml"),
                                       "--storage.tsdb.path", os.path.join(tmp, "data"),
                                       "--web.listen-address", "127.0.0.1:%d" % web],
                                      stdout=plog, stderr=plog))
        # Both targets up, and enough scrapes for rates over them.
        wait_for("both targets scraped 8 times",
                 lambda: len(query(web, 'count_over_time(up{job="homa"}[1m]) >= 8 and up == 1')) == 2, 90)
        wait_for("RPCs in the client's latency histogram",
                 lambda: finite(query(web, "rate(homa_client_rpc_latency_seconds_count[30s]) > 0")), 30)
        exprs = [(p["title"], t["expr"].replace("$__rate_interval", "30s"))
                 for p in dash["panels"] for t in p["targets"]]
        for title, e in exprs:
            res = query(web, e)
            if not res or not finite(res):
                failures.append("dashboard '%s': %s returned %s" % (title, e, res or "no data"))
        groups = get_json(web, "/api/v1/rules")["data"]["groups"]
        loaded = [r for g in groups for r in g["rules"]]
        if not loaded:
            failures.append("Prometheus loaded no rules from " + rules)
        wait_for("every rule evaluated",
                 lambda: all(r.get("lastEvaluation", "0001").startswith("0001") is False
                             for g in get_json(web, "/api/v1/rules")["data"]["groups"]
                             for r in g["rules"]), 30)
        for g in get_json(web, "/api/v1/rules")["data"]["groups"]:
            for r in g["rules"]:
                if r.get("health") != "ok":
                    failures.append("rule %s: health %s (%s)" % (r["name"], r.get("health"), r.get("lastError")))
                if not query(web, as_bool(r["query"])):
                    failures.append("alert %s: %s returned no data" % (r["name"], as_bool(r["query"])))
        print("prometheus_live: %d dashboard queries, %d alert rules checked against a live "
              "Prometheus scraping homa-bench" % (len(exprs), len(loaded)))
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if failures:
            for name in ("bench.log", "prometheus.log"):
                path = os.path.join(tmp, name)
                if os.path.exists(path):
                    sys.stderr.write("\n--- %s (tail)\n%s" % (name, "".join(open(path).readlines()[-15:])))
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
