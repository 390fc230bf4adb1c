"""docs/wire.md and wire/ list the same protocol: every header name of wire/headers.h and every
refusal name of wire/refusals.h is a row of the page's tables and every row is one of them,
StatusCode (base/status.h) matches the page's status codes; no other production file spells
one of those names as a string, and api/ and rebuild/ include no server's headers. No
binaries: a reader's check of the text."""
import os
import re

from harness import ROOT

WIRE_MD = os.path.join(ROOT, "docs", "wire.md")
CONSTANT = re.compile(r'^inline constexpr char (k\w+)\[\] = "([^"]+)";', re.M)


def constants(name):
    with open(os.path.join(ROOT, "wire", name), encoding="utf-8") as f:
        return dict(CONSTANT.findall(f.read()))


def table_names(section):
    """The first backticked token of each row of the table under `## section`."""
    with open(WIRE_MD, encoding="utf-8") as f:
        text = f.read()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    names = []
    for line in body.splitlines():
        if line.startswith("| `"):
            names.append(re.match(r"\| `([^`]+)`", line).group(1))
    return names


def without_comments(text):
    """C++ text without its // comments (a // inside a string literal is kept)."""
    out = []
    for line in text.splitlines():
        at = line.find("//")
        while at >= 0 and line[:at].count('"') % 2 == 1:
            at = line.find("//", at + 2)
        out.append(line if at < 0 else line[:at])
    return "\n".join(out)


def production_sources():
    """Every .cc and .h of the product: not the tests, the fuzz targets or the build."""
    for top in sorted(os.listdir(ROOT)):
        if top in ("tests", "fuzz", "build", "wire") or top.startswith("."):
            continue
        folder = os.path.join(ROOT, top)
        if not os.path.isdir(folder):
            continue
        for dirpath, _, files in os.walk(folder):
            for name in files:
                if name.endswith((".cc", ".h")) and not name.endswith("_test.cc"):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, ROOT), path


def test_headers_table_is_wire_headers_h():
    names = table_names("Headers")
    assert len(names) == len(set(names)), names
    assert sorted(names) == sorted(constants("headers.h").values())


def test_refusals_table_is_wire_refusals_h():
    names = table_names("Refusals")
    assert len(names) == len(set(names)), names
    assert sorted(names) == sorted(constants("refusals.h").values())


def test_status_codes_table_is_status_code():
    with open(os.path.join(ROOT, "base", "status.h"), encoding="utf-8") as f:
        enum = re.search(r"enum class StatusCode[^{]*\{(.*?)\};", f.read(), re.S).group(1)
    codes = re.findall(r"^\s*(k\w+)", enum, re.M)
    assert codes and sorted(table_names("Status codes")) == sorted(codes)


def test_no_production_file_but_wire_spells_a_protocol_name():
    names = set(constants("headers.h").values()) | set(constants("refusals.h").values())
    spelt = []
    for rel, path in production_sources():
        with open(path, encoding="utf-8") as f:
            text = without_comments(f.read())
        for name in names:
            if f'"{name}"' in text:
                spelt.append(f"{rel}: {name}")
    assert spelt == []


def test_api_and_rebuild_include_no_server_header():
    found = []
    for top in ("api", "rebuild"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        if re.match(r'#include "(archive|realtime)/', line):
                            found.append(f"{top}/{name}:{n}: {line.strip()}")
    assert found == []
