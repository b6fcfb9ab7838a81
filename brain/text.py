"""Text that comes from outside brain: bytes that are not UTF-8, and control characters.

Python decodes argv (and file names) with `surrogateescape`: a byte that is not UTF-8 becomes a
lone surrogate (0xff is U+DCFF), and JSON may spell one out (`\\ud800`, as Node writes when it cuts
a string in the middle of an emoji). Neither can be encoded again as UTF-8, so SQLite, a file or
stdout would fail on it. Control characters (NUL, ESC and its terminal sequences) are valid UTF-8
but must not reach a Markdown file or a terminal. Everything here is cheap for clean text.

Untrusted text is printed escaped, one character at a time by `escaped` (brain.escapes; the
guard's `defuse` spells what it flags the same way), through one of a pair that differ in what
they keep:
`printable` for one line (a file name, a path): every control, format and line-breaking character
escaped, so a name cannot forge a line of output or reorder what a terminal shows; `visible` for a
message, a log line or a whole answer that may run over lines: tab and line breaks kept, control
and bidi characters and undecodable bytes escaped (the other format characters are the guard's to
judge). `sanitized` is the output step every answer passes (brain.present writes only through it):
credentials masked, then `visible`.
"""

from __future__ import annotations

import re
from typing import Any

from brain.escapes import escaped, one_line

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # `\ud800` to `\udfff` in JSON text
# C0 controls but tab, newline and carriage return (whitespace Markdown and terminals expect),
# DEL, and C1 controls (some terminals act on them as on ESC sequences).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# An ESC sequence as a whole (CSI `ESC [ ... m`, OSC `ESC ] ... BEL`, or ESC and one character),
# so that stripping it leaves no `[31m` behind.
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -~])")
_NAMES = {0: "NUL", 0x1B: "ESC", 0x7F: "DEL"}
# The same, kept by re.split: text between terminal sequences is masked piece by piece, as a
# sequence ends in a letter (`ESC[31m`) that the rules would read as the start of a key after it.
_SEQUENCES = re.compile(f"({_ESCAPE.pattern})")


