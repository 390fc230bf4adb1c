"""The Debian package (docs/operations.md#the-debian-package): `ops/package --output DIR`
makes a .deb that lintian passes without errors, holding the four servers and the tools in
/usr/bin, the systemd units (whose paths are the package's), example configs as conffiles,
the dashboard where the API finds it by default, man pages from --help, and the nightly.
Unpacked into a temporary root (dpkg-deb -x), its programs run there: --help, and servers
that answer /ping and /metrics.

The package is made from the build the tests run (CLICKATRON_BIN's tree, the sanitizer build
of ops/test) with --test-build, rather than compiling a release build here: what is checked
is the package — layout, units, conffiles, maintainer scripts, dependencies, lint — which is
the same for either build; ops/package refuses to make one of a sanitizer build otherwise.
"""
import os
import re
import subprocess

import pytest

from harness import BIN, free_port, get, wait_until, Proc
from metrics_harness import ROOT, promtool, write_generation

PACKAGE = os.path.join(ROOT, "ops", "package")
PROGRAMS = ["clickatron-api", "clickatron-realtime", "clickatron-archive", "clickatron-rebuild",
            "clickatron-key", "clickatron-oplog"]
SERVERS = ["clickatron-api", "clickatron-realtime", "clickatron-archive"]


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    r = subprocess.run([PACKAGE, "--output", str(out), "--build", os.path.dirname(BIN), "--test-build"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    assert r.returncode == 0, r.stdout
    # lintian ran inside ops/package (exit 1 on an error); what it printed is warnings only.
    assert not re.search(r"^E: ", r.stdout, re.M), r.stdout
    debs = [name for name in os.listdir(out) if name.endswith(".deb")]
    assert len(debs) == 1 and re.fullmatch(r"clickatron_0\.0~git\d{8}\.[0-9a-f]+(\+dirty)?\+asan_amd64\.deb", debs[0])
    deb = os.path.join(out, debs[0])
    root = tmp_path_factory.mktemp("root")
    subprocess.run(["dpkg-deb", "-x", deb, str(root)], check=True)
    control = tmp_path_factory.mktemp("control")
    subprocess.run(["dpkg-deb", "-e", deb, str(control)], check=True)
    return deb, str(root), str(control)


def field(control, name):
    text = open(os.path.join(control, "control")).read()
    return re.search(rf"^{name}: (.*)$", text, re.M).group(1)


def test_the_package_holds_the_programs_units_configs_and_dashboard(package):
    deb, root, control = package
    listing = subprocess.run(["dpkg-deb", "-c", deb], stdout=subprocess.PIPE, text=True, check=True).stdout
    files = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    for p in PROGRAMS:
        assert f"/usr/bin/{p}" in files
        assert f"/usr/share/man/man1/{p}.1.gz" in files
    for unit in ("clickatron-api.service", "clickatron-realtime@.service", "clickatron-archive@.service",
                 "clickatron-nightly.service", "clickatron-nightly.timer", "clickatron.target"):
        assert f"/lib/systemd/system/{unit}" in files
    assert "/usr/lib/clickatron/clickatron-nightly" in files
    assert "/usr/share/clickatron/ui/index.html" in files
    assert "/usr/share/doc/clickatron/examples/prometheus/clickatron.rules.yml" in files
    assert open(os.path.join(control, "conffiles")).read().split() == [
        "/etc/clickatron/archive-0.env", "/etc/clickatron/cluster.conf", "/etc/clickatron/realtime-0.env"]
    depends = field(control, "Depends")
    assert "adduser" in depends and "libjs-chart.js" in depends and "libtokyocabinet" in depends
    # Every path a unit runs or documents is in the package (or a config it ships).
    for unit in os.listdir(os.path.join(root, "lib/systemd/system")):
        text = open(os.path.join(root, "lib/systemd/system", unit)).read()
        assert "/usr/local" not in text, unit
        for path in re.findall(r"^(?:ExecStart=|Documentation=file://)(/\S+)", text, re.M):
            assert path in files, (unit, path)
        for path in re.findall(r"^EnvironmentFile=(/\S+)", text, re.M):
            assert path.replace("%i", "0") in files, (unit, path)
    # The maintainer scripts: the system user, the secret, no unit enabled or started.
    postinst = open(os.path.join(control, "postinst")).read()
    assert "adduser --system --group --quiet --home /var/lib/clickatron" in postinst
    assert "/etc/clickatron/cluster.secret" in postinst
    assert "deb-systemd-invoke" not in postinst  # nothing started
    # A unit is enabled again on an upgrade only when the operator had enabled it.
    enables = re.findall(r"^(.*)\n.*\n\s+deb-systemd-helper enable '([^']+)'", postinst, re.M)
    assert enables and all(f"was-enabled '{unit}'" in cond for cond, unit in enables), enables
    for script in ("postinst", "postrm", "preinst"):
        subprocess.run(["sh", "-n", os.path.join(control, script)], check=True)


def docs_section(program):
    doc = open(os.path.join(ROOT, "docs", "api.md")).read()
    start = doc.index(f"\n## {program}\n")
    end = doc.find("\n## ", start + 5)
    return doc[start:end]


def test_the_unpacked_programs_run_and_their_help_matches_the_docs(package):
    _, root, _ = package
    for p in PROGRAMS:
        r = subprocess.run([os.path.join(root, "usr/bin", p), "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        assert r.returncode == 0 and p in r.stdout + r.stderr, (p, r.stderr)
        if p in SERVERS:
            # Every flag --help prints is in docs/api.md's section of the program, and every
            # flag of its flags table is a flag the program takes.
            flags = set(re.findall(r"^\s+(?:-\w \[ )?--([a-z0-9-]+)", r.stdout, re.M)) - {"help"}
            section = docs_section(p)
            assert flags and not [f for f in flags if f"--{f}" not in section and f"`{f}`" not in section], p
            table = set(re.findall(r"^\| `--([a-z0-9-]+)", section, re.M))
            assert table and table <= flags, (p, table - flags)


def test_servers_started_from_the_unpacked_tree_answer(package, procs, tmp_path):
    _, root, _ = package
    bin_dir = os.path.join(root, "usr/bin")
    db = write_generation(str(tmp_path / "work"), "20261121-0123456789abcdef", "2026-11-20", "a,1\nb,2\n")
    archive = free_port()
    procs.started.append(Proc([os.path.join(bin_dir, "clickatron-archive"), "--db-file", db, "--port", str(archive)],
                              str(tmp_path / "archive.log")))
    wait_until(lambda: get(archive, "/ping", secret=False).text == "OK\n", what="archive from the package")
    metrics = get(archive, "/metrics", secret=False)
    assert metrics.status == 200
    check = promtool("check", "metrics", input=metrics.body)
    assert check.returncode == 0, (check.stdout + check.stderr).decode()
    assert 'clickatron_archive_generation_info{generation="20261121-0123456789abcdef"} 1' in metrics.text
    # The API finds the dashboard installed beside it (/usr/share/clickatron/ui) by default.
    api = free_port()
    config = tmp_path / "api.conf"
    config.write_text(f"port = {api}\nrealtime = 127.0.0.1:1\narchive = 127.0.0.1:{archive}\n"
                      f"oplog-dir = {tmp_path / 'oplog'}\nnode-id = api-1\n")
    procs.started.append(Proc([os.path.join(bin_dir, "clickatron-api"), "--config", str(config)],
                              str(tmp_path / "api.log")))
    wait_until(lambda: get(api, "/ping", secret=False).text == "OK\n", what="API from the package")
    page = get(api, "/", secret=False)
    assert page.status == 200 and page.text == open(os.path.join(root, "usr/share/clickatron/ui/index.html")).read()
    assert get(api, "/metrics", secret=False).status == 200
