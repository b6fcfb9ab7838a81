"""Entry point: error handling for every command, and the fast path that serves the hot ones.

`brain find` is the hot path (agents call it many times a session), so `main` parses it here with a
small table that mirrors the Typer command's options and never imports Typer; anything the table
does not understand (`--help`, a typo) falls through to the Typer app in `brain.app`, which a
contract test keeps in step with the table.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from brain import run  # first: its start time is the prime deadline's and the daily sweep's
from brain.crash import crash_report
from brain.errors import BrainError

# name -> (destination, takes a value); mirrors `brain.app.find_command`.
FIND_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--limit": ("limit", True),
    "-n": ("limit", True),
    "--budget": ("budget", True),
    "--raw": ("raw", False),
    "--terse": ("terse", False),
    "--json": ("as_json", False),
}


_INT_OPTIONS = frozenset({"limit", "budget"})


def _parse(
    args: Sequence[str], table: dict[str, tuple[str, bool]]
) -> tuple[dict[str, object], list[str]] | None:
    """Parse `args` against a fast-path option table: (options, positional words), or None when
    anything is not understood (`--help`, a typo, a bad number), so that Typer handles it and says
    what is wrong."""
    opts: dict[str, object] = {}
    words: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--":
            words.extend(it)
            break
        name, eq, value = arg.partition("=")
        if not arg.startswith("-") or arg == "-" or (name not in table and _is_text(arg)):
            words.append(arg)
            continue
        spec = table.get(name)
        if spec is None:
            return None
        dest, takes = spec
        if not takes:
            if eq:
                return None
            opts[dest] = True
            continue
        if not eq:
            nxt = next(it, None)
            if nxt is None:
                return None
            value = nxt
        if dest in _INT_OPTIONS:
            try:
                opts[dest] = int(value)
            except ValueError:
                return None
        else:
            opts[dest] = value
    return opts, words


def _is_text(arg: str) -> bool:
    """An argument that starts with a dash but is text, not an option: it holds a space (a
    Markdown bullet `- **handle** — fact`, a query `-- why`); no option name does."""
    return any(c.isspace() for c in arg.partition("=")[0])


def words_last(args: Sequence[str], table: dict[str, tuple[str, bool]]) -> list[str]:
    """`args` for Typer with the positional words after `--` when one of them starts with a dash
    (Click would take `- **handle** — fact` for an unknown option `-`); unchanged when anything
    is not understood (`--help`, a typo), so that Typer says what is wrong."""
    opts: list[str] = []
    words: list[str] = []
    it = iter(args)
    for arg in it:
        name = arg.partition("=")[0]
        if arg == "--":
            words.extend(it)
        elif arg.startswith("-") and name in table:
            opts.append(arg)
            nxt = next(it, None) if table[name][1] and "=" not in arg else None
            if nxt is not None:
                opts.append(nxt)
        elif arg.startswith("-") and arg != "-" and not _is_text(arg):
            return list(args)
        else:
            words.append(arg)
    if not any(w.startswith("-") for w in words):
        return list(args)
    return [*opts, "--", *words]


def parse_find(args: Sequence[str]) -> dict[str, object] | None:
    """The fast path's parse of `brain find ...`, or None to let Typer handle it."""
    parsed = _parse(args, FIND_OPTIONS)
    if parsed is None or not parsed[1]:
        return None
    opts, words = parsed
    opts["query"] = words
    return opts


# name -> (destination, takes a value); mirrors `brain.app.prime_command`. Claude Code runs
# prime on every prompt: it must never import Typer.
PRIME_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--budget": ("budget", True),
    "--json": ("as_json", False),
}


def parse_prime(args: Sequence[str]) -> dict[str, object] | None:
    """The fast path's parse of `brain prime [TEXT] ...`, or None to let Typer handle it."""
    parsed = _parse(args, PRIME_OPTIONS)
    if parsed is None:
        return None
    opts, words = parsed
    opts["prompt"] = words
    return opts


# name -> (destination, takes a value); mirrors `brain.app.pack_command`.
PACK_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--budget": ("budget", True),
    "--fresh": ("fresh", False),
    "--json": ("as_json", False),
}


def parse_pack(args: Sequence[str]) -> dict[str, object] | None:
    """The fast path's parse of `brain pack [PROJECT] ...`, or None to let Typer handle it."""
    parsed = _parse(args, PACK_OPTIONS)
    if parsed is None or len(parsed[1]) > 1:
        return None
    opts, words = parsed
    opts["project"] = words[0] if words else None
    return opts


# name -> (destination, takes a value); mirrors `brain.app.reindex_command`. The post-commit hook
# runs reindex after every commit: without Typer it starts ~60 ms sooner.
REINDEX_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--full": ("full", False),
    "--json": ("as_json", False),
}


def parse_reindex(args: Sequence[str]) -> dict[str, object] | None:
    parsed = _parse(args, REINDEX_OPTIONS)
    if parsed is None or parsed[1]:
        return None
    return parsed[0]


