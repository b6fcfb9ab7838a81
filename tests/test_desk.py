"""`brain desk` without a browser: its actions make the file changes `brain inbox` makes, and its
guard refuses what does not come from the person's own browser (token, Host, origin, CSRF).

The desk is tested in a real browser in tests/test_desk_browser.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import ROOT, brain

from brain.commands import inbox as inboxmod
from brain.desk import actions, pages
from brain.desk.server import Desk, create_app, templates
from brain.errors import BrainError

PORT = 8765


def snapshot(vault: Path) -> dict[str, str]:
    """Every file of the vault's AI/ folder, by name."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((vault / "AI").iterdir())}


def key(vault: Path, number: int) -> str:
    return pages.inbox(vault)["items"][number - 1].key


# --- actions: the same file change as `brain inbox` --------------------------------------------


def test_approve_to_a_chosen_file_is_what_brain_inbox_approve_does(vault: Path, twin: Path) -> None:
    assert brain("inbox", "approve", "2", "--to", "LEARNINGS", "--vault", str(twin)).code == 0
    actions.approve(vault, key(vault, 2), "LEARNINGS")
    assert snapshot(vault) == snapshot(twin)
    assert "brain find json" in (vault / "AI/LEARNINGS.md").read_text(encoding="utf-8")


def test_drop_and_bulk_are_what_brain_inbox_does(vault: Path, twin: Path) -> None:
    keys = [key(vault, 1), key(vault, 3)]
    for args in (["drop", "1"], ["approve", "2"]):  # #3 is #2 once #1 is gone
        assert brain("inbox", *args, "--vault", str(twin)).code == 0
    actions.bulk(vault, keys[:1], "drop")
    actions.bulk(vault, keys[1:], "approve")
    assert snapshot(vault) == snapshot(twin)


def test_edit_then_approve_keeps_source_and_date_and_is_checked(vault: Path, twin: Path) -> None:
    k = key(vault, 3)
    before = snapshot(vault)
    with pytest.raises(BrainError, match="not saved"):
        actions.edit_then_approve(vault, k, "no handle here")
    assert snapshot(vault) == before  # a refused edit changes nothing
    actions.edit_then_approve(vault, k, "helm diff plugin — always run helm diff first")
    memory = (vault / "AI/MEMORY.md").read_text(encoding="utf-8")
    assert (
        "- **helm diff plugin** — always run helm diff first — session 2026-11-06 — 2026-11-06"
        in memory
    )
    assert "helm diff plugin" not in (vault / "AI/INBOX.md").read_text(encoding="utf-8")
    # the same as editing the line by hand and approving it at the terminal
    inbox = twin / "AI/INBOX.md"
    text = inbox.read_text(encoding="utf-8")
    inbox.write_text(
        text.replace(
            "run helm diff upgrade before every helm upgrade on staging-eu-1",
            "always run helm diff first",
        ),
        encoding="utf-8",
    )
    assert brain("inbox", "approve", "3", "--vault", str(twin)).code == 0
    assert snapshot(vault) == snapshot(twin)


def test_a_proposal_gone_elsewhere_is_never_mistaken_for_another(vault: Path) -> None:
    k = key(vault, 1)
    inboxmod.drop(vault, 1)  # at the terminal, after the page was drawn
    before = snapshot(vault)
    with pytest.raises(BrainError, match="no longer in the inbox"):
        actions.approve(vault, k)
    assert snapshot(vault) == before


def test_a_synonym_row_widens_the_next_find(vault: Path) -> None:
    from brain.commands.find import find

    assert not find(vault, "zorblax").hits
    done = actions.add_synonym(vault, "zorblax", "libgit2")
    assert done.ok
    assert (vault / "AI/synonyms.tsv").read_text(encoding="utf-8").endswith("zorblax\tlibgit2\n")
    assert find(vault, "zorblax").hits
    assert not actions.add_synonym(vault, "Zorblax", "libgit2").ok  # already there
    with pytest.raises(BrainError, match="term and its expansion"):
        actions.add_synonym(vault, "x", " ")


def test_propose_from_the_desk_goes_through_brain_propose(vault: Path) -> None:
    done = actions.propose(vault, "desk port — the desk picks a free port", "TUNINGS")
    assert done.ok
    last = inboxmod.proposals(vault)[-1]
    assert last.handle == "desk port"
    assert last.to == "TUNINGS"
    assert " — desk — " in last.markdown
    with pytest.raises(BrainError, match="not proposed"):
        actions.propose(vault, "no handle")


