"""`brain find`: the ranking rules on the fixture vault, and what an agent or a person sees."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, ROOT, Run, brain

from brain.commands.find import find
from brain.errors import UsageError
from brain.search import EXACT_RATIO, Hit

V = str(FIXTURE_VAULT)  # read-only use: the index lives in each test's own state dir
LIBGIT2_LINE = (
    "AI/LEARNINGS.md:7 libgit2 — libgit2 does not run client-side git hooks, so commits that brain"
    " makes through pygit2 skip pre-commit entirely; call the hook script yourself before"
    " committing — 2026-03-02"
)


def find_json(*args: str, vault: str | Path = V) -> dict[str, Any]:
    run = brain("find", "--vault", str(vault), "--json", *args)
    assert run.code in (0, 1), run
    assert "Traceback" not in run.err
    doc: dict[str, Any] = run.json()
    return doc


def ranked(query: str, vault: Path = FIXTURE_VAULT, limit: int = 10) -> list[Hit]:
    """The ranking logic in-process (the CLI tests below cover the process around it)."""
    return list(find(vault.resolve(), query, limit=limit).hits)


def locators(run: Run) -> list[str]:
    return [line.split(" ", 1)[0] for line in run.out.splitlines()]


def bullet(handle: str, fact: str, date: str, source: str = "ops") -> str:
    return f"- **{handle}** — {fact} — {source} — {date}"


FILLER_WORDS = (
    "widget sprocket gasket flange bracket hinge spindle bearing pulley lever rivet washer"
).split()


def filler(n: int = 30) -> list[str]:
    """Bullets that share no word with the test queries, so BM25 has a realistic corpus."""
    return [
        bullet(
            f"filler topic {i}",
            " ".join(FILLER_WORDS[(i + k) % len(FILLER_WORDS)] for k in range(8)) + f" case {i}",
            f"2025-01-{i % 28 + 1:02d}",
        )
        for i in range(n)
    ]


def make_vault(root: Path, memory: list[str]) -> Path:
    (root / "AI").mkdir(parents=True)
    (root / "AI" / "MEMORY.md").write_text(
        "# Memory\n\n## Things\n\n" + "\n".join(memory) + "\n", encoding="utf-8"
    )
    (root / "AI" / "LEARNINGS.md").write_text("", encoding="utf-8")
    (root / "AI" / "TUNINGS.md").write_text("", encoding="utf-8")
    return root


# --- ranking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "named", "body"),
    [
        ("vacuum", "pg vacuum", "long transactions"),
        ("retries", "http retries", "paynova timeouts"),
        ("manylinux", "manylinux wheels", "c++ abi"),
        ("credentials", "workload identity", "secrets in output"),
        ("startup", "lazy imports", "argparse over click"),
        ("values", "helm reuse values", "paynova status field"),
    ],
)
def test_handle_or_alias_match_beats_body_match(query: str, named: str, body: str) -> None:
    hits = ranked(query, limit=50)
    found = [h.handle for h in hits]
    assert named in found
    assert body in found, "the body match must be a real competitor"
    assert found.index(named) < found.index(body)
    by_handle = {h.handle: h for h in hits}
    assert "handle" in by_handle[named].match
    assert "handle" not in by_handle[body].match


def test_handle_match_beats_a_body_that_repeats_the_word(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        [
            *filler(),
            bullet(
                "zircon mines",
                "a long fact about gemstones, the pits and their workers",
                "2020-01-01",
            ),
            bullet("gem notes", "zircon zircon zircon zircon", "2026-06-01"),
        ],
    )
    assert [h.handle for h in ranked("zircon", vault)][:2] == ["zircon mines", "gem notes"]


TWIN_FACT = "restart the quasar gateway after rotating the certificates"


@pytest.mark.parametrize("older_first_in_file", [True, False])
def test_equal_scores_go_to_the_newer_bullet(tmp_path: Path, older_first_in_file: bool) -> None:
    old = bullet("gateway restart alpha", TWIN_FACT, "2024-01-10")
    new = bullet("gateway restart omega", TWIN_FACT, "2025-06-30")
    weaker_but_newest = bullet("quasar notes", "the team behind it", "2026-12-31")
    twins = [old, new] if older_first_in_file else [new, old]
    vault = make_vault(tmp_path / "v", [*filler()[:15], *twins, *filler()[15:], weaker_but_newest])
    top = ranked("quasar gateway", vault)[:3]
    assert [h.handle for h in top] == [
        "gateway restart omega",
        "gateway restart alpha",
        "quasar notes",  # recency breaks ties only; it never lifts a weaker match
    ]
    assert top[0].score == top[1].score
    assert top[1].score > top[2].score
    # the CLI prints them in the same order
    run = brain("find", "--vault", str(vault), "quasar gateway")
    assert [line.split(" — ")[0].split(" ", 1)[1] for line in run.out.splitlines()][:2] == [
        "gateway restart omega",
        "gateway restart alpha",
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("libgit", "AI/LEARNINGS.md:7"),  # the bullet whose handle is `libgit2`
        ("pgxp", "AI/LEARNINGS.md:36"),  # `pgxpool max conns`
        ("cibuild", "AI/LEARNINGS.md:77"),  # alias `cibuildwheel`
        ("terrafo", "AI/MEMORY.md:35"),  # `terraform state`, among the other terraform handles
    ],
)
def test_prefix_reaches_handles_and_aliases(query: str, expected: str) -> None:
    assert expected in [f"{h.path}:{h.line}" for h in ranked(query, limit=20)]


@pytest.mark.parametrize(
    ("prefix", "word", "where"),
    [  # prefixes cut inside the word's stem, so no stemmer can make them equal
        ("backbl", "backblaze", "notes/home-network.md"),
        ("synct", "syncthing", "projects/brain/handoffs/2025-11-03-kickoff.md"),
        ("tombst", "tombstone", "projects/brain/plans/index-format.md"),
        ("hatc", "hatchling", "AI/MEMORY.md"),  # only in a bullet's body: no prefixes there either
    ],
)
def test_prefix_does_not_match_prose_or_bodies(prefix: str, word: str, where: str) -> None:
    assert ranked(word)[0].path == where
    assert ranked(prefix) == []


def test_prefix_via_the_cli() -> None:
    assert "AI/LEARNINGS.md:7" in locators(brain("find", "--vault", V, "libgit"))
    assert brain("find", "--vault", V, "backbl").code == 1


def test_short_prefix_does_not_expand() -> None:
    assert ranked("manyl")
    assert ranked("ma ny") == []  # two letters never expand


@pytest.mark.parametrize(
    ("query", "handle"),
    [
        ("payments", "payments service"),  # an alias
        ("website", "website stack"),
        ("refunds", "refunds"),  # a handle
        ("staging", "staging environment"),
        ("prod", "production access"),
        ("terraform state", "terraform state"),
        ("kube context", "kubectl context"),
    ],
)
def test_exact_handle_or_alias_comes_first_with_only_near_ties(query: str, handle: str) -> None:
    exact = ranked(query)
    assert exact[0].handle == handle
    assert "exact" in exact[0].match
    assert len(exact) < 10  # fewer than the default limit
    assert all(h.score >= EXACT_RATIO * exact[0].score for h in exact)
    # the same words, not as a handle, return everything that matches them
    loose = ranked(f"the {query}")
    assert len(loose) > len(exact)
    assert all("exact" not in h.match for h in loose)


@pytest.mark.parametrize(
    ("query", "handle"),
    [
        ("k8s", "kubernetes version"),
        ("oom", "memory usage"),
        ("tz", "settlement timezone"),
        ("creds", "workload identity"),
        ("gc", "gomemlimit"),
    ],
)
def test_synonyms_widen_terms(query: str, handle: str) -> None:
    for path in FIXTURE_VAULT.rglob("*.md"):
        if path.name != "INBOX.md":
            words = path.read_text(encoding="utf-8").lower().replace("/", " ").split()
            assert query not in words, f"{query} must appear only through synonyms.tsv"
    assert handle in [h.handle for h in ranked(query)][:2]


@pytest.mark.parametrize(
    ("query", "handle"),
    [
        ("odeme", "paynova status field"),
        ("odeme durumu casing", "ödeme durumu casing"),
        ("ÖDEME", "paynova status field"),
        ("kurus", "amounts in minor units"),
        ("zurich offsite", "team offsite"),
        ("tomas", "tomás"),
        ("naive datetimes", "naïve datetimes"),
        ("cafe meetups", "café meetups"),
    ],
)
def test_diacritics_fold(query: str, handle: str) -> None:
    assert handle in [h.handle for h in ranked(query)][:2]


SPECIAL = [
    ("c++", "c++ abi"),
    ("tags:ops", "alert routing"),
    ("NOT EXISTS", "null in subquery"),
    ("it's whiteboard", "café meetups"),
    ('libgit2 "', "libgit2"),
    ('"libgit2', "libgit2"),
    ("libgit2 AND OR NEAR", "libgit2"),
    ("libgit2*", "libgit2"),
    ("{handle}: libgit2", "libgit2"),
    ("handle:libgit2", "libgit2"),
    ("^libgit2 -hooks +x", "libgit2"),
    ("libgit2 (pygit2)", "libgit2"),
]


@pytest.mark.parametrize(("query", "first"), SPECIAL)
def test_fts_syntax_is_plain_words(query: str, first: str) -> None:
    assert ranked(query)[0].handle == first


@pytest.mark.parametrize(("query", "first"), SPECIAL[:5])
def test_fts_syntax_is_plain_words_via_the_cli(query: str, first: str) -> None:
    run = brain("find", "--vault", V, "--json", query)
    assert run.code == 0, run
    assert run.err == ""
    assert run.json()["hits"][0]["handle"] == first


@pytest.mark.parametrize("query", ["NOT", "NEAR", "AND", "OR", "near/2", "x:", "-x", "abc*"])
def test_lone_operators_are_words(query: str) -> None:
    words = re.findall(r"\w+", query.casefold())  # never an FTS5 error, nor an operator
    for hit in ranked(query):
        assert any(word in f"{hit.raw} {hit.handle}".casefold() for word in words), hit.raw


EMPTY = ["", "   ", "!!!", '"', "—", "* * *", "---", "()", "'", ":", "-"]


@pytest.mark.parametrize("query", EMPTY)
def test_empty_or_punctuation_query_is_refused(query: str) -> None:
    with pytest.raises(UsageError, match="no words"):
        ranked(query)


@pytest.mark.parametrize("query", ['"', "", "---"])
def test_empty_or_punctuation_query_is_a_one_line_usage_error(query: str) -> None:
    run = brain("find", "--vault", V, "--", query)
    assert run.code == 2, run
    assert run.out == ""
    assert run.err.startswith("brain: ")
    assert run.err.count("\n") == 1
    assert "no words" in run.err
    assert "fts5" not in run.err.lower()


def test_missing_query_is_a_usage_error() -> None:
    run = brain("find", "--vault", V)
    assert run.code == 2
    assert run.err.count("\n") == 1
    assert "Traceback" not in run.err


# --- output -------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_limit(limit: int) -> None:
    run = brain("find", "--vault", V, "--budget", "99999", "--limit", str(limit), "the payments")
    assert run.code == 0
    assert len(run.out.splitlines()) == limit
    short = brain("find", "--vault", V, "--budget", "99999", "-n", str(limit), "the payments")
    assert short.out == run.out
    doc = find_json("--budget", "99999", "--limit", str(limit), "the payments")
    assert (doc["count"], doc["omitted"]) == (limit, 0)


def test_all_lists_ten_and_the_answer_says_what_it_left_out() -> None:
    ranked_list = brain("find", "--vault", V, "--budget", "99999", "--all", "the payments")
    assert len(ranked_list.out.splitlines()) == 10
    assert "brain:" not in ranked_list.out  # the ranked list is cut by nothing
    assert (
        ranked_list.out
        == brain("find", "--vault", V, "--budget", "99999", "-n", "10", "the payments").out
    )
    answer = brain("find", "--vault", V, "--budget", "99999", "the payments").out.splitlines()
    *lines, said = answer
    assert 1 <= len(lines) <= 3
    assert lines == ranked_list.out.splitlines()[: len(lines)]  # the answer is its head
    assert (
        said == f"brain: strong answer; {10 - len(lines)} weaker hits left out (--all lists them)"
    )


@pytest.mark.parametrize("bad", ["0", "-1"])
def test_limit_and_budget_must_be_positive(bad: str) -> None:
    for option in ("--limit", "--budget"):
        run = brain("find", "--vault", V, f"{option}={bad}", "libgit2")
        assert run.code == 2, run
        assert option in run.err
        assert run.err.count("\n") == 1


@pytest.mark.parametrize("budget", [40, 1500])
@pytest.mark.parametrize("mode", [[], ["--raw"], ["--terse"]])
def test_budget_caps_the_bytes_printed(budget: int, mode: list[str]) -> None:
    run = brain("find", "--vault", V, "--budget", str(budget), *mode, "the payments")
    assert run.code == 0
    assert len(run.out.encode("utf-8")) <= budget
    assert run.out.strip(), "at least one hit is always printed"
    assert run.out.endswith("\n")


def test_budget_keeps_whole_hits_while_they_fit() -> None:
    full = brain("find", "--vault", V, "--budget", "100000", "--all", "the payments")
    lines = full.out.splitlines()
    assert len(lines) == 10
    budget = len("\n".join(lines[:3]).encode()) + 1  # exactly three hits
    cut = brain("find", "--vault", V, "--budget", str(budget), "--all", "the payments")
    assert cut.out.splitlines() == lines[:3]


def test_the_answer_line_goes_before_a_hit_would() -> None:
    answer = brain("find", "--vault", V, "--budget", "100000", "the payments").out
    *lines, said = answer.splitlines()
    assert said.startswith("brain: strong answer")
    budget = len(answer.encode())  # every line fits: the whole answer
    assert brain("find", "--vault", V, "--budget", str(budget), "the payments").out == answer
    # one byte fewer: a hit goes, the line that says what was left out stays
    short = brain("find", "--vault", V, "--budget", str(budget - 1), "the payments").out
    assert short.splitlines() == [*lines[:-1], said]


@pytest.mark.parametrize("budget", [300, 1500, 100_000])
def test_json_respects_the_budget_via_omitted(budget: int) -> None:
    everything = find_json("--budget", "1000000", "--all", "the payments")
    assert everything["count"] == 10
    run = brain("find", "--vault", V, "--json", "--budget", str(budget), "--all", "the payments")
    doc = run.json()
    assert doc["count"] >= (0 if budget < 400 else 1)  # 300 bytes cannot hold one hit's fields
    assert doc["count"] == len(doc["hits"])
    assert doc["count"] + doc["omitted"] == everything["count"]
    whole = everything["hits"][: doc["count"]]
    assert doc["hits"][1:] == whole[1:]
    if whole:
        assert doc["hits"][0] == whole[0] or doc["hits"][0]["text"].endswith("…")  # cut to fit
    assert len(run.out.encode("utf-8")) <= budget
    if budget == 100_000:
        assert doc["omitted"] == 0


def test_json_budget_holds_for_every_budget() -> None:
    import json

    from brain.commands.find import find
    from brain.present import hits as render

    result = find(FIXTURE_VAULT, "the payments", limit=10)
    assert len(result.hits) == 10
    for budget in range(120, 6000, 7):
        text = render.find_json(result, budget)[0] + "\n"  # out() adds the newline
        doc = json.loads(text)
        assert len(text.encode("utf-8")) <= budget, (budget, doc["count"])
        assert doc["count"] + doc["omitted"] == len(result.hits)


@pytest.mark.parametrize("budget", [1, 4, 5, 12])
@pytest.mark.parametrize("mode", [[], ["--raw"], ["--terse"]])
def test_a_tiny_budget_prints_nothing_rather_than_too_much(budget: int, mode: list[str]) -> None:
    run = brain("find", "--vault", V, "--budget", str(budget), *mode, "the payments")
    assert run.code == 0, run  # the vault has answers; none fit
    assert len(run.out.encode("utf-8")) <= budget
    assert "Traceback" not in run.err


def test_a_json_budget_below_an_empty_answer_is_a_usage_error() -> None:
    run = brain("find", "--vault", V, "--json", "--budget", "1", "the payments")
    assert run.code == 2
    assert "--budget 1 cannot hold even an empty JSON answer" in run.json()["error"]


def test_raw_prints_the_line_as_written() -> None:
    run = brain("find", "--vault", V, "--raw", "pygit2")
    lines = (FIXTURE_VAULT / "AI" / "LEARNINGS.md").read_text(encoding="utf-8").split("\n")
    assert run.out == f"AI/LEARNINGS.md:7: {lines[6]}\n"


def test_raw_prose_prints_the_paragraph_as_written() -> None:
    run = brain("find", "--vault", V, "--raw", "--limit", "1", "backblaze")
    text = (FIXTURE_VAULT / "notes" / "home-network.md").read_text(encoding="utf-8")
    start = text.index("A Synology")
    paragraph = text[start : text.index("\n\n", start)] if "\n\n" in text[start:] else text[start:]
    line = text[:start].count("\n") + 1
    assert run.out == f"notes/home-network.md:{line}: {paragraph.rstrip()}\n"


@pytest.mark.parametrize(
    "env",
    [{}, {"CLAUDECODE": "1"}, {"BRAIN_CALLER": "x"}, {"GEMINI_CLI": "1"}, {"CODEX_SANDBOX": "1"}],
    ids=["script", "claude", "brain-caller", "gemini", "codex"],
)
def test_agents_and_scripts_get_one_terse_line_per_hit(env: dict[str, str]) -> None:
    run = brain("find", "--vault", V, "pygit2", env=env)
    assert run.code == 0
    assert run.out == LIBGIT2_LINE + "\n"
    assert run.err == ""


def test_terse_prose_hit_is_one_line_with_its_breadcrumb() -> None:
    # reaches a fenced code block with a `timeZone:` line
    run = brain("find", "--vault", V, "--all", "tz")
    doc = find_json("--all", "tz")
    assert len(run.out.splitlines()) == doc["count"]
    code = next(h for h in doc["hits"] if "\n" in h["text"])
    line = next(
        ln for ln in run.out.splitlines() if ln.startswith(f"{code['path']}:{code['line']} ")
    )
    assert line.startswith(f"{code['path']}:{code['line']} {code['section']} — ")
    assert line.endswith(f" — {code['date']}")


def test_no_hit_is_exit_1_and_silent_for_agents() -> None:
    run = brain("find", "--vault", V, "xylophonist")
    assert (run.code, run.out, run.err) == (1, "", "")
    doc = find_json("xylophonist")
    assert (doc["count"], doc["omitted"], doc["hits"]) == (0, 0, [])


def run_in_pty(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, str]:
    """Run the CLI with stdin, stdout and stderr on a pseudo-terminal, as a person would."""
    main, sub = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "brain", *args],
        stdin=sub,
        stdout=sub,
        stderr=sub,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        cwd=ROOT,
        close_fds=True,
    )
    os.close(sub)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                try:
                    data = os.read(main, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None and not select.select([main], [], [], 0)[0]:
                break  # it exited with nothing left to read (what it wrote as it exited is read)
    finally:
        os.close(main)
    code = proc.wait(timeout=10)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_person_at_a_terminal_gets_the_listing() -> None:
    code, out = run_in_pty("find", "--vault", V, "libgit2 hooks")
    assert code == 0, out
    assert "1 of 1 hit for libgit2 hooks" in out
    assert "strong answer; 9 weaker hits left out (--all lists them)" in out
    assert "AI/LEARNINGS.md:7" in out
    assert LIBGIT2_LINE not in out  # not the terse form


@pytest.mark.parametrize(
    ("args", "env"),
    [(["--terse"], {}), ([], {"CLAUDECODE": "1"}), ([], {"BRAIN_CALLER": "hook"})],
)
def test_terminal_with_terse_or_agent_gets_lines(args: list[str], env: dict[str, str]) -> None:
    code, out = run_in_pty("find", "--vault", V, *args, "pygit2", env=env)
    assert code == 0
    assert out == LIBGIT2_LINE + "\n"


def test_person_with_no_hit_is_told_so() -> None:
    code, out = run_in_pty("find", "--vault", V, "xylophonist")
    assert code == 1
    assert "nothing in the vault matches" in out
    assert "Traceback" not in out


def test_json_at_a_terminal_is_still_json() -> None:
    import json

    code, out = run_in_pty("find", "--vault", V, "--json", "pygit2")
    assert code == 0
    assert json.loads(out)["hits"][0]["handle"] == "libgit2"
