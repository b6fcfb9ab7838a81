"""No output prints a credential: what `brain secrets` finds is masked the way it masks it.

The vault's units are masked when they are indexed (`vault.parse`), so everything read from the
index (find in every format, pack, export, locate, the MCP tools) shows the mask; recall masks what
it shows of the transcripts. Credentials are built at run time from a seeded RNG: no token literal
lives in this file.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import string
from pathlib import Path

import pytest
from conftest import ROOT, brain, git

RNG = random.Random(4_120_412)  # noqa: S311 - reproducible fake credentials, not crypto
UPPER = string.ascii_uppercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"


def _pick(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


AWS = "AKIA" + _pick(UPPER, 16)
SLACK = (
    "xoxb-" + _pick(string.digits, 11) + "-" + _pick(string.digits, 12) + "-" + _pick(B64[:62], 24)
)
PEM_LINES = [_pick(B64, 64) for _ in range(6)] + [_pick(B64, 20) + "=="]
PASSWORD = _pick(string.ascii_letters, 6) + _pick(string.digits, 3) + "!" + _pick(B64[:62], 6)
PEM = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *PEM_LINES, "-----END RSA PRIVATE KEY-----"])
BULLET = (
    "- **okapi deploy key** (aliases: okapi ci) — "
    f"the okapi runner deploys with {AWS} — me — 2026-11-30"
)
NOTE = f"""# Okapi keys

The okapi server key, pasted for the migration:

{PEM}

The okapi alert bot posts with {SLACK} to the ops channel.