def test_the_inbox_page_shows_source_date_and_a_word_diff(vault: Path) -> None:
    existing = next(b for b in inboxmod.core_bullets(vault) if b.path == "AI/MEMORY.md")
    changed = existing.raw.replace(existing.text, existing.text + " (checked again)")
    with (vault / "AI/INBOX.md").open("a", encoding="utf-8") as fh:
        fh.write(changed + "\n")
    items = pages.inbox(vault)["items"]
    assert (items[0].source, items[0].date) == ("claude", "2026-11-04")
    update = items[-1]
    assert update.updates == f"AI/MEMORY.md:{existing.line}"
    assert [s.text.strip() for s in update.new if s.changed] == ["(checked again)"]
    assert not any(s.changed for s in update.old)  # nothing of the old line is gone
    assert "".join(s.text for s in update.old) == existing.raw


# --- the guard -----------------------------------------------------------------------------------


@pytest.fixture
def desk(vault: Path) -> Desk:
    return Desk(vault, PORT)


def client(desk: Desk, host: str = f"127.0.0.1:{PORT}") -> httpx.Client:
    from starlette.testclient import TestClient

    c = TestClient(create_app(desk), base_url=f"http://{host}")  # type: ignore[arg-type]
    c.headers["host"] = host
    return c


def moves_on_to(r: httpx.Response) -> str:
    """Where the page answering the tokened URL sends the browser on to (its meta refresh)."""
    assert r.status_code == 200
    m = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]*)">', r.text)
    assert m, r.text
    return m.group(1)


def signed_in(desk: Desk) -> httpx.Client:
    c = client(desk)
    r = c.get(f"/inbox?token={desk.token}", follow_redirects=False)
    assert moves_on_to(r) == "/inbox"  # the token leaves the address bar
    assert desk.token not in r.text
    assert '<meta name="referrer" content="no-referrer">' in r.text  # nor goes on in a Referer
    assert r.headers["referrer-policy"] == "same-origin"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    return c


def test_no_token_or_a_wrong_one_is_refused(desk: Desk) -> None:
    c = client(desk)
    used = desk.last
    for path in ("/", "/inbox", "/ledger", "/static/desk.js", "/inbox?token=wrong"):
        r = c.get(path)
        assert r.status_code == 403, path
        assert "brain desk" in r.text
    c.cookies.set(desk.cookie, "wrong")
    assert c.get("/inbox").status_code == 403
    assert desk.last == used  # knocking does not keep the desk from its idle exit


def test_the_token_sets_a_cookie_that_opens_every_page(desk: Desk) -> None:
    c = signed_in(desk)
    for path in ("/inbox", "/misses", "/ledger", "/health", "/search?q=libgit2"):
        r = c.get(path)
        assert r.status_code == 200, path
        assert "script-src" not in r.headers["content-security-policy"]  # default-src 'self'
        assert r.headers["x-frame-options"] == "DENY"
    assert "libgit2" in c.get("/search?q=libgit2").text
    assert c.get("/static/chart.umd.min.js").status_code == 200


@pytest.mark.parametrize("host", ["evil.example:8765", "127.0.0.1:9999", "localhost.evil:8765"])
def test_a_foreign_host_header_is_refused_even_with_the_token(desk: Desk, host: str) -> None:
    c = signed_in(desk)
    r = c.get("/inbox", headers={"host": host})
    assert r.status_code == 403
    assert "Host" in r.text
    assert client(desk, host).get(f"/inbox?token={desk.token}").status_code == 403


def _approve_form(desk: Desk) -> dict[str, str]:
    return {"csrf": desk.csrf, "key": key(desk.vault, 1), "to": ""}


def test_a_cross_origin_post_is_refused_and_changes_nothing(desk: Desk) -> None:
    c = signed_in(desk)
    before = snapshot(desk.vault)
    form = _approve_form(desk)
    for headers in (
        {"origin": "http://evil.example"},
        {"origin": "http://127.0.0.1:9999"},
        {"origin": "null"},
        {"referer": "http://evil.example/inbox"},
        {},  # neither Origin nor Referer
        {"origin": f"http://127.0.0.1:{PORT}", "sec-fetch-site": "cross-site"},
    ):
        r = c.post("/inbox/approve", data=form, headers=headers, follow_redirects=False)
        assert r.status_code == 403, headers
    same = {"origin": f"http://127.0.0.1:{PORT}"}
    r = c.post("/inbox/approve", data={**form, "csrf": "x"}, headers=same, follow_redirects=False)
    assert r.status_code == 403
    assert "CSRF" in r.text
    assert snapshot(desk.vault) == before
    r = c.post("/inbox/approve", data=form, headers=same, follow_redirects=False)
    assert r.status_code == 303
    assert snapshot(desk.vault) != before
    assert "Approved in AI/MEMORY.md" in c.get(r.headers["location"]).text


