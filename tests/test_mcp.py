"""`brain mcp`: the SDK's own client spawns the server over stdio; edge cases run in-process."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, brain
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from brain.config import usage_log_path
from brain.usage import connect, events

TOOLS = {"find", "recall", "pack", "propose", "locate"}


def as_mcp(cli_out: str) -> str:
    """What the MCP find tool says where the CLI printed `cli_out`: the same lines, the way to
    the ranked list said as an MCP client takes it (brain.present.hits.MCP_ALL)."""
    return cli_out.rstrip("\n").replace("--all lists them", "the limit argument lists them")


def _params(vault: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k.startswith(("XDG_", "BRAIN_", "GIT_"))}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "brain", "mcp", "--vault", str(vault)],
        env={**env, "HOME": os.environ["HOME"], "PYTHONPATH": str(Path(__file__).parents[1])},
    )


async def _session_calls(vault: Path, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    async with (
        stdio_client(_params(vault)) as (read, write),
        ClientSession(read, write, client_info=Implementation(name="tester", version="1")) as s,
    ):
        await s.initialize()
        names = {t.name for t in (await s.list_tools()).tools}
        results = [await s.call_tool(name, args) for name, args in calls]
        return names, results


def test_stdio_tools_print_what_the_cli_prints(vault: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find", {"query": "libgit2 hooks"}),
        ("find", {"query": "paynova status", "limit": 2}),
        ("locate", {"handle": "odeme durumu"}),
        ("find", {}),  # missing argument: a tool error, and the server lives on
        ("find", {"query": "x", "limit": "many"}),  # wrong type
        ("locate", {"handle": "no such bullet"}),
        ("find", {"query": "pygit2"}),
    ]
    names, results = anyio.run(_session_calls, vault, calls)
    assert names == TOOLS
    find, find2, locate, missing, wrong, unknown, after = results
    cli = brain("find", "--vault", str(vault), "libgit2 hooks")
    assert not find.is_error
    assert find.content[0].text == as_mcp(cli.out)
    assert (
        find.structured_content
        == brain("find", "--vault", str(vault), "--json", "libgit2 hooks").json()
    )
    assert find2.content[0].text == brain(
        "find", "--vault", str(vault), "-n", "2", "paynova status"
    ).out.rstrip("\n")
    assert locate.content[0].text == brain(
        "locate", "--vault", str(vault), "odeme durumu"
    ).out.rstrip("\n")
    assert list(locate.structured_content) == ["query", "count", "matches"]
    assert missing.is_error
    assert "query" in missing.content[0].text
    assert wrong.is_error
    assert "limit" in wrong.content[0].text
    assert unknown.is_error
    assert "brain find" in unknown.content[0].text
    assert not after.is_error
    assert "pygit2" in after.content[0].text.lower()


def test_stdio_caller_is_logged_as_the_client_name(vault: Path) -> None:
    anyio.run(_session_calls, vault, [("find", {"query": "libgit2 hooks"})])
    conn = connect(usage_log_path())
    try:
        rows = [(e.command, e.caller, e.query) for e in events(conn)]
    finally:
        conn.close()
    assert rows == [("find", "mcp:tester", "libgit2 hooks")]  # the JSON copy is not logged


def test_stdio_optional_tools_run_their_commands(vault: Path) -> None:
    from importlib.util import find_spec

    calls: list[tuple[str, dict[str, Any]]] = []
    if find_spec("brain.commands.pack"):
        calls.append(("pack", {"project": "payments"}))
    if find_spec("brain.commands.propose"):
        calls.append(("propose", {"line": "mcp tools — brain serves its tools over MCP"}))
    if not calls:
        pytest.skip("pack and propose are not part of this brain yet")
    _, results = anyio.run(_session_calls, vault, calls)
    for (name, _args), res in zip(calls, results, strict=True):
        assert not res.is_error, (name, res.content)
        if name == "pack":
            cli = brain("pack", "--vault", str(vault), "payments")
            assert res.content[0].text == cli.out.rstrip("\n")
        else:
            assert "mcp tools" in (vault / "AI" / "INBOX.md").read_text(encoding="utf-8")
            assert res.structured_content is not None


# --- in-process ----------------------------------------------------------------------------------


async def _inprocess(
    vault: Path, calls: list[tuple[str, dict[str, Any]]], client: str = "unit"
) -> list[Any]:
    from mcp import Client

    from brain.mcp_server import build

    async with Client(build(str(vault)), client_info=Implementation(name=client, version="0")) as c:
        return [await c.call_tool(name, args) for name, args in calls]


def test_a_client_name_is_logged_and_listed_escaped(vault: Path) -> None:
    """The caller a client names itself is printed by `brain ledger` and `brain log`: a newline
    or ESC in it is escaped, never a forged line or a terminal sequence."""
    calls = [("find", {"query": "libgit2 hooks"}), ("find", {"query": "zyzzyva quux"})]
    anyio.run(_inprocess, vault, calls, "evil\x1b[2J\nagent")
    for args in (["ledger"], ["log"]):
        run = brain(*args, "--vault", str(vault))
        assert run.code == 0, run
        assert "\x1b" not in run.out
        assert "mcp:evil\\x1b[2J\\nagent" in run.out, run.out


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(vault: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find", {"query": 42}),
        ("find", {"query": "x", "limit": 0}),
        ("find", {"query": "x", "budget": [1]}),
        ("locate", {"handle": 7}),  # no handle is the vault's folder; a number is no handle
        ("locate", {"handle": "   "}),
        ("find", {"query": "?!"}),
        ("nonesuch", {}),
        ("find", {"query": "libgit2 hooks"}),
    ]
    *bad, good = anyio.run(_inprocess, vault, calls)
    for (name, args), res in zip(calls, bad, strict=False):
        assert res.is_error, (name, args, res)
    assert not good.is_error
    assert good.structured_content["count"] >= 1


def test_a_missing_command_module_is_a_clear_tool_error(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def fake(name: str, *args: Any) -> Any:
        return None if name == "brain.commands.recall" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    (res,) = anyio.run(_inprocess, vault, [("recall", {"query": "hooks"})])
    assert res.is_error
    assert "`brain recall` is not part of this brain" in res.content[0].text


def test_tools_never_write_to_the_real_stdout(
    vault: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    anyio.run(
        _inprocess, vault, [("find", {"query": "libgit2 hooks"}), ("locate", {"handle": "libgit2"})]
    )
    assert capfd.readouterr().out == ""


def test_mcp_help_and_a_bad_vault_are_one_line_errors(tmp_path: Path) -> None:
    run = brain("mcp", "--vault", str(tmp_path / "nope"))
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert "does not exist" in run.err
    assert shutil.which(sys.executable)


def test_recall_tool_fetches_a_full_turn_by_its_listed_id(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "testdata" / "transcripts" / "claude", tmp_path / "claude")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert brain("recall", "--enable", "claude").code == 0
    (listing,) = anyio.run(_inprocess, vault, [("recall", {"query": "paynova webhook"})])
    assert listing.content[0].text == brain("recall", "paynova webhook").out.rstrip("\n")
    assert listing.structured_content == brain("recall", "--json", "paynova webhook").json()
    short = listing.content[0].text.split()[0]
    (full,) = anyio.run(_inprocess, vault, [("recall", {"full": short})])
    assert full.content[0].text == brain("recall", "--full", short).out.rstrip("\n")
    assert not full.is_error, full.content
    assert full.structured_content["id"].startswith(short)
    assert "webhook" in full.structured_content["body"].lower()
    assert full.content[0].text.startswith(full.structured_content["id"] + "\n")


# --- what the tools declare -------------------------------------------------------------------


async def _listed(vault: Path) -> dict[str, Any]:
    from mcp import Client

    from brain.mcp_server import build

    who = Implementation(name="lister", version="0")
    async with Client(build(str(vault)), client_info=who) as c:
        return {t.name: t for t in (await c.list_tools()).tools}


def test_tools_say_which_read_and_which_write(vault: Path) -> None:
    """MCP's tool annotations (schema.ts ToolAnnotations): find, pack, locate and recall change
    nothing, propose adds a line to the inbox (not read-only, never destructive, idempotent: the
    same line twice adds nothing); none reaches past this machine."""
    tools = anyio.run(_listed, vault)
    for name in ("find", "pack", "locate", "recall"):
        hints = tools[name].annotations
        assert hints is not None, name
        assert hints.read_only_hint is True, name
        assert hints.open_world_hint is False, name
    hints = tools["propose"].annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
        False,
        False,
        True,
    )
    assert hints.open_world_hint is False
    assert "AI/INBOX.md" in (tools["propose"].description or "")
    assert all(t.title for t in tools.values())


def test_propose_says_it_reaches_the_team_remote(vault: Path) -> None:
    """With `proposals: team` propose pushes a branch to the shared remote (brain/team.py): the
    tool must not tell a client it stays on this machine, nor that the line waits in the inbox."""
    (vault / "AI" / "config.yaml").write_text("proposals: team\n", encoding="utf-8")
    tools = anyio.run(_listed, vault)
    hints = tools["propose"].annotations
    assert hints is not None
    assert hints.open_world_hint is True
    assert hints.read_only_hint is False
    assert "shared remote" in (tools["propose"].description or "")
    assert "AI/INBOX.md" not in (tools["propose"].description or "")
    for name in ("find", "pack"):
        read = tools[name].annotations
        assert read is not None, name
        assert read.open_world_hint is False, name


def _valid(schema: dict[str, Any], doc: Any) -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema)
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(doc)]
    assert not errors, errors


def test_every_answer_matches_its_tools_output_schema(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each tool declares an outputSchema (root an object, as MCP asks) and every structured
    answer it gives validates against it: both answers of locate (a bullet, the vault's folder)
    and recall (a listing, a turn), an empty find, a pack, a proposal."""
    shutil.copytree(ROOT / "testdata" / "transcripts" / "claude", tmp_path / "claude")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert brain("recall", "--enable", "claude").code == 0
    tools = anyio.run(_listed, vault)
    assert set(tools) == TOOLS
    schemas = {name: t.output_schema for name, t in tools.items()}
    for name, schema in schemas.items():
        assert schema is not None, name
        assert schema["type"] == "object", name
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find", {"query": "libgit2 hooks"}),
        ("find", {"query": "zyzzyva quux"}),
        ("locate", {"handle": "odeme durumu"}),
        ("locate", {}),
        ("recall", {"query": "paynova webhook"}),
        ("pack", {"project": "payments"}),
        ("pack", {"project": "nothing-known-here"}),
        ("propose", {"line": "schema check — every answer matches its schema"}),
    ]
    results = anyio.run(_inprocess, vault, calls)
    listing = results[4].structured_content
    (turn,) = anyio.run(_inprocess, vault, [("recall", {"full": listing["hits"][0]["id"]})])
    for (name, args), res in [*zip(calls, results, strict=True), (("recall", {}), turn)]:
        assert not res.is_error, (name, args, res.content)
        _valid(schemas[name], res.structured_content)
    assert results[3].structured_content == {"vault": str(vault.resolve()), "origin": "--vault"}
    assert results[3].content[0].text == str(vault.resolve())
    # a key the answer lacks, or one it adds, is out of the schema
    hit = dict(results[0].structured_content)
    del hit["omitted"]
    from jsonschema import Draft202012Validator

    assert not Draft202012Validator(schemas["find"]).is_valid(hit)
    assert not Draft202012Validator(schemas["find"]).is_valid({**hit, "omitted": 0, "x": 1})


