"""The Typer app: parses arguments, calls a command module, renders its result."""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated, Any

import typer

from brain import cli, render
from brain.errors import UsageError

app = typer.Typer(
    name="brain",
    help=(
        "A local-first memory for coding agents. The vault is a git repository of Markdown; "
        "a disposable SQLite index (FTS5) in the state dir makes it fast to search."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

VaultOpt = Annotated[
    str | None,
    typer.Option(
        "--vault",
        help="The vault (a folder with AI/ in it). Default: $BRAIN_VAULT, else the recorded vault.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]


def _doc(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


@app.command("find")
def find_command(
    query: Annotated[list[str], typer.Argument(help="What to look for, in plain words.")],
    vault: VaultOpt = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", help="At most this many hits (default 10).")
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", help="Byte cap on the output for this call (default 2400)."),
    ] = None,
    raw: Annotated[bool, typer.Option("--raw", help="Print each hit's line as written.")] = False,
    terse: Annotated[
        bool, typer.Option("--terse", help="One line per hit, as agents get, even at a terminal.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Find the bullets and notes that answer QUERY. Exit 1 when nothing matches, as grep does."""
    raise typer.Exit(cli.run_find(query, vault, limit, budget, raw, terse, as_json))


def _reindex(vault: str | None, full: bool, as_json: bool) -> None:
    from brain.commands.reindex import reindex
    from brain.config import resolve_vault

    result = reindex(resolve_vault(vault), full=full)
    if as_json:
        doc = _doc(result)
        doc["changed"], doc["removed"] = list(result.changed), list(result.removed)
        render.out(render.dumps(doc))
        return
    what = "rebuilt" if result.full else "updated"
    render.out(
        f"Index {what}: {result.bullets} bullets and {result.units - result.bullets} note "
        f"paragraphs from {result.files} files ({len(result.changed)} changed, "
        f"{len(result.removed)} removed) in {result.ms:.0f} ms."
    )
    if result.problems:
        sys.stderr.write(f"{result.problems} problems in the vault; run `brain lint` to see them\n")


FullOpt = Annotated[
    bool,
    typer.Option("--full", help="Rebuild from nothing into a new file, swapped in atomically."),
]


@app.command("reindex")
def reindex_command(
    vault: VaultOpt = None, full: FullOpt = False, as_json: JsonOpt = False
) -> None:
    """Bring the index up to date with the vault (only changed files are read again)."""
    _reindex(vault, full, as_json)


@app.command("sync")
def sync_command(vault: VaultOpt = None, full: FullOpt = False, as_json: JsonOpt = False) -> None:
    """Alias of `reindex`."""
    _reindex(vault, full, as_json)


@app.command("lint")
def lint_command(
    paths: Annotated[
        list[str] | None, typer.Argument(help="Files to check (default: the core files).")
    ] = None,
    staged: Annotated[
        bool, typer.Option("--staged", help="Check what is staged for commit (git index).")
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check that every bullet parses, ends in a valid date, has a unique handle and no secret."""
    from brain.commands.lint import lint
    from brain.config import resolve_vault

    result = lint(resolve_vault(vault), paths or None, staged=staged)
    if as_json:
        render.out(
            render.dumps(
                {
                    "ok": result.ok,
                    "files": list(result.files),
                    "bullets": result.bullets,
                    "problems": [_doc(p) for p in result.problems],
                }
            )
        )
    elif result.problems:
        render.out("\n".join(str(p) for p in result.problems))
        sys.stderr.write(f"{len(result.problems)} problems; fix them and run `brain lint` again\n")
    else:
        render.out(f"{result.bullets} bullets in {len(result.files)} files: all good.")
    raise typer.Exit(0 if result.ok else 1)


@app.command("version")
def version_command(as_json: JsonOpt = False) -> None:
    """Print the release tag (or `dev` for a local build) and the commit it was built from."""
    from brain.commands.version import version

    result = version()
    if as_json:
        render.out(render.dumps(_doc(result)))
    else:
        commit = f" ({result.commit})" if result.commit else ""
        render.out(f"brain {result.version}{commit}")


def run(args: list[str]) -> int:
    """Run the app on `args`; return the exit code instead of exiting (cli.main owns that)."""
    from typer._click import exceptions as click_exc  # typer 0.28 vendors click

    command = typer.main.get_command(app)
    try:
        code = command.main(args, prog_name="brain", standalone_mode=False)
    except click_exc.NoArgsIsHelpError as exc:
        render.out(exc.ctx.get_help() if exc.ctx else "")
        return 0
    except click_exc.UsageError as exc:
        raise UsageError(exc.format_message(), "see `brain --help`") from None
    except click_exc.ClickException as exc:
        raise UsageError(exc.format_message(), "see `brain --help`") from None
    except typer.Abort:
        raise KeyboardInterrupt from None
    return code if isinstance(code, int) else 0