def test_a_proposal_holding_a_script_renders_as_text(desk: Desk) -> None:
    fact = "<script>alert(1)</script> <img src=x onerror=alert(2)>"
    bad = f"- **xss probe** — {fact} — x — 2026-11-01"
    with (desk.vault / "AI/INBOX.md").open("a", encoding="utf-8") as fh:
        fh.write(bad + "\n")
    page = signed_in(desk).get("/inbox").text
    assert "<script>alert(1)" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_page_reflects_changes_made_elsewhere(desk: Desk) -> None:
    c = signed_in(desk)
    page = c.get("/inbox").text
    assert "zanzibar quota" in page
    m = re.search(r'data-stamp="(\w+)"', page)
    assert m
    assert c.get("/stamp").text == m.group(1)  # nothing changed: the open page stays as it is
    used = desk.last
    c.get("/stamp")
    assert desk.last == used  # an open tab's polling does not keep the desk from its idle exit
    inboxmod.drop(desk.vault, 1)  # at the terminal
    assert c.get("/stamp").text != m.group(1)  # the open page offers a reload
    assert "zanzibar quota" not in c.get("/inbox").text


# --- the real server -----------------------------------------------------------------------------


def start(vault: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "brain", "desk", "--vault", str(vault), "--no-open", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"(http://127\.0\.0\.1:(\d+)/\?token=[\w-]+)", line)
    assert m, line + proc.stderr.read() if proc.stderr else line
    return proc, m.group(1)


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGINT) -> str:
    """Signal the desk by its pid; what it printed after the URL."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    assert proc.stdout is not None
    return proc.stdout.read()


def test_brain_desk_serves_on_loopback_only_and_stops_on_ctrl_c(vault: Path) -> None:
    proc, url = start(vault)
    try:
        port = int(url.split(":")[2].split("/")[0])
        with httpx.Client(follow_redirects=True, timeout=30) as c:
            r = c.get(f"http://127.0.0.1:{port}" + moves_on_to(c.get(url)))
            assert r.status_code == 200
            assert "zanzibar quota" in r.text
            assert c.get(f"http://127.0.0.1:{port}/health").status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/inbox", timeout=30).status_code == 403
        # not on any other address of this machine
        ss = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, check=False)
        if ss.returncode == 0:
            listening = [ln.split()[3] for ln in ss.stdout.splitlines() if f":{port} " in ln + " "]
            assert listening == [f"127.0.0.1:{port}"]
    finally:
        out = stop(proc)
    assert "stopped (interrupted)" in out
    assert proc.returncode == 0


def test_brain_desk_exits_when_idle(vault: Path) -> None:
    proc, _ = start(vault, "--idle", "1")
    try:
        proc.wait(timeout=30)
    finally:
        out = stop(proc, signal.SIGKILL)  # only if it did not exit by itself
    assert proc.returncode == 0
    assert "stopped (idle" in out


def test_a_taken_port_is_one_line(vault: Path) -> None:
    proc, url = start(vault)
    try:
        port = url.split(":")[2].split("/")[0]
        r = brain("desk", "--vault", str(vault), "--no-open", "--port", port, timeout=60)
        assert r.code == 1
        assert f"cannot listen on 127.0.0.1:{port}" in r.err
        assert "Traceback" not in r.err
    finally:
        stop(proc)


def test_an_item_of_another_kind_shows_its_fields_and_is_not_edited(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inbox items may carry more than a proposal does (`brain tend`'s hygiene items add a
    `kind`): the page shows every further field, and only a proposed bullet can be edited."""
    from dataclasses import dataclass, replace

    @dataclass(frozen=True)
    class Item(inboxmod.Proposal):
        kind: str = "bullet"
        target: str = ""

    real = inboxmod.proposals

    def proposals(v: Path, text: str | None = None) -> list[inboxmod.Proposal]:
        found = [Item(**vars(p)) for p in real(v, text)]
        return [replace(found[0], kind="hygiene", target="notes/x.md"), *found[1:]]

    monkeypatch.setattr(inboxmod, "proposals", proposals)
    items = pages.inbox(vault)["items"]
    assert ("kind", "hygiene") in items[0].extra
    assert ("target", "notes/x.md") in items[0].extra
    assert not items[0].editable
    assert items[1].editable
    before = snapshot(vault)
    with pytest.raises(BrainError, match="only a proposed bullet"):
        actions.edit_then_approve(vault, items[0].key, "x — y")
    assert snapshot(vault) == before


