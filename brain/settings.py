"""brain's settings, resolved in one place: the environment (every BRAIN_* variable is read here
and nowhere else), the user's `brain.yaml` and a vault's `AI/config.yaml` (both YAML, both read
by pyyaml, and only when asked: the hot path never imports a YAML parser it does not need).

A `Settings` is one frozen snapshot of an environment and a current folder. A command reads
`current()`: in a process of its own that is the process's environment and folder; in the
worker (brain/worker.py) the forwarded command runs `with using(Settings(client_env, cwd))`, a
context variable of that thread alone, so that the worker's own environment and folder, which
every other request reads, never change per request.

Light on purpose: the thin client (brain/thin.py) reads its variables through it too, before any
library is imported, so it imports only builtin modules (brain.errors only to raise one, pyyaml
only to read a file): `dataclasses` alone would cost it 7 ms and `pathlib` 3, so the frozen
object is a class with slots, and paths are made where they are asked.
"""

from __future__ import annotations

import _thread
import os

TYPE_CHECKING = False  # typing's own costs the thin client an import; mypy reads this name alike
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

_INF = float("inf")

# The words that say no to a switch (BRAIN_SYNC=off, `sync = false` in git's config, and
# BRAIN_NO_TEND=0, which leaves the sweep on).
OFF = frozenset({"off", "0", "false", "no"})
COLORS = ("auto", "always", "never")  # `--color` and BRAIN_COLOR
REVIEW_MODES = ("before", "after")
VAULT_CONFIG = "AI/config.yaml"


