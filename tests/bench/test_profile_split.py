#!/usr/bin/env python3
"""test_profile_split: tools/bench/profile_split.py on made-up `perf script`
output (a stand-in `perf` on PATH; no recording). Checks that each sample
lands in its category by its call chain (a kernel copy by its leaf, a
switch anywhere up the chain, a system call by its entry, user space by
DSO and memmove, OpenSSL by any frame in libcrypto or libssl), that CPU per RPC is the samples' periods over the RPCs
given, and that rows under 1% in every arm are summed into "other" rows.

  test_profile_split.py SRC
"""
import os
import stat
import subprocess
import sys
import tempfile

K = "[kernel.kallsyms]"
SAMPLES = {
    "a.data": [
        (250000, [("_copy_to_iter", K), ("udp_recvmsg", K), ("__x64_sys_recvmmsg", K)]),
        (250000, [("pvm_irq_enable", K), ("finish_task_switch.isra.0", K),
                  ("__schedule", K), ("do_sys_poll", K)]),
        (500000, [("udp_sendmsg", K), ("__sys_sendmmsg", K)]),
        (250000, [("__memmove_avx512_unaligned_erms", "/lib/libc.so.6")]),
        (250000, [("homa_engine_input", "/b/homa-bench")]),
        (250000, [("net_rx_action", K), ("handle_softirqs", K), ("__x64_sys_sendmmsg", K)]),
        (50000, [("futex_wake", K), ("__x64_sys_futex", K)]),
        (250000, [("strcmp", "/lib/libc.so.6"), ("OSSL_PARAM_locate", "/lib/libcrypto.so.3"),
                  ("homa_psp_seal", "/b/homa-bench")]),
        (250000, [("aesni_gcm_encrypt", "/lib/libcrypto.so.3")]),
    ] + [(250000, [("pthread_mutex_lock", "/lib/libc.so.6")])] * 44,
}


def fake_perf(d):
    """Write a `perf` that prints SAMPLES[file] as `perf script -F period,ip,sym,dso`."""
    text = {}
    for f, samples in SAMPLES.items():
        blocks = []
        for period, chain in samples:
            lines = [f"    {period} "] + [f"\tffffffff81000000 {s}+0x10 ({dso})" for s, dso in chain]
            blocks.append("\n".join(lines))
        text[f] = "\n\n".join(blocks) + "\n"
    path = os.path.join(d, "perf")
    with open(path, "w") as fh:
        fh.write("#!/usr/bin/env python3\nimport sys\nT = %r\n" % text)
        fh.write("print(T[sys.argv[sys.argv.index('-i') + 1]], end='')\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


def main(src):
    with tempfile.TemporaryDirectory() as d:
        fake_perf(d)
        env = dict(os.environ, PATH=d + os.pathsep + os.environ["PATH"])
        out = subprocess.run([sys.executable, os.path.join(os.path.abspath(src), "tools/bench/profile_split.py"),
                              "x:10:a.data"], capture_output=True, text=True, env=env, cwd=d)
    if out.returncode:
        sys.exit("profile_split failed: " + out.stderr)
    rows = {}
    for line in out.stdout.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = (float(cells[1]), float(cells[2]))
    # 13,300 us of samples over 10 RPCs; the futex sample (0.4%) is folded
    want = {
        "kernel: copies to/from user space": 25.0,
        "kernel: context switches (scheduler)": 25.0,
        "kernel: syscall sendmmsg": 50.0,
        "kernel: network softirq (loopback receive)": 25.0,
        "user: payload copies (libc memmove)": 25.0,
        "user: homa-bench and the library (ours)": 25.0,
        "user: libc (calls' wrappers, malloc, locks)": 1100.0,
        "kernel: other system calls": 5.0,
        "user: OpenSSL (libcrypto, libssl, the libc calls they make)": 50.0,
        "total": 1330.0,
    }
    for k, us in want.items():
        if k not in rows or abs(rows[k][1] - us) > 0.05:
            sys.exit(f"row {k!r}: want {us} us/RPC, got {rows.get(k)}\n{out.stdout}")
    if abs(rows["kernel: syscall sendmmsg"][0] - 3.76) > 0.05:
        sys.exit("sendmmsg share: want 3.76%\n" + out.stdout)
    if len(rows) != len(want):
        sys.exit("unexpected rows\n" + out.stdout)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
