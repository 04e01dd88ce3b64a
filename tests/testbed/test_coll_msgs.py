#!/usr/bin/env python3
"""test_coll_msgs: scripts/testbed.d/coll_msgs.py on made-up message logs
(no root, no testbed). Two devices, two measured steps after one warm-up:
the table names the last message of each step (the warm-up's left out),
its start and time in flight against the step's median, whether it went
to the busiest receiver and was sent again, and sums the RESEND,
retransmission, timeout and drop counters of devices and servers.

  test_coll_msgs.py SRC
"""
import json
import os
import subprocess
import sys
import tempfile

# step round dst req resp start_us done_us tries
H0 = """# step round dst req_bytes resp_bytes start_us done_us tries
0 0 1 100 100 0.0 99000.0 1
1 0 1 16384 8 10.0 2000.0 1
2 0 1 16384 8 10.0 3000.0 1
# device 0: homa counters: data_pkts_sent=5 resends_sent=1 retransmitted_bytes=1400 rpcs_timed_out=0 packets_dropped=2
"""
H1 = """# step round dst req_bytes resp_bytes start_us done_us tries
0 0 0 100 100 0.0 1000.0 1
1 0 0 16384 100 4000.0 9000.0 2
1 0 2 100 8 20.0 1000.0 1
2 0 0 16384 8 20.0 1500.0 1
# device 1: homa counters: resends_sent=2 retransmitted_bytes=0 rpcs_timed_out=1 packets_dropped=0
"""
SERVER = "homa-bench server: homa counters: resends_sent=4 retransmitted_bytes=2800 rpcs_timed_out=0 packets_dropped=63\n"


def main(argv):
    """Runs the check; returns the exit status."""
    script = os.path.join(argv[1], "scripts", "testbed.d", "coll_msgs.py")
    with tempfile.TemporaryDirectory() as d:
        ad = os.path.join(d, "alltoall-bg50", "homa")
        os.makedirs(ad)
        for name, text in (("msgs-h0.txt", H0), ("msgs-h1.txt", H1), ("server-h0.log", SERVER),
                           ("server-h1.log", SERVER)):
            with open(os.path.join(ad, name), "w") as f:
                f.write(text)
        with open(os.path.join(ad, "device.json"), "w") as f:
            json.dump({"warmup_steps": 1}, f)
        os.makedirs(os.path.join(d, "lookups-bg0", "homa"))  # no logs: no row
        out = subprocess.run([sys.executable, script, d, "homa", "tcp-bbr"], capture_output=True,
                             text=True, check=True).stdout
    rows = [l for l in out.splitlines() if l.startswith("| alltoall")]
    if len(rows) != 1 or "lookups" in out:
        print(f"FAIL: want one alltoall row, got:\n{out}")
        return 1
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    # step 1 ends with h1's retried message to 0 (started 4.0, done 9.0 ms: 5.0 in
    # flight; the step's flights 1.99, 5.0, 0.98 -> median 1.99), to the busiest
    # receiver (16484 B); step 2 with h0's to 1 (done 3.0, flight 2.99; flights 2.99,
    # 1.48 -> median 2.235), 0 and 1 tie at 16392 B: the first seen, 1, counts.
    # Nearest-rank P50 of two values is the smaller.
    want = ["alltoall-bg50", "homa", "2", "3.0 / 9.0", "0.0 / 4.0", "3.0 / 5.0", "2.1",
            "2 of 2", "1", str(1 + 2 + 4 + 4), str(1400 + 2 * 2800), "1", str(2 + 2 * 63)]
    if cells != want:
        print(f"FAIL: row is {cells}, want {want}")
        return 1
    print("coll_msgs: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
