"""Every program's --config: a key that no Clickatron program reads is refused (exit 2,
naming the key, the file and the line) — a typo must not start a process on a default."""
import pytest

from harness import free_port, run


@pytest.mark.parametrize("program,args", [
    ("clickatron-api", []),
    ("clickatron-realtime", ["--data-dir", "{tmp}", "--port", "0"]),
    ("clickatron-archive", ["--db-file", "{tmp}/none.csv", "--port", "0"]),
    ("clickatron-rebuild", ["merge", "--work", "{tmp}/work"]),
])
def test_unknown_config_key_is_refused_naming_file_and_line(program, args, tmp_path):
    config = tmp_path / "cluster.conf"
    config.write_text(f"realtime = 127.0.0.1:{free_port()}\n# the API's name\nnodeid = api-2\n")
    r = run(program, ["--config", config] + [a.replace("{tmp}", str(tmp_path)) for a in args], timeout=30)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert f"--config {config}: line 3: unknown key 'nodeid' (no Clickatron program reads it)" in r.stderr.decode()