# name -> (destination, takes a value); mirrors `brain.app.propose_command`, whose LINE is a
# Markdown bullet and may start with `- ` (see `words_last`).
PROPOSE_OPTIONS: dict[str, tuple[str, bool]] = {
    "--to": ("to", True),
    "--vault": ("vault", True),
    "--json": ("as_json", False),
}


# name -> (destination, takes a value); mirrors `brain.app.sync_command`. Hooks start a
# background `brain sync` at every session start: without Typer it starts sooner and costs less.
SYNC_OPTIONS: dict[str, tuple[str, bool]] = {
    "--vault": ("vault", True),
    "--json": ("as_json", False),
    "--background": ("background", True),
}


def parse_sync(args: Sequence[str]) -> dict[str, object] | None:
    parsed = _parse(args, SYNC_OPTIONS)
    if parsed is None or len(parsed[1]) > 2:
        return None
    opts, words = parsed
    opts["action"], opts["url"] = [*words, None, None][:2]
    return opts


def _fail(message: str, *, as_json: bool) -> None:
    from brain.text import visible

    message = visible(message)  # an error may quote argv: no raw bytes or ESC on screen
    if as_json:
        from brain.present import error_json, out

        out(error_json(message))
    else:
        sys.stderr.write(f"brain: {message}\n")


def parse_daily(args: list[str]) -> tuple[str | None] | None:
    """`tend --daily [--vault PATH]`, the hooks' quiet sweep, without Typer; None for any other
    form (Typer then parses it and says what is wrong)."""
    vault: str | None = None
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--daily":
            continue
        if arg == "--vault" and rest:
            vault = rest.pop(0)
        elif arg.startswith("--vault="):
            vault = arg.split("=", 1)[1]
        else:
            return None
    return (vault,)


class NotFast(Exception):
    """The arguments need Typer (`--help`, a typo): the worker leaves them to a fresh process."""


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:  # a path that is not UTF-8 is printed escaped, never a traceback
        reconfigure(errors="backslashreplace")
    code = execute(args)
    if code in (0, 1):
        _update_notice(args)
    sys.exit(code)


def execute(args: list[str], *, typer: bool = True) -> int:
    """Run one command and return its exit code: every error is a line (or a JSON object), never
    a traceback. With `typer` False, NotFast instead of anything the fast paths do not handle."""
    as_json = "--json" in args
    try:
        code = _dispatch(args, typer=typer)
    except NotFast:
        raise
    except BrainError as exc:
        _fail(str(exc), as_json=as_json)
        code = exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("brain: interrupted\n")
        code = 130
    except BrokenPipeError:
        # the reader went away (`brain find x | head -1`): not an error worth a word
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    except Exception as exc:  # the last line of defence: no traceback on screen
        report = crash_report(exc, args)
        _fail(
            f"internal error ({type(exc).__name__}: {exc}); details in {report}; please report it",
            as_json=as_json,
        )
        code = 3
    return code


def _update_notice(args: list[str]) -> None:
    """After the output, at a terminal only: the daily release check and its notice (stderr)."""
    if os.environ.get("BRAIN_NO_UPDATE") or not sys.stderr.isatty():
        return  # agents, hooks and pipes never pay for the import
    from brain import notice

    notice.after_command(args)


def _dispatch(args: list[str], *, typer: bool = True) -> int:
    if args[:1] == ["merge-driver"] and len(args) == 5:  # git runs it per file merged: no Typer
        from pathlib import Path

        from brain import merge

        return merge.driver(Path(args[1]), Path(args[2]), Path(args[3]), args[4])
    if args[:1] == ["find"]:
        opts = parse_find(args[1:])
        if opts is not None:
            return run.run_find(**opts)  # type: ignore[arg-type]
    if args[:1] == ["prime"]:
        opts = parse_prime(args[1:])
        if opts is not None:
            return run.run_prime(**opts)  # type: ignore[arg-type]
    if args[:1] == ["pack"]:
        opts = parse_pack(args[1:])
        if opts is not None:
            return run.run_pack(**opts)  # type: ignore[arg-type]
    if args[:1] == ["sync"]:
        opts = parse_sync(args[1:])
        if opts is not None:
            return run.run_sync(**opts)  # type: ignore[arg-type]
    if args == ["settle"]:  # the stop hook, at every stop: no Typer
        return run.run_settle()
    # At a terminal reindex goes through Typer, which draws the progress bar of a long embedding.
    if args[:1] == ["reindex"] and not sys.stderr.isatty():
        opts = parse_reindex(args[1:])
        if opts is not None:
            return run.run_reindex(**opts)  # type: ignore[arg-type]
    if args[:1] == ["tend"] and "--daily" in args:
        daily = parse_daily(args[1:])
        if daily is not None:
            return run.run_daily(daily[0])
    if args[:1] == ["propose"]:
        args = ["propose", *words_last(args[1:], PROPOSE_OPTIONS)]
    if not typer:
        raise NotFast
    from brain.app import run as run_typer

    return run_typer(args)