class Settings:
    """One environment and current folder, as a command sees them; the files it names are read
    once, when first asked, and kept with it."""

    __slots__ = ("_files", "cwd", "env")
    env: Mapping[str, str]
    cwd: str  # the command's current folder, absolute
    _files: dict[str, tuple[str, dict[str, Any]]]  # file -> (its version, its settings)

    def __init__(self, env: Mapping[str, str], cwd: str) -> None:
        object.__setattr__(self, "env", dict(env))  # a copy: what the process does later is not it
        object.__setattr__(self, "cwd", os.fspath(cwd))
        object.__setattr__(self, "_files", {})

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Settings are frozen: {name} cannot be set")

    def __repr__(self) -> str:
        return f"Settings(cwd={self.cwd!r}, {len(self.env)} variables)"

    # --- the environment ------------------------------------------------------------------------

    def get(self, name: str) -> str:
        """The variable `name`, stripped; '' when unset."""
        return self.env.get(name, "").strip()

    def number(self, name: str, default: float) -> float:
        """A positive number from the variable `name`; `default` when it is unset or empty. Any
        other value is an error naming it (a typo would otherwise tune nothing without a word)."""
        said = self.get(name)
        if not said:
            return default
        try:
            value = float(said)
        except ValueError:
            value = _INF
        if not 0 < value < _INF:
            from brain.errors import BrainError

            raise BrainError(
                f"{name}={said!r} is not a positive number",
                f"set it to one (e.g. {name}={default:g}), or unset it for {default:g}",
            )
        return value

    def number_or_default(self, name: str, default: float) -> tuple[float, str]:
        """`number`, for a process that must go on whatever the variable says (the worker, prime
        within its deadline): the default and the error's line when the value is bad."""
        from brain.errors import BrainError

        try:
            return self.number(name, default), ""
        except BrainError as exc:
            return default, f"{exc}; {default:g} is used"

    def switched_off(self, name: str) -> bool:
        """The variable says no (`off`, `0`, `false`, `no`)."""
        return self.get(name).lower() in OFF

    def switched_on(self, name: str) -> bool:
        """The variable is set to anything but a no (BRAIN_NO_TEND=1; BRAIN_NO_TEND=0 is off)."""
        said = self.get(name).lower()
        return bool(said) and said not in OFF

    @property
    def vault(self) -> str:
        """BRAIN_VAULT as set (not stripped: a path is taken as written); '' when unset."""
        return self.env.get("BRAIN_VAULT", "")

    @property
    def state(self) -> str:
        """BRAIN_STATE: brain's state folder elsewhere; '' for the usual place."""
        return self.get("BRAIN_STATE")

    @property
    def embed(self) -> str:
        """BRAIN_EMBED: the embedding provider (and model) this machine asks for; ''."""
        return self.get("BRAIN_EMBED")

    @property
    def worker(self) -> bool:
        """Whether commands may use (and start) the warm worker: BRAIN_WORKER=0 says not."""
        return self.env.get("BRAIN_WORKER", "1") != "0"

    def worker_idle(self, default: float) -> tuple[float, str]:
        """BRAIN_WORKER_IDLE: seconds an idle worker waits before it exits (and the line saying
        a bad value was set aside: a worker must start whatever the variable says)."""
        return self.number_or_default("BRAIN_WORKER_IDLE", default)

    @property
    def no_update(self) -> bool:
        """BRAIN_NO_UPDATE: no daily release check, no notice."""
        return bool(self.env.get("BRAIN_NO_UPDATE"))

    @property
    def sync_off(self) -> bool:
        """BRAIN_SYNC=off (or another no): sync stops on this machine."""
        return self.switched_off("BRAIN_SYNC")

    @property
    def tend_off(self) -> bool:
        """BRAIN_NO_TEND: the hooks start no daily sweep. Unset, empty or a no: the sweep runs."""
        return self.switched_on("BRAIN_NO_TEND")

    @property
    def color(self) -> str:
        """BRAIN_COLOR (`auto` when unset); any other value is an error naming it."""
        said = self.get("BRAIN_COLOR")
        if not said:
            return "auto"
        if said.lower() not in COLORS:
            from brain.errors import BrainError

            raise BrainError(
                f"BRAIN_COLOR={said!r} is not auto, always or never",
                "set one of them, or unset BRAIN_COLOR",
            )
        return said.lower()

    @property
    def review(self) -> str | None:
        """BRAIN_REVIEW (`before` or `after`): this machine's review mode over the vault's; None
        when unset. Any other value is an error naming it: a typo would otherwise serve, or
        hide, unreviewed proposals without a word."""
        said = self.get("BRAIN_REVIEW")
        if not said:
            return None
        if said.lower() not in REVIEW_MODES:
            from brain.errors import BrainError

            raise BrainError(
                f"BRAIN_REVIEW={said!r} is not a review mode",
                "set BRAIN_REVIEW=before or BRAIN_REVIEW=after, or unset it to follow the "
                f"vault's {VAULT_CONFIG}",
            )
        return said.lower()

    @property
    def caller(self) -> str:
        """BRAIN_CALLER: who runs brain, as a script or agent names itself; ''."""
        return self.env.get("BRAIN_CALLER", "")

    @property
    def session(self) -> str:
        """BRAIN_SESSION: the agent session brain's lookups count under; ''."""
        return self.env.get("BRAIN_SESSION", "")

    @property
    def bin_dir(self) -> str:
        """BRAIN_BINDIR: where `brain install` links the command; ''."""
        return self.env.get("BRAIN_BINDIR", "")

    @property
    def connect(self) -> str:
        """BRAIN_CONNECT: the remote `brain install` connects the vault to; ''."""
        return self.get("BRAIN_CONNECT")

    @property
    def release_url(self) -> str:
        """BRAIN_RELEASE_URL: where releases are fetched from; ''."""
        return self.env.get("BRAIN_RELEASE_URL", "")

    @property
    def update_timeout(self) -> float:
        """BRAIN_UPDATE_TIMEOUT: seconds a release download may stall (30)."""
        return self.number("BRAIN_UPDATE_TIMEOUT", 30.0)

    def tend_seconds(self, default: float) -> float:
        """BRAIN_TEND_SECONDS: the daily sweep's budget (`default`)."""
        return self.number("BRAIN_TEND_SECONDS", default)

    def prime_budget(self, default: float) -> float:
        """BRAIN_PRIME_BUDGET: the tokens prime may serve per prompt (`default`)."""
        return self.number("BRAIN_PRIME_BUDGET", default)

    def prime_seconds(self, default: float) -> tuple[float, str]:
        """BRAIN_PRIME_DEADLINE: how long after its start prime must have answered; a bad value
        is set aside with its line (prime never fails the prompt it serves)."""
        return self.number_or_default("BRAIN_PRIME_DEADLINE", default)

    @property
    def sync_report(self) -> str:
        """BRAIN_SYNC_REPORT: where the merge driver sync starts appends its clashes; ''."""
        return self.env.get(SYNC_REPORT, "")

    def child_env(self, **extra: str) -> dict[str, str]:
        """The environment for a process a command starts: this one's, with `extra`."""
        return {**self.env, **extra}

    def path(self, given: str | Path) -> Path:
        """`given` with `~` read, relative to this current folder (not the process's)."""
        from pathlib import Path

        text = os.fspath(given)
        home = self.env.get("HOME", "")
        if home and (text == "~" or text.startswith("~/")):  # this HOME, not the process's
            text = home + text[1:]
        path = Path(text).expanduser()
        return path if path.is_absolute() else Path(self.cwd) / path

    # --- the files --------------------------------------------------------------------------------

    def user_file(self, config_dir: Path) -> dict[str, Any]:
        """The user's preferences from `brain.yaml` in `config_dir`; empty when there is none."""

        def read(path: Path) -> dict[str, Any]:
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                return {}
            return read_yaml(path, text)

        return self._file(config_dir / "brain.yaml", read)

    def vault_file(self, vault: Path) -> dict[str, str]:
        """The vault's AI/config.yaml: its top-level settings as text. Missing or unreadable: no
        settings (a machine that cannot read it follows the defaults); not YAML or not a
        mapping: an error naming the file and line."""

        def read(path: Path) -> dict[str, str]:
            from brain.regular import read_regular

            try:
                text = read_regular(path).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                return {}
            data = read_yaml(path, text, "fix it (`key: value` lines)")
            return {str(k): _scalar(v) for k, v in data.items()}

        return self._file(vault / VAULT_CONFIG, read)

    def _file(self, path: Path, read: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
        """`read(path)`, parsed once per version of the file (a command that edits it, `brain
        review after`, reads the new one)."""
        try:
            st = path.stat()
            version = f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"
        except OSError:
            version = "-"
        key = str(path)
        kept = self._files.get(key)
        if kept is None or kept[0] != version:
            kept = self._files[key] = (version, read(path))
        return dict(kept[1])


SYNC_REPORT = "BRAIN_SYNC_REPORT"  # set by sync for the merge driver it starts


def _scalar(value: object) -> str:
    """A setting's value as text (`review: after`, `aliases: apply`); YAML's true/false and
    numbers as they would be written, a nested value as nothing brain reads."""
    if value is None or isinstance(value, dict | list):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_yaml(
    where: str | Path, text: str | bytes, hint: str = "fix the file or delete it"
) -> dict[str, Any]:
    """`text` (of the file `where`) as a YAML mapping, empty for an empty file: brain.yaml and
    AI/config.yaml alike. Not UTF-8, not YAML or not a mapping: an error naming the file and
    line, with `hint` as the next step."""
    import yaml

    from brain.errors import BrainError

    try:
        data = yaml.safe_load(text.decode("utf-8") if isinstance(text, bytes) else text)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        # RecursionError: `[[[[…` nested past Python's stack (a synced AI/config.yaml, a cloned
        # repository's brain.yaml) exited 3 as an internal error from every command
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise BrainError(f"{where}{line} is not valid YAML", hint) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BrainError(f"{where} is not a mapping", hint)
    return data


# The settings `using` installed, per thread (a thread's id: contextvars and threading are
# imports the thin client would pay for; a command's own threads read the process's).
_CURRENT: dict[int, Settings] = {}


def current() -> Settings:
    """The settings of the command running in this thread: those `using` installed, else the
    process's own environment and folder, read now (tests and hooks change them between calls)."""
    found = _CURRENT.get(_thread.get_ident())
    if found is not None:
        return found
    try:
        cwd = os.getcwd()  # noqa: PTH109 (a string: pathlib is not imported here)
    except OSError:  # a folder removed under us: paths relative to it fail where they are used
        cwd = "/"
    return Settings(os.environ, cwd)


class using:
    """`settings` for whatever this thread runs inside the block, and nothing else (a class,
    not contextlib's decorator: the thin client does not import contextlib)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.before: Settings | None = None

    def __enter__(self) -> Settings:
        me = _thread.get_ident()
        self.before = _CURRENT.get(me)
        _CURRENT[me] = self.settings
        return self.settings

    def __exit__(self, *exc: object) -> None:
        me = _thread.get_ident()
        if self.before is None:
            _CURRENT.pop(me, None)
        else:
            _CURRENT[me] = self.before
