"""Every link into docs/ resolves: a `page.md#anchor` in the docs, the README and the code's
comments names a heading that page has (GitHub's anchor of the heading), a `(#anchor)` names
one of its own page, and a linked page exists. No binaries: a reader's check of the text."""
import os
import re
import subprocess

from harness import ROOT

DOCS = os.path.join(ROOT, "docs")
# A page reference with an anchor: `docs/formats.md#sharding`, `(formats.md#sharding)`,
# `benchmarks.md#archive`.
PAGE_ANCHOR = re.compile(r"(?<![\w/.-])(?:docs/)?([a-z0-9-]+\.md)#([A-Za-z0-9_-]+)")
LINK = re.compile(r"\]\(([^)\s]*)\)")
WRAPPED = re.compile(r'"?\n\s*(?://|#|\*|")?\s*([A-Za-z0-9_-]+)')


def anchor(heading):
    """GitHub's anchor of a heading's text: lower case, punctuation dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    found, fenced = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and (m := re.match(r"#{1,6} (.*)", line)):
                name = anchor(m.group(1))
                n = 0
                while (name if n == 0 else f"{name}-{n}") in found:
                    n += 1
                found.add(name if n == 0 else f"{name}-{n}")
    return found


def tracked_text_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files"], stdout=subprocess.PIPE, check=True).stdout
    for name in out.decode().splitlines():
        if name.endswith((".png", ".jpg", ".gz", ".zst", ".csv", ".tsv", ".seg")) or name.startswith("tests/golden/"):
            continue
        path = os.path.join(ROOT, name)
        if os.path.isfile(path):
            yield name, path


def test_every_docs_anchor_resolves():
    pages = {p: anchors(os.path.join(DOCS, p)) for p in os.listdir(DOCS) if p.endswith(".md")}
    broken, checked = [], 0
    for name, path in tracked_text_files():
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        for m in PAGE_ANCHOR.finditer(text):
            page, frag = m.groups()
            # An anchor wrapped at a hyphen: the rest opens the next line (of a comment, or a
            # C++ string literal continued).
            rest = WRAPPED.match(text, m.end()) if frag.endswith("-") else None
            frag += rest.group(1) if rest else ""
            if page not in pages:
                continue  # another repository's page, or a README of a subfolder
            checked += 1
            if frag not in pages[page]:
                broken.append(f"{name}: {page}#{frag}")
    assert checked > 100
    assert not broken, "links to headings that do not exist:\n" + "\n".join(broken)


def test_every_docs_link_resolves():
    broken = []
    for page in sorted(os.listdir(DOCS)) + ["../README.md"]:
        if not page.endswith(".md"):
            continue
        path = os.path.normpath(os.path.join(DOCS, page))
        own = anchors(path)
        with open(path, encoding="utf-8") as f:
            for target in LINK.findall(f.read()):
                if target.startswith(("http://", "https://", "mailto:")):
                    continue
                file_part, _, frag = target.partition("#")
                if not file_part:
                    if frag not in own:
                        broken.append(f"{page}: #{frag}")
                elif not os.path.exists(os.path.join(os.path.dirname(path), file_part)):
                    broken.append(f"{page}: {file_part}")
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)
