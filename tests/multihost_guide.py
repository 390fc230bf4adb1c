"""The shell blocks of docs/operations.md, as the multi-host tests run them: a procedure is
read from the guide at test time, so the test runs what the guide says today, not a copy.

The guide's paths are those of a production host (docs/operations.md#layout-of-a-production-host);
`for_host` rewrites them to the test host's own tree (tests/multihost_cluster.py), and
`HOST:PORT` and the examples (a day, a generation id) to this cluster's. Lines that show output start with
`#` and are comments to the shell. `systemctl` lines are the test's to do (it starts and
stops the servers itself): `split_at_systemctl` cuts a block there.
"""
import os
import re

from harness import BIN, ROOT

GUIDE = os.path.join(ROOT, "docs", "operations.md")


def section(title):
    """The text of the `## title` section."""
    with open(GUIDE) as f:
        text = f.read()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def code_blocks(text):
    """Every fenced block of text, its indentation removed, in order."""
    blocks = []
    for m in re.finditer(r"^( *)```[a-z]*\n(.*?)^\1```", text, re.M | re.S):
        indent = len(m.group(1))
        blocks.append("".join(line[indent:] + "\n" for line in m.group(2).splitlines()))
    return blocks


def for_host(block, root, address=None, values=None, replace=None):
    """block with the production paths under the host's own tree `root`, HOST:PORT =
    address, each `NAME=example` line the guide asks the reader to fill in given
    values[NAME], and each literal of `replace` (an example the guide shows, such as a
    generation id) replaced."""
    for path in ("/var/lib/clickatron", "/var/backups/clickatron", "/var/log/clickatron", "/etc/clickatron"):
        block = block.replace(path, root + path)
    if address is not None:
        block = block.replace("HOST:PORT", address)
    for name, value in (values or {}).items():
        block, n = re.subn(rf"^{name}=[^$\s]+", f"{name}={value}", block, flags=re.M)
        assert n == 1, f"the guide's block sets {name} {n} times:\n{block}"
    for old, new in (replace or {}).items():
        assert old in block, f"the guide's block has no {old!r}:\n{block}"
        block = block.replace(old, new)
    return block


def run(cluster, host, script, **kw):
    """A block of the guide on a host of cluster (with that host's paths: for_host's
    keywords), by bash -e from the repository's top (ops/… paths), the build's binaries on
    PATH. Returns its stdout; asserts it exits 0."""
    script = for_host(script, cluster.net.root(host), **kw)
    env = dict(cluster.env, PATH=BIN + os.pathsep + os.environ["PATH"], CLICKATRON_BIN=BIN)
    r = cluster.net.run(host, ["bash", "-euo", "pipefail", "-c", f"cd {ROOT}\n" + script], env=env)
    assert r.returncode == 0, f"on {host}:\n{script}\nexited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def split_at_systemctl(block):
    """[(kind, text)]: ('shell', commands) and ('systemctl', 'stop clickatron-api'), in order."""
    parts, current = [], []
    for line in block.splitlines():
        m = re.match(r"^systemctl (\S+ \S+)\s*$", line)
        if m:
            if "".join(current).strip():
                parts.append(("shell", "\n".join(current) + "\n"))
            parts.append(("systemctl", m.group(1)))
            current = []
        else:
            current.append(line)
    if "".join(current).strip():
        parts.append(("shell", "\n".join(current) + "\n"))
    return parts