def has_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def repair(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, as a UTF-8 decoder would have."""
    return _SURROGATE.sub("\ufffd", text) if has_surrogates(text) else text


def json_loads(data: bytes) -> Any:
    """JSON from outside (a transcript's line, a JSON string inside one) as Python; ValueError
    for what is not JSON, or is nested too deeply for the parser. A lone surrogate a string
    spells out (`\\ud800`: Node cuts a string in the middle of an emoji) comes back as U+FFFD,
    so that no text reaching SQLite holds one. The bytes are decoded here, each one that is not
    UTF-8 replaced: json.loads decodes bytes with "surrogatepass", which reads the UTF-8 bytes of
    a lone surrogate (ED A0 80) as U+D800, and SQLite refused it (UnicodeEncodeError at the
    insert: recall exited 3 on every read of the transcripts)."""
    import json

    try:
        doc = json.loads(data.decode("utf-8-sig", "replace"))
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if _SURROGATE_ESCAPE.search(data):  # rare: only then is every string looked at
        doc = _repaired(doc)
    return doc


def _repaired(doc: Any) -> Any:
    """`doc` with every string (and key) repaired; a loop, not recursion, for deep documents."""
    root = [doc]
    todo: list[tuple[Any, Any]] = [(root, 0)]
    while todo:
        parent, key = todo.pop()
        value = parent[key]
        if isinstance(value, str):
            parent[key] = repair(value)
        elif isinstance(value, list):
            todo.extend((value, i) for i in range(len(value)))
        elif isinstance(value, dict):
            items = [(repair(k), v) for k, v in value.items()]
            value.clear()
            value.update(items)
            todo.extend((value, k) for k in value)
    return root[0]


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


def _escape_match(m: re.Match[str]) -> str:
    return "".join(escaped(c) for c in m[0])


# What `visible` escapes: the controls of _CONTROL, a carriage return that does not end a line
# (it sends the cursor back to the line's start: what follows overwrites what a person read), the
# format characters (Unicode's Cf: bidi controls reorder what a screen shows; zero-width spaces,
# word joiners, a BOM inside text and the tag characters are invisible, and an agent reads tags as
# letters a person never sees), the line and paragraph separators, and the surrogates that stand
# for bytes that were not UTF-8: what brain.escapes.one_line escapes, lines kept. The zero-width
# joiners stay (emoji sequences, Persian and Indic words). The ranges are Unicode 15.1's Cf;
# tests/test_masking.py holds them to this Python's unicodedata.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_UNSHOWN = re.compile(
    f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029{_FORMAT}\ud800-\udfff]|\r(?!\n|\\Z)"
)


def visible(text: str) -> str:
    """`text` safe to print, lines kept (tab, line breaks, CRLF): control and bidi characters and
    undecodable bytes escaped, so that no field can send a terminal an escape sequence, overwrite
    a line or reorder one."""
    return _UNSHOWN.sub(_escape_match, text)


def printable(text: str) -> str:
    """`text` as one line that may be printed: any credential masked, then unsafe characters
    escaped (`\\n`, `\\u202e`, `\\xff` for a byte that was not UTF-8). Masking goes first: an
    escape just before a credential (`\\tghp_...`) would hide it from the rules of the output step.
    Names without any (nearly all) cost one `isprintable` call and the hint check."""
    return one_line(mask_secrets(text))


# Words without which no rule of brain.secrets runs: a rule runs only when one of its keywords
# is in the lowercased text, and every keyword holds one of these (tests/test_masking.py checks).
# Text that holds none has nothing to mask, so echoing it never pays for loading the rules (~30 ms
# of regular expressions) on `brain find`'s path.
CREDENTIAL_HINTS = (
    "://",
    *("abia", "acca", "aiza", "akia", "asia", "eyj", "q~", "xox", "bearer", "token", "secret"),
    *("password", "passwd", "passphrase", "pwd", "private key", "accountkey", "service_account"),
    *(f"{w}{sep}key" for w in ("api", "access", "auth") for sep in ("", " ", "_", "-", ".")),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "glptt-", "glrt-", "gldt-"),
    *("hf_", "npm_", "sk-", "sk_live_", "rk_live_", "pypi-ageichlwas5vcmc", "hooks.slack.com"),
)


def has_hint(text: str) -> bool:
    """Whether `text` holds one of CREDENTIAL_HINTS: without one, it has nothing to mask."""
    lowered = text.lower()
    if not lowered.isascii():  # a hint spelt in fullwidth or mathematical letters (`ｇｈｐ＿`)
        import unicodedata

        lowered = unicodedata.normalize("NFKC", lowered).lower()
    return any(hint in lowered for hint in CREDENTIAL_HINTS)


def mask_secrets(text: str) -> str:
    """`text` with every credential in it masked as `brain secrets` shows it (`ghp_…(40)`), for
    echoing what a person or an agent typed (a query, a prompt). Text with none of
    CREDENTIAL_HINTS in it is returned as it is, without importing brain.secrets."""
    if not has_hint(text):
        return text
    from brain.secrets import redact

    if "\x1b" in text:
        pieces = _SEQUENCES.split(text)
        return "".join(p if i % 2 else redact(p) for i, p in enumerate(pieces))
    return redact(text)


def cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, an ellipsis marking the cut. Text to be cut is masked
    first (`mask_secrets`): half a credential is no longer one the output step's rules know."""
    if len(text) <= limit:
        return text
    text = mask_secrets(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def say(line: str) -> None:
    """`brain: LINE` on stderr, through the output step (for the modules below the presenters:
    a file's name, a git message, a reason, masked and escaped)."""
    import sys

    sys.stderr.write(f"brain: {sanitized(line)}\n")


def sanitized(text: str) -> str:
    """`text` as brain lets it out (stdout, stderr, an MCP tool's text, a desk page): every
    credential in it masked (`mask_secrets`, so text without a hint costs no import), then every
    control and bidi character escaped (`visible`), lines kept. Masking goes first: an escape
    must not split a credential out of the rules' sight."""
    return visible(mask_secrets(text))


def noun(n: int, word: str, many: str = "") -> str:
    """`word` for a count of `n`: as given for one, else `many` (default: `word` + "s"). Also
    for what refers back to a count: `noun(n, "it", "them")`."""
    return word if n == 1 else many or word + "s"


def plural(n: int, word: str, many: str = "") -> str:
    """`1 file`, `2 files`: every count brain prints agrees with its noun (the one helper: the
    presenters, the core and the desk's pages all count through it)."""
    return f"{n} {noun(n, word, many)}"


def listed(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`: a list as a sentence names it."""
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)
