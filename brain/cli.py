"""Entry point: error handling for every command, and the fast path that serves the hot ones.

`brain find` is the hot path (agents call it many times a session), so `main` parses it (and the
other commands hooks run) here, never importing Typer, from brain.options: the declaration the
Typer commands in `brain.app` are built from. Anything it does not understand (`--help`, a typo)
falls through to the Typer app, which says what is wrong.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from brain import (
    options,
    run,  # first: its start time is the prime deadline's and the daily sweep's
)
from brain.crash import crash_report
from brain.errors import BrainError
from brain.settings import Settings, current, using

if TYPE_CHECKING:
    from types import FrameType


def _fail(message: str, *, as_json: bool) -> None:
    """An error through the output step (brain.present): it may quote argv, a key pasted there
    included, or bytes that are not UTF-8 and ESC."""
    from brain.present import err, error_json, out
    from brain.text import sanitized

    message = sanitized(message)  # escaped in the JSON too, as it always was
    if as_json:
        out(error_json(message))
    else:
        err(f"brain: {message}")


def _daily(**opts: object) -> int | None:
    """`tend --daily` alone, the hooks' quiet sweep; None for any other tend (Typer runs that,
    through the same runner: brain.run.run_tend)."""
    alone = opts["daily"] and not opts["dry_run"] and not opts["as_json"]
    vault = opts["vault"]
    return run.run_daily(vault if isinstance(vault, str) else None) if alone else None


# The commands served without Typer: command -> its runner, which takes the keyword arguments
# brain.options declares (and returns None to leave the command to Typer). Hooks run prime on
# every prompt, settle at every stop, reindex after every commit and sync at every session start:
# without Typer each starts ~60 ms sooner.
_FAST: dict[str, Callable[..., int | None]] = {
    "find": run.run_find,
    "prime": run.run_prime,
    "pack": run.run_pack,
    "sync": run.run_sync,
    "reindex": run.run_reindex,
    "tend": _daily,
    "settle": run.run_settle,  # the stop hook, at every stop
}


class NotFast(Exception):
    """The arguments need Typer (`--help`, a typo): the worker leaves them to a fresh process."""


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:  # a path that is not UTF-8 is printed escaped, never a traceback
        reconfigure(errors="backslashreplace")
    code = execute(args)
    if code in (0, 1):
        update_notice(args)
    sys.exit(code)


def execute(args: list[str], *, typer: bool = True, settings: Settings | None = None) -> int:
    """Run one command and return its exit code: every error is a line (or a JSON object), never
    a traceback. With `typer` False, NotFast instead of anything the fast paths do not handle.
    `settings`: the environment and folder the command runs with (the worker passes its
    client's), else this process's, resolved once for the whole command."""
    with using(current() if settings is None else settings):
        return _execute(args, typer=typer)


def _execute(args: list[str], *, typer: bool) -> int:
    as_json = "--json" in args
    try:
        choice, args = _color(args)
        if choice is not None:
            from brain.present import COLOR_GIVEN

            COLOR_GIVEN[:] = [choice]
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
    finally:
        present = sys.modules.get("brain.present")
        if present is not None:
            present.COLOR_GIVEN.clear()  # this command's: the worker's next one has its own
    return code


def _color(args: list[str]) -> tuple[str | None, list[str]]:
    """`--color auto|always|never` (or `--color=...`) before the command, and the rest: taken
    off here so that the fast paths and Typer alike run the command as if it were not given."""
    if not args or not args[0].startswith("--color"):
        return None, args
    name, eq, value = args[0].partition("=")
    if name != "--color":
        return None, args
    rest = args[1:]
    if not eq:
        value, rest = (rest[0], rest[1:]) if rest else ("", rest)
    from brain.config import COLORS
    from brain.errors import UsageError

    if value.lower() not in COLORS:
        raise UsageError(
            f"--color takes auto, always or never, not {value!r}",
            "e.g. brain --color never find QUERY",
        )
    return value.lower(), rest


def update_notice(args: list[str]) -> None:
    """After the output, at a terminal only: the daily release check and its notice (stderr)."""
    if current().no_update or not sys.stderr.isatty():
        return  # agents, hooks and pipes never pay for the import
    from brain import notice

    notice.after_command(args)


def _dispatch(args: list[str], *, typer: bool = True) -> int:
    if args[:1] == ["merge-driver"] and len(args) == 5:  # git runs it per file merged: no Typer
        from pathlib import Path

        from brain import merge

        return merge.driver(Path(args[1]), Path(args[2]), Path(args[3]), args[4])
    command, rest = (args[0], args[1:]) if args else ("", [])
    # The hooks' and agents' commands parse here, from the declaration their Typer commands are
    # built from (brain.options); what it does not understand falls through to Typer.
    runner = _FAST.get(command)
    if runner is not None:
        opts = options.parse(command, rest)
        code = None if opts is None else runner(**opts)
        if code is not None:
            return code
    # A bullet or query that starts with a dash stays a word, for a subcommand too (`recall
    # search`, and `recall` alone, which is that); a group's own arguments are Typer's to route.
    key, rest = options.command_of(args)
    if key and not options.subcommands(key):
        args = [*key.split(), *options.words_last(key, rest)]
    if not typer:
        raise NotFast
    return _typer(args)


def _typer(args: list[str]) -> int:
    """The Typer app's run of `args`. Typer turns a Ctrl-C outside a command's runner (while it
    parses, or prints help) into a silent exit 130 (typer/core.py `_main`: KeyboardInterrupt ->
    Exit(130), returned as the code when not standalone); one that arrived while Typer ran and
    ended it so is raised again, to end as every other Ctrl-C does (`brain: interrupted`)."""
    import signal

    from brain.app import run as run_typer

    seen: list[int] = []

    def noted(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)
        signal.default_int_handler(signum, frame)  # raises KeyboardInterrupt, as before

    try:  # only the default: an ignored SIGINT (a background job) stays ignored
        previous = signal.getsignal(signal.SIGINT)
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, noted)
    except ValueError:  # not the main thread: no signal reaches it anyway
        previous = None
    try:
        code = run_typer(args)
    finally:
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)
    if seen and code == 130:
        raise KeyboardInterrupt
    return code