def test_a_slow_page_is_read_in_the_background_and_never_shown_stale_unmarked(
    vault: Path,
) -> None:
    import threading

    go = threading.Event()
    reads: list[int] = []

    def read(v: Path) -> dict[str, object]:
        go.wait(30)
        reads.append(1)
        return {"n": len(reads)}

    slow = pages.Background(read)
    assert set(slow.get(vault, wait=0.05)) == {"pending"}  # on its way, the request not held
    go.set()
    got = slow.get(vault, wait=10)
    assert (got["n"], got["stale"], got["rechecking"]) == (1, False, False)
    assert slow.get(vault, wait=10)["n"] == 1  # nothing changed: not read again
    go.clear()
    (vault / "AI/INBOX.md").write_text("# Inbox\n", encoding="utf-8")  # a change elsewhere
    got = slow.get(vault, wait=0.05)
    assert (got["n"], got["stale"], got["rechecking"]) == (1, True, True)
    go.set()
    got = slow.get(vault, wait=10)
    assert (got["n"], got["stale"]) == (2, False)


def test_the_token_redirect_never_leads_to_another_host(desk: Desk) -> None:
    r = client(desk).get(f"/%2Fevil.example/?token={desk.token}", follow_redirects=False)
    assert moves_on_to(r) == "/"
    r = client(desk).get(f'/"><script>x?token={desk.token}', follow_redirects=False)
    assert moves_on_to(r) == "/&quot;&gt;&lt;script&gt;x"  # the path stays text


