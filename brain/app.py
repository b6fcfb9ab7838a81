"""The Typer app: parses arguments, calls a command module, renders its result."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator
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

    path = resolve_vault(vault)
    with _progress("Embedding", enabled=not as_json) as progress:
        result = reindex(path, full=full, progress=progress)
    if as_json:
        doc = _doc(result)
        doc["changed"], doc["removed"] = list(result.changed), list(result.removed)
        render.out(render.dumps(doc))
        return
    what = "rebuilt" if result.full else "updated"
    line = (
        f"Index {what}: {result.bullets} bullets and {result.units - result.bullets} note "
        f"paragraphs from {result.files} files ({len(result.changed)} changed, "
        f"{len(result.removed)} removed)"
    )
    if result.embedded:
        line += f", {result.embedded} embedded"
    render.out(f"{line} in {result.ms:.0f} ms.")
    if result.problems:
        sys.stderr.write(f"{result.problems} problems in the vault; run `brain lint` to see them\n")


@contextlib.contextmanager
def _progress(label: str, *, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long runs at a terminal; nothing for hooks and pipes."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            if total >= 200:
                bar.update(task, completed=done, total=total)

        yield update


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


@app.command("secrets")
def secrets_command(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Files or folders to scan (default: every file of the vault)."),
    ] = None,
    staged: Annotated[
        bool, typer.Option("--staged", help="Scan what is staged for commit (git index).")
    ] = False,
    vault: VaultOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Find credentials (API keys, tokens, private keys) in the vault. Exit 1 when any is found.

    Uses gitleaks as well when it is on PATH. The pre-commit hook runs `brain secrets --staged`.
    """
    from brain.commands.secrets import scan
    from brain.config import resolve_vault

    result = scan(resolve_vault(vault), paths or None, staged=staged)
    also = " (and gitleaks)" if result.gitleaks else ""
    if as_json:
        render.out(render.dumps(dataclasses.asdict(result)))
    elif result.findings:
        render.out("\n".join(f"{f.path}:{f.line}: {f.rule} ({f.masked})" for f in result.findings))
    if not as_json:
        if result.findings:
            found = _plural(len(result.findings), "possible secret")
            files = _plural(len({f.path for f in result.findings}), "file")
            sys.stderr.write(
                f"{found} in {files}{also}; remove them and keep credentials in a password "
                "manager\n"
            )
        else:
            sys.stderr.write(f"no secrets in {_plural(len(result.files), 'file')}{also}\n")
    raise typer.Exit(0 if result.ok else 1)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@app.command("install")
def install_command(
    path: Annotated[
        str | None,
        typer.Argument(
            help="The vault folder. Default: $BRAIN_VAULT, else the recorded vault, else "
            "~/Documents/Brain (created as a git repository with a starter AI/).",
            show_default=False,
        ),
    ] = None,
    init: Annotated[
        bool,
        typer.Option(
            "--init",
            "--yes",
            "-y",
            help="Run `git init` in an existing folder that is not a git repository yet "
            "(asked at a terminal; required otherwise).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Set up the vault: record it, put brain on PATH, hook git and Claude Code, build the index.

    Running it again changes nothing; with another PATH it moves to that vault.
    """
    from brain.commands.install import choose_vault, install
    from brain.errors import BrainError

    choice = choose_vault(path)
    if choice.needs_init and not init and not as_json and sys.stdin.isatty():
        init = typer.confirm(
            f"{choice.path} is not a git repository. Run `git init` there and use it as the vault?",
            default=False,
            err=True,
        )
        if not init:
            raise BrainError("nothing was installed", "pick another folder, or pass --init")
    result = install(choice, init=init)
    if as_json:
        render.out(render.dumps(dataclasses.asdict(result)))
        return
    render.out("\n".join(_install_lines(result)))


def _install_lines(r: Any) -> list[str]:
    if r.created:
        how = "created: a new git repository with the starter AI/"
    elif r.git_init:
        how = "git init" + (", starter AI/ added" if r.starter else "")
    else:
        how = "starter AI/ added" if r.starter else "used as it is"
    lines = [f"Vault: {r.vault} ({how})"]
    if r.moved_from:
        lines.append(f"Moved from {r.moved_from}; its previous git hooks are back in place")
    lines.append(f"Recorded in {r.recorded}")
    link = r.path_link
    lines.append(
        {
            "created": f"PATH: linked {link.path} -> {link.target}",
            "updated": f"PATH: {link.path} now points at {link.target}",
            "kept": f"PATH: {link.path} -> {link.target} (already there)",
            "on-path": f"PATH: {link.message}",
            "exists": f"PATH: {link.path} exists",
            "failed": "PATH: no link made",
        }.get(link.action, f"PATH: {link.action}")
    )
    if link.message and link.action != "on-path":
        lines.append(f"  note: {link.message}")
    gh = r.git_hooks
    lines.append(f"Git hooks: core.hooksPath = {gh.dir} ({', '.join(gh.hooks)})")
    before = f"another tool's {gh.previous}" if gh.previous else gh.chains
    lines.append(f"  hooks in {before} and the global core.hooksPath still run first")
    ix = r.index
    lines.append(f"Index: {ix.bullets} bullets from {ix.files} files in {ix.ms:.0f} ms")
    cl = r.claude
    if cl.action in ("added", "updated", "present"):
        state = {"added": "added to", "updated": "updated in", "present": "already in"}
        lines.append(
            f"Claude Code: `{cl.command}` at SessionStart (startup, clear, compact) "
            f"{state[cl.action]} {cl.settings}"
        )
    else:
        lines.append(f"Claude Code: {cl.message or cl.action}")
    return lines


@app.command("uninstall")
def uninstall_command(as_json: JsonOpt = False) -> None:
    """Undo `brain install`: git hooks, the SessionStart hook, the PATH link, the record.

    The vault and its history are left alone; a core.hooksPath another tool had set is restored.
    """
    from brain.commands.install import uninstall

    r = uninstall()
    if as_json:
        render.out(render.dumps(dataclasses.asdict(r)))
        return
    lines = []
    for gh in r.git_hooks:
        if gh.action == "removed":
            back = (
                f"core.hooksPath is {gh.previous} again" if gh.previous else "core.hooksPath unset"
            )
            lines.append(f"Git hooks: {gh.vault}: {back}; deleted {len(gh.hooks)} from {gh.dir}")
        elif gh.message:
            lines.append(f"Git hooks: {gh.vault}: {gh.message}")
    if not any(gh.action == "removed" for gh in r.git_hooks):
        lines.append("Git hooks: none of brain's were installed")
    cl = r.claude
    if cl.action == "removed":
        lines.append(f"Claude Code: removed `{cl.command}` from {cl.settings}")
    elif cl.action == "absent":
        lines.append(f"Claude Code: no brain entry in {cl.settings}")
    else:
        lines.append(f"Claude Code: {cl.message or cl.action}")
    link = r.path_link
    if link.action == "removed":
        lines.append(f"PATH: removed {link.path}")
    elif link.message:
        lines.append(f"PATH: {link.message}")
    if r.recorded:
        lines.append(f"Forgot the vault {r.vault} (the record in {r.recorded})")
    if r.indexes:
        lines.append(f"Deleted {len(r.indexes)} index files (brain reindex rebuilds them)")
    if r.vault:
        lines.append(f"The vault {r.vault} and its history are untouched")
    render.out("\n".join(lines))


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
