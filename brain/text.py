"""Text that comes from outside brain: bytes that are not UTF-8, and control characters.

Python decodes argv (and file names) with `surrogateescape`: a byte that is not UTF-8 becomes a
lone surrogate (0xff is U+DCFF), and JSON may spell one out (`\\ud800`, as Node writes when it cuts
a string in the middle of an emoji). Neither can be encoded again as UTF-8, so SQLite, a file or
stdout would fail on it. Control characters (NUL, ESC and its terminal sequences) are valid UTF-8
but must not reach a Markdown file or a terminal. Everything here is cheap for clean text.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 controls but tab, newline and carriage return (whitespace Markdown and terminals expect),
# DEL, and C1 controls (some terminals act on them as on ESC sequences).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# An ESC sequence as a whole (CSI `ESC [ ... m`, OSC `ESC ] ... BEL`, or ESC and one character),
# so that stripping it leaves no `[31m` behind.
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -~])")
_NAMES = {0: "NUL", 0x1B: "ESC", 0x7F: "DEL"}


def has_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def repair(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, as a UTF-8 decoder would have."""
    return _SURROGATE.sub("\ufffd", text) if has_surrogates(text) else text


def undecodable(text: str) -> str:
    """The bytes `text` could not be decoded from, for a message: `byte 0xff`, `bytes 0xc3,
    0x28`; a surrogate that does not stand for a byte is named as a code point."""
    found = []
    for ch in dict.fromkeys(_SURROGATE.findall(text)):
        code = ord(ch)
        found.append(f"0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}")
    return ("byte " if len(found) == 1 else "bytes ") + ", ".join(found[:5])


def controls(text: str) -> list[str]:
    """The distinct control characters in `text`, by name (`ESC`, `NUL`, `U+0007`)."""
    names = (_NAMES.get(ord(c), f"U+{ord(c):04X}") for c in _CONTROL.findall(text))
    return list(dict.fromkeys(names))


def strip_controls(text: str) -> tuple[str, int]:
    """`text` without ESC sequences and control characters, and how many were removed."""
    if _CONTROL.search(text) is None:
        return text, 0
    text, n = _ESCAPE.subn("", text)
    text, m = _CONTROL.subn("", text)
    return text, n + m


def visible(text: str) -> str:
    """`text` safe to print: control characters and undecodable bytes shown as escapes."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)
    return _SURROGATE.sub(
        lambda m: (
            f"\\x{ord(m[0]) - 0xDC00:02x}"
            if 0xDC80 <= ord(m[0]) <= 0xDCFF
            else f"\\u{ord(m[0]):04x}"
        ),
        text,
    )
