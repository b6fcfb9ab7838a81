"""The guard: text that would steer an agent without a person seeing it.

Every bullet and paragraph brain serves ends up in an agent's context, so a vault line is also a way
to instruct an agent. Two levels:

- **Always** (`check`, `scan`, `defuse`): characters a person does not see or sees wrongly
  (zero-width and other invisible format characters, tag characters and runs of variation
  selectors that smuggle text, bidirectional controls that reorder what a screen shows, control
  characters), words mixing Latin, Greek and Cyrillic letters (`pаypal` with a Cyrillic `а`), and
  images (`![..](..)`, reference-style `![..][..]`, HTML `<img>` and other tags that load a URL
  when rendered). `brain lint` reports them, `propose`, `import` and `inbox approve` refuse them,
  and the index serves the line with them made harmless (`defuse`).
- **Strict** (`strict`, `strict_synonym`): opted into by `brain lint --strict` or `lint: strict` in
  the vault's policy file, for a bullet's handle, aliases and fact, and for synonyms.tsv rows:
  plain prose about the world, with no addresses, paths outside a project, markup, template or
  encoded runs, words addressing the reader, or phrasing that reads as an instruction to a model.

Everything here is cheap for clean text: an ASCII line costs a few regex searches.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from brain.text import controls

# --- always ----------------------------------------------------------------------------------

# Every format character (Unicode category Cf; tests/test_guard.py checks the list against
# unicodedata), line and paragraph separators, and the characters that render as nothing: the
# combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other variation
# selectors.
_SUSPECT = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001345f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+"
)
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_JOINERS = frozenset("\u200c\u200d")  # emoji sequences, Persian and Indic words
_EMOJI_STYLE = frozenset("\ufe0e\ufe0f")  # text or emoji presentation of the symbol before it
_BLACK_FLAG = "\U0001f3f4"  # a subdivision flag: the black flag, tag letters, a cancel tag
_CANCEL_TAG = "\U000e007f"
# A carriage return inside a line sends the terminal back to its start: what follows overwrites
# what a person reads. One at the end is a CRLF line ending.
_INNER_CR = re.compile(r"\r(?!$)")
# Any image syntax: inline `![alt](url)`, reference `![alt][id]`, collapsed and shortcut `![alt]`;
# and HTML tags that load a URL when rendered.
_MD_IMAGE = re.compile(r"!\[([^\]\n]{0,500})\](?:\([^)\n]{0,2000}\)|\[[^\]\n]{0,500}\])?")
_HTML_MEDIA = re.compile(
    r"<(?:img|image|svg|picture|source|video|audio|iframe|embed|object)\b[^>\n]{0,2000}>?", re.I
)
_LETTERS = re.compile(r"[^\W\d_]+")
_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")
# Units written with a Greek letter beside Latin ones (µs typed as Greek mu, kΩ): honest mixes.
_UNIT = re.compile(r"(?:[μµ](?:s|m|g|l|L|A|V|W|F|Hz|J|K|C|T|N|mol|Pa|Ω)|[kMGm]Ω)")


@dataclass(frozen=True)
class Flag:
    """One thing the guard found in a line: the rule and what, for a person to fix."""

    rule: str  # invisible | bidi | control | mixed-script | image; strict: url, email, ...
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


def _name(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip()


def _allowed(line: str, start: int, run: str) -> bool:
    """A run of format characters that honest text holds: a joiner inside an emoji sequence or a
    word of a script that needs it, one presentation selector after a symbol, a subdivision flag."""
    before = line[start - 1] if start else ""
    after = line[start + len(run) : start + len(run) + 1]
    if run in _JOINERS:
        return bool(before and after) and not (before.isascii() or after.isascii())
    if run in _EMOJI_STYLE or (len(run) == 1 and "\ufe00" <= run <= "\ufe0d"):
        return bool(before) and not before.isascii() and not before.isalpha()
    if len(run) == 1 and "\U000e0100" <= run <= "\U000e01ef":  # an ideographic variant
        return bool(before) and unicodedata.name(before, "").startswith("CJK")
    if before == _BLACK_FLAG and run.endswith(_CANCEL_TAG) and len(run) <= 8:
        return all("\U000e0020" <= c <= "\U000e007f" for c in run)
    return False


def _hidden(line: str) -> list[tuple[int, str, str]]:
    """(start, run, rule) for each run of invisible or bidi characters not in honest use."""
    found = []
    for m in _SUSPECT.finditer(line):
        run = m.group()
        if _allowed(line, m.start(), run):
            continue
        bidi = [c for c in run if c in _BIDI]
        found.append((m.start(), run, "bidi" if bidi else "invisible"))
    return found


def _describe(run: str, rule: str) -> str:
    if rule == "bidi":
        names = ", ".join(dict.fromkeys(_name(c) for c in run if c in _BIDI))
        return f"{names} reorders what a screen shows; remove it"
    tags = sum(1 for c in run if "\U000e0000" <= c <= "\U000e007f")
    selectors = sum(
        1 for c in run if "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef"
    )
    if tags > 1 or selectors > 1:
        what = "tag characters" if tags >= selectors else "variation selectors"
        return f"{len(run)} hidden {what} (text no one sees); remove them"
    names = ", ".join(dict.fromkeys(_name(c) for c in run))
    return f"{names}, which shows as nothing; remove it"


@functools.lru_cache(maxsize=4096)
def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    head = name.split(" ", 1)[0]
    return head if head in _SCRIPTS else ""


def _mixed(line: str) -> list[tuple[int, str, str]]:
    """(start, word, majority script) for each word mixing Latin, Greek and Cyrillic letters."""
    found = []
    for m in _LETTERS.finditer(line):
        word = m.group()
        if word.isascii():
            continue
        counts: dict[str, int] = {}
        for ch in word:
            script = _script(ch)
            if script:
                counts[script] = counts.get(script, 0) + 1
        if len(counts) < 2 or _UNIT.fullmatch(word):
            continue
        # the word's own script is the one most of its letters are in, Latin on a tie
        major = max(counts, key=lambda s: (counts[s], s == "LATIN"))
        found.append((m.start(), word, major))
    return found


def _lookalikes(word: str, major: str) -> str:
    """`word` with its letters from another script than `major` spelt out (`p\\u0430ypal`)."""
    return "".join(f"\\u{ord(c):04x}" if _script(c) not in ("", major) else c for c in word)


def check(line: str) -> list[Flag]:
    """What the always-on guard finds in one line (without its line break)."""
    flags: list[Flag] = []
    if not line.isascii():
        by_rule: dict[str, list[str]] = {}
        for _, run, rule in _hidden(line):
            by_rule.setdefault(rule, []).append(_describe(run, rule))
        flags += [Flag(rule, "; ".join(dict.fromkeys(d))) for rule, d in by_rule.items()]
        for _, word, major in _mixed(line):
            others = sorted({_script(c).title() for c in word} - {"", major.title()})
            flags.append(
                Flag(
                    "mixed-script",
                    f"the word {_lookalikes(word, major)} mixes {major.title()} and "
                    f"{' and '.join(others)} letters (a lookalike); retype it in one script",
                )
            )
    found = controls(line)
    if _INNER_CR.search(line):
        found.append("CR")
    if found:
        flags.append(Flag("control", f"control characters ({', '.join(found)}); remove them"))
    if "![" in line and _MD_IMAGE.search(line):
        flags.append(
            Flag("image", "a Markdown image, which loads its URL when shown; link to it instead")
        )
    if "<" in line and _HTML_MEDIA.search(line):
        flags.append(
            Flag("image", "an HTML tag that loads a URL when shown (<img> ...); remove it")
        )
    return flags


def reason(line: str) -> str:
    """Why a line may not be written to the vault ("" when it may), in one clause."""
    flags = check(line)
    return "; ".join(str(f) for f in flags)


def defuse(line: str) -> str:
    """`line` as the index serves it: hidden characters, lookalike letters and control characters
    spelt out as escapes, a run of smuggled characters replaced by a count, images by
    `[image removed: alt]`. A clean line comes back unchanged."""
    if not line.isascii():
        for start, run, rule in reversed(_hidden(line)):
            if rule == "invisible" and len(run) > 1:
                shown = f"[{len(run)} hidden characters]"
            else:
                shown = "".join(
                    f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in run
                )
            line = line[:start] + shown + line[start + len(run) :]
        for start, word, major in reversed(_mixed(line)):
            line = line[:start] + _lookalikes(word, major) + line[start + len(word) :]
    if controls(line) or _INNER_CR.search(line):
        from brain.text import visible

        line = _INNER_CR.sub(r"\\x0d", visible(line))
    if "![" in line:
        line = _MD_IMAGE.sub(
            lambda m: f"[image removed: {m[1]}]" if m[1].strip() else "[image removed]", line
        )
    if "<" in line:
        line = _HTML_MEDIA.sub("[image removed]", line)
    return line


def _plain(text: str) -> bool:
    """True when no line of `text` can hold anything the guard looks for (nearly every file)."""
    if not text.isascii() or "![" in text or "<" in text or controls(text):
        return False
    return "\r" not in text.replace("\r\n", "\n").rstrip("\r")


def defuse_text(text: str) -> str:
    """`defuse` for each line of a text (line breaks, and so line numbers, kept)."""
    return text if _plain(text) else "\n".join(defuse(line) for line in text.split("\n"))


def scan(text: str) -> list[tuple[int, Flag]]:
    """(1-based line, flag) for every line of a text."""
    if _plain(text):
        return []
    return [(n, f) for n, line in enumerate(text.split("\n"), start=1) for f in check(line)]
