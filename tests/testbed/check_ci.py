#!/usr/bin/env python3
"""check_ci: the assertions of the testbed CI test on one run.json.

  check_ci.py RUN_JSON [HOMA_ARM]

Fails (exit 1, with the reason) unless both arms completed RPCs, the switch
queues of the Homa arm (HOMA_ARM, "homa" by default; "homa-xdp" for Homa
over the AF_XDP driver) carried packets in more than one priority class
(its packets went through the switch's HTB classes by their DSCP bits),
and Homa's short-message P99 slowdown is lower than TCP's.
"""
import json
import sys


def check(run, homa_arm="homa"):
    """Returns a list of failure messages for the run (empty when it passes)."""
    arms = run["arms"]
    homa = arms.get(homa_arm, {})
    tcp = next((v for k, v in arms.items() if k.startswith("tcp")), {})
    bad = []
    for name, arm in ((homa_arm, homa), ("tcp", tcp)):
        if not arm.get("rpcs"):
            bad.append(f"{name} completed no RPCs ({arm.get('error', 'no error given')})")
    used = (homa.get("queues") or {}).get("priorities_used", [])
    if len(used) < 2:
        bad.append(f"Homa used {len(used)} switch priority classes ({used}); want more than one")
    h, t = homa.get("short_p99_slowdown"), tcp.get("short_p99_slowdown")
    if h is None or t is None:
        bad.append("short-message P99 slowdown missing")
    elif not h < t:
        bad.append(f"Homa short P99 slowdown {h:.2f} is not below TCP's {t:.2f}")
    return bad


def main(argv):
    """Command-line entry; returns the exit status."""
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        run = json.load(f)
    for name, arm in run["arms"].items():
        q = arm.get("queues") or {}
        print(f"{name}: short P99 slowdown {arm.get('short_p99_slowdown')}, "
              f"rpcs {arm.get('rpcs')}, priorities used {q.get('priorities_used')}")
    bad = check(run, argv[2] if len(argv) == 3 else "homa")
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