def test_propose_answers_in_the_lines_the_cli_prints(vault: Path) -> None:
    """The tool's text is `Proposed as #N: ...`, as `brain propose` prints it, not the JSON
    object (that is the structured content); a handle a bullet already has is refused with the
    way on, and `force` queues the correction as an update of that bullet."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("propose", {"line": "kiwi rule — kiwis ship on Tuesdays"}),
        ("propose", {"line": "brain cli — brain is a Typer app"}),
        ("propose", {"line": "brain cli — brain is a Typer app", "force": True}),
    ]
    made, taken, forced = anyio.run(_inprocess, vault, calls)
    doc = made.structured_content
    assert doc["action"] == "proposed"
    assert made.content[0].text == f"Proposed as #{doc['number']}: {doc['markdown']}"
    assert taken.is_error
    said = taken.content[0].text
    assert "**brain cli** is already a bullet (AI/MEMORY.md:9)" in said
    assert "--force" in said
    assert forced.structured_content["updates"] == "AI/MEMORY.md:9"
    assert forced.content[0].text.startswith(f"Proposed as #{doc['number'] + 1}: ")
    assert "\n  updates AI/MEMORY.md:9: - **brain cli**" in forced.content[0].text
    cli = brain("propose", "--vault", str(vault), "plum rule — plums ship on Fridays")
    assert cli.out.startswith(f"Proposed as #{doc['number'] + 2}: - **plum rule** — ")


def test_an_mcp_client_is_told_how_it_lists_what_the_cut_left_out(vault: Path) -> None:
    """The answer's last line names the way to the ranked list: a shell's `--all`, an MCP
    client's `limit` argument (it has no flags). The lines above are the CLI's."""
    calls: list[tuple[str, dict[str, Any]]] = [("find", {"query": "paynova status"})]
    _, (found,) = anyio.run(_session_calls, vault, calls)
    cli = brain("find", "--vault", str(vault), "paynova status", env={"BRAIN_CALLER": "x"})
    *lines, last = cli.out.rstrip("\n").splitlines()
    assert last.endswith("weaker hits left out (--all lists them)")
    said = found.content[0].text.splitlines()
    assert said[:-1] == lines
    assert said[-1] == as_mcp(last)