The okapi staging password is {PASSWORD} until the vault move.
"""


def assert_masked(text: str, where: str = "") -> None:
    """Not one run of 12 characters of any credential is in `text` (a mask shows at most 4)."""
    for secret in (AWS, SLACK, PASSWORD, *PEM_LINES):
        for i in range(len(secret) - 11):
            assert secret[i : i + 12] not in text, (where, secret, text)


def test_redact_masks_as_secrets_does_and_keeps_the_lines() -> None:
    from brain.secrets import redact, scan_text

    text = f"{BULLET}\n{NOTE}"
    masked = redact(text)
    assert masked.count("\n") == text.count("\n")
    assert_masked(masked)
    assert f"{AWS[:4]}…({len(AWS)})" in masked
    assert "-----BEGIN RSA PRIVATE KEY----- " in masked  # the header says what was there
    assert scan_text(masked, "x") == []
    assert redact("a plain line, nothing secret") == "a plain line, nothing secret"


def test_redact_of_a_snippet_masks_a_secret_cut_in_two() -> None:
    from brain.secrets import redact

    cut = SLACK.split("-", 1)[1]  # the `xoxb-` that names it fell outside the snippet
    assert_masked(redact(f"…{cut} posts to ops", clipped=True))
    assert_masked(redact(f"the okapi key {PEM_LINES[0]} {PEM_LINES[1][:30]}…", clipped=True))
    commit = "0123456789abcdef0123456789abcdef01234567"  # hex is not key material
    assert commit in redact(f"…fixed in {commit} yesterday…", clipped=True)


@pytest.fixture
def leaky(git_vault: Path) -> Path:
    """A committed vault, then an uncommitted bullet and note holding credentials."""
    memory = git_vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text("utf-8").rstrip("\n") + f"\n\n{BULLET}\n", "utf-8")
    (git_vault / "notes" / "okapi-keys.md").write_text(NOTE, "utf-8")
    return git_vault


def outputs(vault: Path, tmp_path: Path) -> dict[str, str]:
    v = ["--vault", str(vault)]
    runs = {
        "find agent": brain("find", *v, "okapi", env={"CLAUDECODE": "1"}),
        "find terse": brain("find", *v, "--terse", "okapi deploy key"),
        "find raw": brain("find", *v, "--raw", "okapi"),
        "find json": brain("find", *v, "--json", "okapi"),
        "find key": brain("find", *v, "--raw", "okapi server key"),
        "find bot": brain("find", *v, "--json", "alert bot posts"),
        "find password": brain("find", *v, "--raw", "okapi staging password"),
        "pack": brain("pack", *v, "okapi"),
        "pack json": brain("pack", *v, "okapi", "--json", "--fresh"),
        "locate": brain("locate", *v, "okapi ci"),
        "locate json": brain("locate", *v, "--json", "okapi deploy key"),
        "propose": brain("propose", *v, "--force", "okapi deploy key — rotated monthly"),
        "inbox": brain("inbox", *v),
        "inbox json": brain("inbox", *v, "--json"),
    }
    repo = tmp_path / "okapi"
    repo.mkdir()
    git(repo, "init", "-q")
    runs["export"] = brain("export", *v, "claude", "cursor", cwd=repo)
    out = {name: run.out + run.err for name, run in runs.items()}
    for name in ("find agent", "find raw", "find key", "pack", "locate", "propose", "export"):
        assert runs[name].code == 0, (name, runs[name])
    out["exported"] = (repo / "CLAUDE.md").read_text("utf-8")
    out["exported cursor"] = (repo / ".cursor" / "rules" / "brain.mdc").read_text("utf-8")
    return out


def test_no_output_of_the_vault_prints_a_credential(leaky: Path, tmp_path: Path) -> None:
    shown = outputs(leaky, tmp_path)
    assert f"{AWS[:4]}…(20)" in shown["find agent"]  # found, and masked
    assert "okapi deploy key" in shown["exported"]
    assert "xoxb…(" in json.loads(shown["find bot"].splitlines()[0])["hits"][0]["text"]
    assert "updates AI/MEMORY.md:" in shown["propose"]
    for name, text in shown.items():
        assert_masked(text, name)


def test_the_person_listing_masks_too(leaky: Path) -> None:
    from test_find import run_in_pty

    code, out = run_in_pty("find", "--vault", str(leaky), "okapi")
    assert code == 0, out
    assert "1 of 1 hit for okapi" in out
    assert_masked(out)


# the schema before units were masked; before prose credentials were
@pytest.mark.parametrize(("version", "secret"), [(3, AWS), (5, f"password is {PASSWORD}")])
def test_an_index_built_before_masking_is_rebuilt(leaky: Path, version: int, secret: str) -> None:
    import sqlite3

    from brain import index
    from brain.config import index_path

    index.sync(leaky)
    conn = sqlite3.connect(index_path(leaky))
    sql = "UPDATE units SET text = ?, raw = ? WHERE handle = 'okapi deploy key'"
    conn.execute(sql, (secret, secret))
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    assert_masked(brain("find", "--vault", str(leaky), "--raw", "okapi deploy key").out)


def test_mcp_tools_mask(leaky: Path) -> None:
    import anyio
    from test_mcp import _session_calls

    calls = [
        ("find", {"query": "okapi"}),
        ("pack", {"project": "okapi"}),
        ("locate", {"handle": "okapi deploy key"}),
    ]
    _, results = anyio.run(_session_calls, leaky, calls)
    for result in results:
        assert not result.is_error, result
        assert_masked(result.content[0].text)
        assert_masked(json.dumps(result.structured_content, ensure_ascii=False))


def test_recall_masks_what_was_said(tmp_path: Path) -> None:
    src = ROOT / "testdata" / "transcripts" / "claude"
    shutil.copytree(src, tmp_path / "claude")
    session = tmp_path / "claude" / "projects" / "-home-dev-shop"
    session /= "5b0c1f7e-0000-4000-8000-000000000001.jsonl"
    first = json.loads(session.read_text("utf-8").splitlines()[1])
    said = [
        f"the okapi runner deploys with {AWS} from ci",
        f"okapi server key follows {PEM}",
        f"okapi alerts post with {SLACK} to ops",
    ]
    with session.open("a", encoding="utf-8") as fh:
        for i, text in enumerate(said):
            turn = {**first, "uuid": f"c9000000-0000-4000-8000-00000000000{i}"}
            turn["timestamp"] = f"2025-05-09T10:00:0{i}.000Z"
            turn["message"] = {"role": "user", "content": text}
            fh.write(json.dumps(turn) + "\n")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert brain("recall", "--enable", "claude", env=env).code == 0
    terse = brain("recall", "okapi", env=env)
    assert terse.code == 0, terse
    assert terse.out.count("\n") == 3
    doc = brain("recall", "okapi", "--json", env=env)
    shown = [terse.out, doc.out]
    for hit in doc.json()["hits"]:
        shown.append(brain("recall", "--full", hit["id"], env=env).out)
        shown.append(brain("recall", "--full", hit["id"], "--json", env=env).out)
    for text in shown:
        assert_masked(text)
    assert any("-----BEGIN RSA PRIVATE KEY-----" in text for text in shown)


GITHUB = "ghp" + "_" + _pick(string.ascii_letters + string.digits, 36)
TYPED = f"okapi token {GITHUB}"


def test_a_credential_typed_into_a_query_is_echoed_masked(leaky: Path, tmp_path: Path) -> None:
    """find (JSON, the person's note and listing), prime --json, recall and howto echo the
    query masked as `brain log` and doctor list it: a credential pasted into a question is not
    printed back."""
    from test_find import run_in_pty

    v = ["--vault", str(leaky)]
    doc = brain("find", *v, "--json", "--all", TYPED).json()
    assert doc["query"] == f"okapi token {GITHUB[:4]}…(40)"
    assert doc["count"] > 0
    said = "the password is Tr0ub4dor&3x"
    pasted = brain("find", *v, "--json", said)
    assert pasted.json()["query"] == "the password is Tr0…(12)"
    prime = brain("prime", *v, "--json", f"how is the okapi deployed with {GITHUB}")
    assert prime.json()["query"] == "okapi deployed ghp"  # the words, the token's masked first
    undecodable = brain("find", *v, "--json", os.fsdecode(b"okapi \xff ") + GITHUB)
    assert "read as 'okapi \ufffd ghp_…(40)'" in undecodable.err
    code, listing = run_in_pty("find", *v, "--all", TYPED)
    assert code == 0, listing
    assert "hits for okapi token ghp_…(40)" in listing
    code, note = run_in_pty("find", *v, f"zebu {GITHUB}")
    assert code == 1, note
    assert "nothing in the vault matches 'zebu ghp_…(40)'" in note
    (tmp_path / "claude").mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert brain("recall", "--enable", "claude", env=env).code == 0
    recall = brain("recall", "--json", TYPED, env=env)
    howto = brain("howto", "--json", TYPED, env=env)
    assert (recall.json()["query"], howto.json()["query"]) == (doc["query"], doc["query"])
    for text in (
        doc,
        pasted.out,
        prime.out,
        undecodable.out + undecodable.err,
        listing,
        note,
        recall.out,
        howto.out,
    ):
        assert GITHUB[4:16] not in str(text)
        assert GITHUB[4:16].lower() not in str(text)  # nor folded into a word
        assert "Tr0ub4dor" not in str(text)


def test_the_mcp_find_tool_masks_the_query(leaky: Path) -> None:
    import anyio
    from test_mcp import _session_calls

    _, (result,) = anyio.run(_session_calls, leaky, [("find", {"query": TYPED})])
    assert not result.is_error, result
    assert result.structured_content["query"] == f"okapi token {GITHUB[:4]}…(40)"
    assert GITHUB[4:16] not in result.content[0].text + json.dumps(result.structured_content)


def test_every_rule_keyword_holds_a_credential_hint() -> None:
    """mask_secrets loads the rules only for text holding a hint: a keyword that holds none would
    let its credential be echoed unmasked; a hint that no keyword holds loads them for nothing."""
    from brain.secrets import RULES
    from brain.text import CREDENTIAL_HINTS, mask_secrets

    keywords = {k for rule in RULES for k in rule.keywords}
    assert [k for k in keywords if not any(h in k for h in CREDENTIAL_HINTS)] == []
    assert [h for h in CREDENTIAL_HINTS if not any(h in k for k in keywords)] == []
    assert mask_secrets("why do hooks not run") == "why do hooks not run"
    assert mask_secrets(f"key {GITHUB}") == "key ghp_…(40)"


def test_the_output_step_escapes_every_format_character_one_line_does() -> None:
    """`visible` (what every multi-line output passes) and `one_line` (names, one-line fields)
    escape the same characters: every control, line or paragraph separator and format character
    (Unicode's Cf, by this Python's unicodedata) but the two zero-width joiners. `visible`
    let zero-width spaces, word joiners, a BOM and the tag characters through raw."""
    import sys
    import unicodedata

    from brain.escapes import one_line
    from brain.text import visible

    unsafe = ("Cc", "Cf", "Zl", "Zp")
    joiners = "\u200c\u200d"
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF or code in (0x09, 0x0A, 0x0D):
            continue  # surrogates stand for bytes; tab and line breaks are kept by visible
        ch = chr(code)
        if unicodedata.category(ch) in unsafe and ch not in joiners:
            assert visible(f"a{ch}b") != f"a{ch}b", f"U+{code:04X}"
            assert one_line(f"a{ch}b") == visible(f"a{ch}b"), f"U+{code:04X}"
    assert visible("a\u200db\u200cc") == "a\u200db\u200cc"
    assert visible("zero\u200bwidth") == "zero\\u200bwidth"
    assert visible("tag \U000e0041\U000e0042") == "tag \\U000e0041\\U000e0042"
