import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Procs  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "needs_realtime_close: needs the realtime POST /close and the closed slot state "
        "(docs/api.md#realtime-close); clickatron-rebuild nightly closes every day it archives")


@pytest.fixture
def procs(tmp_path):
    """Starts real binaries; at teardown stops them all and fails if one crashed or leaked."""
    p = Procs(tmp_path)
    yield p
    errors = p.stop_all()
    if errors:
        pytest.fail("process exit problems:\n" + "\n".join(errors))
