"""The short variant of the week-long cluster run (tests/soak/soak.py, docs/operations.md#soak-test).

Three simulated days at 30 real seconds each, every kind of fault but the long outages shortened,
then the exact count. The seed is printed; CLICKATRON_SOAK_SEED=N repeats a run.
"""
import os
import subprocess
import sys

from harness import BIN

SOAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soak", "soak.py")


def test_short_soak_counts_every_acknowledged_event_exactly(tmp_path):
    args = [sys.executable, SOAK, "--bin", BIN, "--days", "3", "--day-seconds", "30", "--rate", "200",
            "--disk-seconds", "3", "--dir", str(tmp_path / "soak")]
    if os.environ.get("CLICKATRON_SOAK_SEED"):
        args += ["--seed", os.environ["CLICKATRON_SOAK_SEED"]]
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = r.stdout.decode("utf-8", "replace")
    print(out[-6000:])
    assert r.returncode == 0, out[-6000:]
