"""Credentials written in other shapes than `brain secrets`' fixtures (a URL's password, an
`Authorization: Bearer` header, a PEM block, and each in fullwidth or mathematical letters, which
NFKC folds to the plain token) and terminal sequences (OSC 52 to the clipboard, ESC [ 2J) planted
in the vault and in a transcript, read back through the commands that print them.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from conftest import brain
from test_masking import PEM, PEM_LINES, RNG
from test_output_filter import KEY, TRANSCRIPT, plant_transcripts, record

ALNUM = string.ascii_letters + string.digits
PASSWORD = "".join(RNG.choice(ALNUM) for _ in range(14)) + "7!"
BEARER = "".join(RNG.choice(ALNUM) for _ in range(32))
URL = f"postgres://deploy:{PASSWORD}@db.internal:5432/app"
HEADER = f"Authorization: Bearer {BEARER}"
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07"  # OSC 52: sets the clipboard
CLEAR = "\x1b[2J"


def fullwidth(text: str) -> str:
    """`text` in fullwidth forms (U+FF01..U+FF5E): NFKC folds each back to its ASCII one."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def mathematical(text: str) -> str:
    """`text`'s letters and digits in mathematical bold (U+1D400...): NFKC folds them back."""
    bases = (("a", 0x1D41A, 26), ("A", 0x1D400, 26), ("0", 0x1D7CE, 10))
    out = []
    for c in text:
        spelt = [chr(base + ord(c) - ord(a)) for a, base, n in bases if 0 <= ord(c) - ord(a) < n]
        out.append(spelt[0] if spelt else c)
    return "".join(out)


SECRETS = (KEY, PASSWORD, BEARER, *PEM_LINES)


