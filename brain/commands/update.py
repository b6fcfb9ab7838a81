"""`brain update`: install the newest signed release into the environment brain runs from.

Only an installation made by `install.sh` / `install.ps1` updates itself: they leave a marker,
`brain-install.json`, at the top of the environment (`sys.prefix`), and keep each installed wheel in
`brain-releases/` beside it so that `brain update --rollback` can put the previous one back. A
brain installed by pip, pipx or uv without the installer is refused with the command to use
instead, and a local build (`dev`) never updates itself.

The order matters: the signature on `sha256sums.txt` is checked with the keys compiled into this
brain, then `release.json` (which names the tag and the wheel) and the wheel against that file;
only then does pip run. A failure at any step leaves the installed brain as it was.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain import config, notice, release
from brain.errors import BrainError
from brain.settings import current

MARKER = "brain-install.json"
RELEASES = "brain-releases"
MAX_WHEEL = 64 * 1024 * 1024
PROJECT = "brain-memory"


@dataclass(frozen=True)
class UpdateResult:
    action: str  # "updated" | "current" | "available" | "rolled-back"
    previous: str  # the tag installed before
    current: str  # the tag installed now (or, for "available", the one on offer)
    wheel: str | None  # the wheel installed, or on offer; None when nothing is newer
    check: str | None  # what `brain doctor` (else `brain version`) of the new install printed
    # (None when nothing was installed, or it printed nothing)
    check_ok: bool | None  # None when nothing was installed, so nothing checked


# --- where brain was installed from --------------------------------------------------------------


def marker_path() -> Path:
    return Path(sys.prefix) / MARKER


def read_marker() -> dict[str, Any] | None:
    try:
        doc = json.loads(marker_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _write_marker(doc: dict[str, Any]) -> None:
    from brain.files import write_atomic

    write_atomic(marker_path(), json.dumps(doc, indent=2) + "\n")


def other_manager_hint() -> str:
    """The command that updates a brain someone else installed."""
    prefix = sys.prefix.replace("\\", "/")
    if "/pipx/" in prefix:
        return f"it was installed by pipx: run `pipx upgrade {PROJECT}`"
    if "/uv/tools/" in prefix or "/uv/tool/" in prefix:
        return f"it was installed by uv: run `uv tool upgrade {PROJECT}`"
    if sys.prefix == sys.base_prefix:
        return f"update it the way you installed it (e.g. `pip install -U {PROJECT}`)"
    return f"run `{sys.executable} -m pip install -U {PROJECT}`, or reinstall with install.sh"


def _refuse_unmanaged(tag: str) -> dict[str, Any]:
    if release.parse_tag(tag) is None:
        raise BrainError(
            "this is a local build (dev); it never updates itself",
            "pull the checkout and run its ./install.sh again",
        )
    marker = read_marker()
    if marker is None:
        raise BrainError(
            f"brain in {sys.prefix} was not installed by brain's installer", other_manager_hint()
        )
    return marker


# --- fetching ------------------------------------------------------------------------------------


def newer(offer: str, installed: str) -> bool:
    a, b = release.parse_tag(offer), release.parse_tag(installed)
    return a is not None and b is not None and not a.prerelease and a > b


# --- installing ----------------------------------------------------------------------------------


def _pip(wheel: Path, marker: dict[str, Any]) -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return config.python_command(
            "pip", "install", "-q", "--disable-pip-version-check", str(wheel)
        )
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip", "install", "-q", "--python", sys.executable, str(wheel)]
    how = marker.get("method", "venv")
    raise BrainError(
        f"the environment {sys.prefix} has no pip (installed with {how}) and uv is not on PATH",
        "run the installer again: it installs the newest release",
    )


def _install(wheel: Path, marker: dict[str, Any]) -> None:
    proc = subprocess.run(_pip(wheel, marker), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BrainError(
            f"pip could not install {wheel.name}: {last}",
            "the installed brain is unchanged; run `brain update` again later",
        )


def _check_new() -> tuple[str, bool]:
    """Run `brain doctor` from the new installation (`brain version` where it has no doctor)."""
    env = current().child_env(BRAIN_NO_UPDATE="1")
    out = ""
    for args in (["doctor"], ["version"]):
        proc = subprocess.run(
            config.python_command("brain", *args),
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if proc.returncode == 2 and "No such command" in proc.stderr:
            continue
        out = (proc.stdout + proc.stderr).strip()
        return out, proc.returncode == 0
    return out, False


def _entry(tag: str, wheel: Path, digest: str) -> dict[str, str]:
    return {"tag": tag, "wheel": str(wheel), "sha256": digest}


def _prune(folder: Path, keep: set[str]) -> None:
    for path in folder.glob("*.whl"):
        if str(path) not in keep:
            with contextlib.suppress(OSError):
                path.unlink()


def update(*, check_only: bool = False) -> UpdateResult:
    tag = release.installed_tag()
    marker = _refuse_unmanaged(tag)
    with release.client() as http:
        offer = release.latest(http)
        info = offer.info
        notice.remember_latest(info.tag)
        if not newer(info.tag, tag):
            return UpdateResult("current", tag, tag, None, None, None)
        if check_only:
            return UpdateResult("available", tag, info.tag, info.wheel, None, None)
        data = release.fetch(http, release.asset_url(info.wheel, info.tag), MAX_WHEEL)
    release.check_digest(info.wheel, data, offer.sums)
    from brain.files import write_atomic

    folder = Path(sys.prefix) / RELEASES
    wheel = folder / info.wheel
    write_atomic(wheel, data)
    _install(wheel, marker)
    current = marker.get("current")
    marker["previous"] = current if isinstance(current, dict) else None
    marker["current"] = _entry(info.tag, wheel, offer.sums[info.wheel])
    marker["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    _write_marker(marker)
    _prune(folder, {str(e.get("wheel")) for e in (marker["current"], marker["previous"]) if e})
    out, ok = _check_new()
    return UpdateResult("updated", tag, info.tag, info.wheel, out or None, ok)


def rollback() -> UpdateResult:
    tag = release.installed_tag()
    marker = _refuse_unmanaged(tag)
    previous = marker.get("previous")
    if not isinstance(previous, dict) or not previous.get("wheel"):
        raise BrainError(
            "there is no previous version to go back to",
            "`brain update --rollback` works after a `brain update`",
        )
    wheel = Path(str(previous["wheel"]))
    try:
        data = wheel.read_bytes()
    except OSError as exc:
        raise BrainError(
            f"the previous version's wheel {wheel} cannot be read: {exc.strerror}",
            "reinstall with the installer and BRAIN_VERSION=<tag>",
        ) from None
    if release.sha256(data) != previous.get("sha256"):
        raise BrainError(
            f"{wheel} changed since it was installed",
            "reinstall with the installer and BRAIN_VERSION=<tag>",
        )
    _install(wheel, marker)
    marker["previous"], marker["current"] = marker.get("current"), previous
    marker["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    _write_marker(marker)
    notice.skip(tag)
    out, ok = _check_new()
    back = str(previous.get("tag", ""))
    return UpdateResult("rolled-back", tag, back, wheel.name, out or None, ok)
