import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Procs  # noqa: E402


@pytest.fixture
def procs(tmp_path):
    """Starts real binaries; at teardown stops them all and fails if one crashed or leaked."""
    p = Procs(tmp_path)
    yield p
    errors = p.stop_all()
    if errors:
        pytest.fail("process exit problems:\n" + "\n".join(errors))
