"""What the Python benchmarks and data generators of tests/bench/ share
(docs/benchmarks.md#method-and-machine), written once; the shell benchmarks share
tests/bench/bench_harness.sh.

A script in tests/bench/ imports it first (its own directory is on sys.path when it runs):

    import bench_harness  # noqa: F401  (puts ops/lib and tests/ on sys.path)
    from formats import stored, ymdh  # noqa: E402  (docs/formats.md: ops/lib/formats.py)

after which `formats`, `ports` and the tests' helpers (`harness`, `rollups`) import by name.

    ROOT                          the repository
    free_port()                   a free port on 127.0.0.1 (tests/ports.py)
    wait_until(pred, timeout, what)  polls pred() until true; OSError (a server not up yet)
                                  counts as false; TimeoutError(what) after timeout seconds
    cpu_seconds(pid)              utime + stime of a process so far
    wrk(port, script, conns, seconds, path="/")
                                  one `wrk -t1 --latency` run: {rps, p99, non2xx, requests,
                                  errors (lines "status " the script wrote to stderr)}
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for _path in (os.path.join(ROOT, "ops", "lib"), os.path.dirname(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from ports import free_port  # noqa: E402,F401  (the benchmarks import it from here)

TICK = os.sysconf("SC_CLK_TCK")


def wait_until(pred, timeout=30, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise TimeoutError(what)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def wrk(port, script, conns, seconds, path="/"):
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency", "-s", script,
                          f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True,
                         timeout=seconds + 60)
    text = out.stdout
    rps = float(text.split("Requests/sec:")[1].split()[0])
    p99 = text.split(" 99%")[1].split()[0] if " 99%" in text else "?"
    non2xx = int(text.split("Non-2xx or 3xx responses:")[1].split()[0]) if "Non-2xx" in text else 0
    total = int(text.split(" requests in ")[0].split()[-1])
    return {"rps": rps, "p99": p99, "non2xx": non2xx, "requests": total, "errors": out.stderr.count("status ")}
