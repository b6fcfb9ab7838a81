"""Characters spelt out as escapes a person can read and nothing acts on, and a name made one line
of them. brain.text's printing helpers (which mask credentials first, through brain.secrets) and
brain.secrets itself share them from here, which imports nothing of brain: no import cycle.
"""

from __future__ import annotations

# Characters a name must not print raw: controls (a newline forges a line of output, ESC starts a
# terminal sequence), bidi controls and other format characters (U+202E reverses what follows),
# line and paragraph separators, and the surrogates that stand for bytes that were not UTF-8.
# The zero-width joiners (emoji sequences, Persian and Indic words) are format characters too, and
# harmless.
_UNSAFE = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))
_JOINERS = frozenset("\u200c\u200d")


def escaped(ch: str) -> str:
    """One character as an escape a person can read and nothing acts on: `\\xff` for a byte that
    was not UTF-8 (os.fsdecode's surrogate for it), else as Python spells it (`\\n`, `\\x1b`,
    `\\u202e`, `\\U000e0041`)."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return ch.encode("unicode_escape").decode("ascii")


def one_line(text: str) -> str:
    """`text` as one line that may be printed: unsafe characters escaped (`\\n`, `\\u202e`, `\\xff`
    for a byte that was not UTF-8); nothing masked (brain.text.printable masks first). Names
    without any (nearly all) cost one `isprintable` call."""
    if text.isprintable():
        return text
    import unicodedata

    return "".join(
        ch
        if ch.isprintable() or ch in _JOINERS or unicodedata.category(ch) not in _UNSAFE
        else escaped(ch)
        for ch in text
    )