def test_a_page_that_crashes_is_one_line_and_a_report(
    desk: Desk, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(vault: Path) -> dict[str, object]:
        raise RuntimeError("boom")

    monkeypatch.setattr(pages, "ledger", broken)
    r = signed_in(desk).get("/ledger")
    assert r.status_code == 500
    assert "boom" not in r.text
    err = capsys.readouterr().err
    assert "Traceback" not in err
    m = re.fullmatch(r"brain desk: /ledger failed \(RuntimeError\); see (\S+)\n", err)
    assert m, err
    assert "RuntimeError: boom" in Path(m.group(1)).read_text(encoding="utf-8")


def test_a_port_out_of_range_is_a_usage_error(vault: Path) -> None:
    r = brain("desk", "--vault", str(vault), "--no-open", "--port", "70000")
    assert r.code == 2
    assert "--port 70000 is not a port" in r.err


def test_a_further_list_of_doctors_is_shown_as_a_table() -> None:
    """doctor's result may grow a list (a newer brain's failed claims): the health page shows it."""
    from dataclasses import dataclass

    from brain.commands.doctor import DoctorResult

    @dataclass(frozen=True)
    class Claim:
        bullet: str
        claim: str
        checks: tuple[str, ...]

    @dataclass(frozen=True)
    class Result(DoctorResult):
        failed_claims: tuple[Claim, ...] = ()

    claims = tuple(Claim(f"AI/MEMORY.md:{i}", "port 5432", ("a", "b")) for i in range(60))
    result = Result(True, "/v", (), (), (), (), (), claims)
    (table,) = pages.others(result)
    assert table.title == "Bullets whose claims failed here"  # as `brain doctor` titles it
    assert table.columns == ("bullet", "claim", "checks")
    assert table.rows[0] == ("AI/MEMORY.md:0", "port 5432", "a, b")
    assert (len(table.rows), table.more) == (pages.SHOWN, 10)
    assert pages.others(DoctorResult(True, "/v", (), (), (), (), ())) == ()


# --- what the cards and tables say ---------------------------------------------------------------


def test_an_inbox_card_shows_a_bullet_by_its_fields_not_its_markdown_twice(desk: Desk) -> None:
    line = "- **desk card** (aliases: card) — the card shows the fact — priya — 2026-11-30"
    with (desk.vault / "AI/INBOX.md").open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    item = pages.inbox(desk.vault)["items"][-1]
    fields = (item.handle, item.fact, item.aliases)
    assert fields == ("desk card", "the card shows the fact", "card")
    assert not [name for name, _ in item.extra if name == "markdown"]
    page = signed_in(desk).get("/inbox").text
    card = page[page.index(f'id="item-{item.number}"') :]
    card = card[: card.index("</li>")]
    assert '<p class="text">the card shows the fact</p>' in card
    assert "also found as card" in card
    shown = re.sub(r"<textarea.*?</textarea>|<input[^>]*>", "", card, flags=re.S)
    assert "— the card shows the fact —" not in shown  # the raw line only where it is edited


def test_a_hygiene_card_shows_why_and_the_text_it_drops(desk: Desk) -> None:
    from brain.commands import hygiene

    memory = (desk.vault / "AI/MEMORY.md").read_text(encoding="utf-8").split("\n")
    n, raw = next((i, x) for i, x in enumerate(memory, 1) if x.startswith("- **"))
    handle = raw.split("**")[1]
    target = hygiene.Target("AI/MEMORY.md", hygiene.line_hash(raw), n, handle)
    why = "every claim failed (/srv/gone: it does not exist)"
    item = hygiene.make("drop", f"drop **{handle}** (AI/MEMORY.md:{n})", why, [target])
    with (desk.vault / "AI/INBOX.md").open("a", encoding="utf-8") as fh:
        fh.write(item.line() + "\n")
    card = pages.inbox(desk.vault)["items"][-1]
    assert card.why == why
    assert [(c.role, c.where, c.text) for c in card.changes] == [
        ("drops", f"AI/MEMORY.md:{n}", raw)
    ]
    page = signed_in(desk).get("/inbox").text
    assert f'<span class="label">why</span> {html_text(why)}' in page
    assert html_text(raw) in page


def html_text(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_healths_tables_have_headers_a_person_reads() -> None:
    from brain.commands.advisories import FailedClaim
    from brain.commands.doctor import DoctorResult

    failed = FailedClaim("AI/MEMORY.md", 3, "db port", "2026-01-01", ("path /x: gone",), 2)
    result = DoctorResult(True, "/v", (), (), (), (), (), (failed,))
    (table,) = pages.others(result)
    assert table.title == "Bullets whose claims failed here"
    assert table.fix == "`brain verify HANDLE`; fix or drop them"
    assert table.columns == ("file", "line", "handle", "date", "what failed", "claims")
    assert not [c for c in table.columns if "_" in c]


def test_the_favicon_is_served_to_the_desks_own_browser_only(desk: Desk) -> None:
    assert client(desk).get("/favicon.ico").status_code == 403  # behind the guard like the rest
    r = signed_in(desk).get("/favicon.ico")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg")


def test_the_desk_counts_with_the_right_noun(desk: Desk) -> None:
    with (desk.vault / "AI/MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("- **quokka feeder** — the quokka feeder runs at noon — me — 2026-11-30\n")
    page = signed_in(desk).get("/search?q=quokka").text
    assert "1 hit, " in page
    assert "1 hits" not in page
    env = templates().env
    assert env.from_string('{{ 1|plural("hit") }}; {{ 1200|plural("hit") }}').render() == (
        "1 hit; 1,200 hits"
    )


def _probe_items(vault: Path, outside: Path) -> dict[str, str]:
    """Hygiene items (an inbox line another machine can write) naming a link to a file outside
    the vault, a link to a folder outside, a 200 MB note, `..`, `%2e%2e%2f`, an absolute path
    and a NUL; each path by what its card must say instead of the file's text."""
    from brain.commands import hygiene

    secret = outside / "id_rsa"
    secret.write_text("SECRET KEY MATERIAL\n", encoding="utf-8")
    (outside / "folder").mkdir()
    (outside / "folder" / "x.md").write_text("SECRET FOLDER NOTE\n", encoding="utf-8")
    notes = vault / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "key.md").symlink_to(secret)
    (notes / "out").symlink_to(outside / "folder")
    with (notes / "big.md").open("w", encoding="utf-8") as fh:
        fh.write("# big\n")
        fh.truncate(200 * 1024 * 1024)  # sparse: 200 MB to read, none on disk
    bad = {
        "notes/key.md": "outside the vault",
        "notes/out/x.md": "outside the vault",
        "notes/big.md": "over the 4 MB brain reads of a file",
        "../outside/id_rsa": "is not a path inside the vault",
        "notes/%2e%2e%2f%2e%2e%2foutside/id_rsa": "",  # a name like any other: not there
        str(secret): "is not a path inside the vault",
        "notes/a\0b.md": "is not a path inside the vault",
    }
    lines = [
        hygiene.make(op, f"{op} probe {n}", "probe", [hygiene.Target(p, "0" * 16, 1, "h")]).line()
        for n, p in enumerate(bad)
        for op in ("drop", "supersede")
    ]
    with (vault / "AI/INBOX.md").open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return bad


def test_the_desk_never_serves_a_file_outside_the_vault_nor_a_huge_one(
    vault: Path, tmp_path: Path
) -> None:
    """The real desk, fetched over HTTP with its token: the inbox's hygiene cards show the text
    of the files their items name. A NUL in a name made the inbox page a 500 (and every action
    on the item), a 200 MB note was read whole into the page; a path outside the vault, through
    a link or `..`, is never read; a path the desk has no page for is a clear 404."""
    outside = tmp_path / "outside"
    outside.mkdir()
    bad = _probe_items(vault, outside)
    proc, url = start(vault)
    try:
        base = url.split("/?")[0]
        with httpx.Client(timeout=60) as c:
            c.get(url)
            r = c.get(f"{base}/inbox")
            assert r.status_code == 200, r.text
            assert "SECRET" not in r.text
            for path, why in bad.items():
                if why:
                    card = f'<code>{html_text(pages_path(path))}</code> <span class="line">'
                    shown = re.findall(re.escape(card) + r"(not shown: [^<]*)", r.text)
                    assert len(shown) == 2, (path, shown)  # the drop and the supersede
                    assert all(html_text(why) in s for s in shown), (path, shown)
            for probe in (
                "/static/../../outside/id_rsa",
                "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
                "/static/..%2f..%2f..%2fetc%2fpasswd",
                "/static/desk.js%00",
                "/notes/key.md",
                "/%2e%2e/%2e%2e/etc/passwd",
            ):
                r = c.get(base + probe)
                assert r.status_code == 404, probe
                assert "SECRET" not in r.text
                assert "root:" not in r.text
                assert r.text.startswith("404 Not Found: the desk has no page at /"), r.text
                assert "its pages are /inbox" in r.text
            # approving an item that names a NUL or a link out: one line on the page, no 500
            from brain.commands import inbox as inboxmod

            page = c.get(f"{base}/inbox").text
            csrf = re.search(r'name="csrf" value="([^"]+)"', page)
            assert csrf
            for p in inboxmod.proposals(vault):
                if "probe" not in p.markdown:
                    continue
                form = {"csrf": csrf.group(1), "key": p.markdown, "to": ""}
                r = c.post(
                    f"{base}/inbox/approve",
                    data=form,
                    headers={"origin": base},
                    follow_redirects=True,
                )
                assert r.status_code == 200, r.text
                assert "SECRET" not in r.text
    finally:
        out = stop(proc)
    assert "failed" not in out
    assert "SECRET" not in (vault / "AI/MEMORY.md").read_text(encoding="utf-8")


def pages_path(path: str) -> str:
    from brain.text import printable

    return printable(path)


def test_a_destination_refused_is_said_in_the_desks_words(desk: Desk) -> None:
    """The desk's form has no --to: a destination that is no core file is refused in words every
    surface can show (brain.commands.inbox.destination), and nothing changes."""
    c = signed_in(desk)
    before = snapshot(desk.vault)
    form = {**_approve_form(desk), "to": "../../etc/passwd"}
    same = {"origin": f"http://127.0.0.1:{PORT}"}
    r = c.post("/inbox/approve", data=form, headers=same, follow_redirects=True)
    assert r.status_code == 200
    assert "is not a core file" in r.text
    assert "--to" not in r.text
    assert snapshot(desk.vault) == before


def test_an_inbox_over_the_size_brain_reads_is_said_on_the_page(desk: Desk) -> None:
    from brain.vault import NOTE_MAX

    line = "- **filler** — a proposal that came in bulk — bot — 2026-01-01\n"
    (desk.vault / "AI/INBOX.md").write_text(line * (NOTE_MAX // len(line) + 10), encoding="utf-8")
    r = signed_in(desk).get("/inbox")
    assert r.status_code < 500, r.text[:300]
    assert "over the 4 MB brain reads of a file" in r.text