def clear_in(text: str) -> list[str]:
    """What of a planted secret `text` shows, as written or NFKC-folded, and any raw ESC."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", text)
    found = [s[4:16] for s in SECRETS if s[4:16] in text or s[4:16] in folded]
    return found + (["ESC"] if "\x1b" in text else [])


WIDE = fullwidth(KEY)
BOLD = mathematical(KEY)
MASK = f"{KEY[:4]}…({len(KEY)})"


def test_the_output_step_masks_a_token_nfkc_folds_to_one() -> None:
    """Each shape, plain and in look-alike letters, is masked where it stands; ESC is escaped."""
    from brain.secrets import folded
    from brain.text import sanitized

    for text in (WIDE, BOLD, fullwidth(URL), fullwidth(HEADER), mathematical(HEADER), URL):
        shown = sanitized(f"okapi {text} {CLIPBOARD}{CLEAR}")
        assert clear_in(shown) == [], (text, shown)
        assert "\\x1b]52;c;" in shown
    assert sanitized(f"okapi {WIDE}") == f"okapi {MASK}"
    assert clear_in(sanitized(fullwidth(PEM))) == []
    # offsets kept: a fold to several characters (ligature, ellipsis) is left as written
    assert folded("ﬁle … ｇ𝐡") == "ﬁle … gh"
    assert sanitized("ﬁle naïve ｃａｆé") == "ﬁle naïve ｃａｆé"


def plant(vault: Path, tmp_path: Path) -> dict[str, str]:
    """The shapes in a bullet, a note and a file name of `vault`, and in a turn of a transcript;
    the environment that reads the transcripts."""
    memory = vault / "AI" / "MEMORY.md"
    bullets = [
        f"- **okapi db url** — okapi reads {URL} {CLIPBOARD} — me — 2026-11-30",
        f"- **okapi header** — okapi sends {HEADER} — me — 2026-11-30",
        f"- **okapi wide** — okapi wide {WIDE} and {fullwidth(URL)} — me — 2026-11-30",
        f"- **okapi bold** — okapi bold {BOLD} — me — 2026-11-30",
        f"- **okapi{CLEAR} odd** — okapi odd {CLEAR} — me — 2026-11-30",
    ]
    memory.write_text(memory.read_text("utf-8").rstrip("\n") + "\n\n" + "\n".join(bullets) + "\n")
    (vault / "notes" / "okapi-pem.md").write_text(
        f"# Okapi pem\n\nThe okapi key:\n\n{PEM}\n\nwide: {fullwidth(PEM)}\n\n{CLIPBOARD}\n"
    )
    (vault / "notes" / f"okapi{CLIPBOARD}.md").write_text("# Okapi clip\n\nokapi clip\n")
    env = plant_transcripts(tmp_path / "tx")
    said = f"okapi {WIDE} {BOLD} {URL} {HEADER} {CLIPBOARD} {CLEAR}"
    with (tmp_path / "tx" / TRANSCRIPT).open("a", encoding="utf-8") as fh:
        fh.write(
            record(
                "user",
                uuid=TURN,
                timestamp="2026-11-27T13:09:00.000Z",
                message={"role": "user", "content": said},
            )
        )
    return env


TURN = "c0ffee00-0000-4000-8000-000000000009"


def test_recall_masks_a_token_said_in_fullwidth_or_mathematical_letters(
    git_vault: Path, tmp_path: Path
) -> None:
    """recall printed `ｇｈｐ＿...` and `𝐠𝐡𝐩_...` as said: the rules read ASCII only."""
    env = plant(git_vault, tmp_path)
    for args in (("okapi",), ("--json", "okapi"), ("full", TURN), ("full", TURN, "--json")):
        run = brain("recall", *args, env=env)
        assert run.code == 0, (args, run)
        assert clear_in(run.out + run.err) == [], (args, run.out)
        assert run.out.count(MASK) >= 2, (args, run.out)  # both spellings, masked


def test_find_and_lint_show_a_fullwidth_token_masked_not_spelt(
    git_vault: Path, tmp_path: Path
) -> None:
    """The index served a fullwidth token spelt as escapes (`\\uff47\\uff48\\uff50＿...`, every
    character of it), and lint quoted each line of a fullwidth private key read as plain letters."""
    plant(git_vault, tmp_path)
    v = ("--vault", str(git_vault))
    for args in (("--raw", "--all", "okapi wide"), ("--json", "--all", "okapi bold")):
        run = brain("find", *v, *args)
        assert run.code == 0, run
        assert clear_in(run.out) == [], run.out
        assert "\\uff47\\uff48\\uff50" not in run.out  # the token's `ghp`, spelt
        assert MASK in run.out
    lint = brain("lint", *v)
    assert lint.code == 1, lint
    assert "lookalike" in lint.out  # it still names the look-alike letters
    assert clear_in(lint.out + lint.err) == [], lint.out


def test_no_command_that_prints_the_vault_or_a_transcript_leaks(
    git_vault: Path, tmp_path: Path
) -> None:
    """The sweep: each shape through the commands that print vault or transcript text."""
    env = plant(git_vault, tmp_path)
    v = ("--vault", str(git_vault))
    runs = [
        ("find", *v, "okapi"),
        ("find", *v, "--raw", "--all", "okapi"),
        ("find", *v, "--json", "--all", "okapi"),
        ("recall", "sessions"),
        ("lint", *v),
        ("doctor", *v),
        ("inbox", *v),
        ("log", *v),
        ("ledger", *v),
        ("pack", *v, "okapi"),
        ("prime", *v, "okapi wide header"),
        ("secrets", *v),
    ]
    for args in runs:
        run = brain(*args, env=env)
        assert run.code in (0, 1), (args, run)
        assert "Traceback" not in run.err, (args, run.err)
        assert clear_in(run.out + run.err) == [], (args, run.out + run.err)


def test_the_mcp_tools_and_the_desk_mask_the_folded_shapes(
    git_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server over stdio (find, recall) and the desk's search, of the vault and the
    transcripts: the same step, the same shapes."""
    import json

    import anyio
    from test_desk import PORT, signed_in
    from test_mcp import _session_calls

    from brain.desk.server import Desk

    env = plant(git_vault, tmp_path)
    # the server is given XDG_, BRAIN_ and GIT_ variables only: the turns are read into the store
    # here, as a person's recall did before
    assert brain("recall", "okapi", env=env).code == 0
    calls: list[tuple[str, dict[str, object]]] = [
        ("find", {"query": "okapi wide"}),
        ("find", {"query": "okapi bold"}),
        ("recall", {"full": TURN}),
    ]
    _, results = anyio.run(_session_calls, git_vault, calls)
    for (name, args), result in zip(calls, results, strict=True):
        assert not result.is_error, (name, result)
        text = result.content[0].text
        data = json.dumps(result.structured_content, ensure_ascii=False)
        assert clear_in(text) == [], (name, args, text)
        assert clear_in(data.replace("\\u001b", "")) == [], (name, args, data)  # JSON: data
        assert MASK in text, (name, args, text)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    client = signed_in(Desk(git_vault, PORT, wait=60.0))
    for q in ("?q=okapi+wide", "?q=okapi+bold", "?q=okapi&in=transcripts"):
        page = client.get("/search" + q)
        assert page.status_code == 200, page.text[:300]
        assert clear_in(page.text) == [], (q, page.text)
        assert MASK in page.text, q
