"""Releases: where they live, how they are named, and how a download is proven genuine.

This module is the one place the package names the release base URL and the public keys;
`install.sh` and `install.ps1` repeat both, and tests/test_installer.py checks that all three agree.

A release (a GitHub release under `BASE_URL`) holds three kinds of asset:

- the wheel, `brain_memory-<version>-py3-none-any.whl`;
- `release.json`: `{"tag": ..., "commit": ..., "wheel": ...}`, so that the tag is covered by the
  signature (a replayed older release is then recognised as older and refused);
- `sha256sums.txt` (`sha256sum` format) listing both, and `sha256sums.txt.sig`: the raw 64-byte
  Ed25519 signature of `sha256sums.txt`, made in CI with a key held in the repository's secrets.

`{BASE_URL}/latest/download/NAME` is the newest release that is not a prerelease;
`{BASE_URL}/download/TAG/NAME` a given one. `BRAIN_RELEASE_URL` moves the base (a mirror, or the
tests' server on 127.0.0.1): the URL is not trusted, the keys are, and no environment variable or
file can add a key at run time. Keys are the raw 32-byte Ed25519 public keys in base64; more than
one is listed while a key is being rotated.

Only the standard library is imported here at module level: `brain.notice` runs on every command.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from brain.errors import BrainError
from brain.settings import current
from brain.text import plural

BASE_URL = "https://github.com/brain-memory/brain/releases"

# Raw Ed25519 public keys (base64). Rotation: add the new key, release, then sign with it and
# drop the old one a release later. install.sh and install.ps1 list the same keys.
PUBLIC_KEYS: tuple[str, ...] = ("HkWVkqxcxECfmHUcXujEtsv2KwzDEdE0JbY9n8OXwp4=",)

SUMS = "sha256sums.txt"
SIG = "sha256sums.txt.sig"
META = "release.json"

# dev-YYYY-MM, a letter for a further release in a month, -rcN for a release candidate.
TAG_RE = re.compile(
    r"dev-(?P<year>20\d\d)-(?P<month>0[1-9]|1[0-2])(?P<letter>[a-z])?(?:-rc(?P<rc>[1-9]\d*))?"
)
_WHEEL_RE = re.compile(r"brain_memory-[A-Za-z0-9_.+!]+-py3-none-any\.whl")


def base_url() -> str:
    return (current().release_url or BASE_URL).rstrip("/")


def asset_url(name: str, tag: str | None = None) -> str:
    """The URL of a release asset: of the latest release, or of release `tag`."""
    where = f"download/{tag}" if tag else "latest/download"
    return f"{base_url()}/{where}/{name}"


# --- tags ----------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Tag:
    year: int
    month: int
    letter: int  # 0 for the month's first release, 1 for `a`, ...
    final: int  # 1 for a release, 0 for a release candidate (which sorts before it)
    rc: int
    name: str

    @property
    def prerelease(self) -> bool:
        return not self.final


def parse_tag(text: str) -> Tag | None:
    m = TAG_RE.fullmatch(text)
    if m is None:
        return None
    letter = ord(m["letter"]) - ord("a") + 1 if m["letter"] else 0
    rc = int(m["rc"]) if m["rc"] else 0
    return Tag(int(m["year"]), int(m["month"]), letter, 0 if rc else 1, rc, text)


def wheel_version(tag: str, package_version: str) -> str:
    """The wheel's version for a release: the package version with the tag as its local label,
    so that every release is a distinct version to pip (`0.1.0+dev.2026.09a`)."""
    if parse_tag(tag) is None:
        raise BrainError(f"{tag!r} is not a release tag", "use dev-YYYY-MM[a-z][-rcN]")
    return f"{package_version}+{tag.replace('-', '.')}"


# --- verification --------------------------------------------------------------------------------


def verify_signature(data: bytes, signature: bytes, keys: tuple[str, ...] | None = None) -> str:
    """The key (of `keys`, default `PUBLIC_KEYS`) that signed `data`; a BrainError if none did."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    for key in PUBLIC_KEYS if keys is None else keys:
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(key))
        try:
            public.verify(signature, data)
        except InvalidSignature:
            continue
        return key
    raise BrainError(
        f"the signature on {SUMS} was not made by any key this brain trusts",
        "the release may have been tampered with; nothing was installed. Try again later, or "
        "report it",
    )


def parse_sums(text: str) -> dict[str, str]:
    """`sha256sum` lines -> {file name: hex digest}; a BrainError for anything else."""
    sums: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = re.fullmatch(r"([0-9a-f]{64}) [ *]([^/\\\s][^/\\]*)", line)
        if m is None:
            raise BrainError(f"{SUMS}:{n}: not a `sha256  name` line", "the release is malformed")
        sums[m[2]] = m[1]
    return sums


def format_sums(sums: dict[str, str]) -> str:
    return "".join(f"{digest}  {name}\n" for name, digest in sorted(sums.items()))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_digest(name: str, data: bytes, sums: dict[str, str]) -> None:
    want = sums.get(name)
    if want is None:
        raise BrainError(f"{name} is not listed in {SUMS}", "the release is malformed")
    if sha256(data) != want:
        raise BrainError(
            f"{name} does not match its sha256 in {SUMS} ({plural(len(data), 'byte')} received)",
            "the download was cut short or tampered with; nothing was installed. Try again",
        )


@dataclass(frozen=True)
class ReleaseInfo:
    tag: str
    commit: str
    wheel: str


def parse_meta(data: bytes) -> ReleaseInfo:
    try:
        doc: Any = json.loads(data)
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not all(
        isinstance(doc.get(k), str) for k in ("tag", "commit", "wheel")
    ):
        raise BrainError(f"{META} is not a release description", "the release is malformed")
    if parse_tag(doc["tag"]) is None or _WHEEL_RE.fullmatch(doc["wheel"]) is None:
        raise BrainError(f"{META} names an unexpected tag or wheel", "the release is malformed")
    return ReleaseInfo(doc["tag"], doc["commit"], doc["wheel"])


def installed_tag() -> str:
    """The running build's release tag, or "dev" for a local build."""
    try:
        from brain import _build  # type: ignore[attr-defined]  # written by the release build
    except ImportError:
        return "dev"
    return str(_build.TAG)


# --- fetching from the release server -----------------------------------------------------------

MAX_SMALL = 64 * 1024  # sums, signature, release.json


def timeout() -> float:
    """BRAIN_UPDATE_TIMEOUT, else 30 s; a value that is no positive number is an error naming it."""
    return current().update_timeout


def fetch(client: Any, url: str, limit: int) -> bytes:
    import httpx

    try:
        with client.stream("GET", url) as response:
            if response.status_code != 200:
                raise BrainError(
                    f"{url} answered HTTP {response.status_code}",
                    "try again later; BRAIN_VERSION pins a release for the installers",
                )
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise BrainError(f"{url} is larger than expected", "the release is malformed")
                chunks.append(chunk)
            return b"".join(chunks)
    except httpx.TimeoutException:
        raise BrainError(
            f"the release server did not answer in time ({url})",
            "check the connection and run `brain update` again",
        ) from None
    except httpx.HTTPError as exc:
        raise BrainError(
            f"cannot download {url}: {exc or type(exc).__name__}",
            "check the connection and run `brain update` again",
        ) from None


def client(seconds: float | None = None) -> Any:
    import httpx

    return httpx.Client(
        timeout=httpx.Timeout(timeout() if seconds is None else seconds),
        follow_redirects=True,
        headers={"User-Agent": f"brain/{installed_tag()}"},
    )


@dataclass(frozen=True)
class Offer:
    info: ReleaseInfo
    sums: dict[str, str]


def latest(http: Any) -> Offer:
    """The newest release, its signature and description checked; no wheel is downloaded."""
    sums_bytes = fetch(http, asset_url(SUMS), MAX_SMALL)
    signature = fetch(http, asset_url(SIG), MAX_SMALL)
    verify_signature(sums_bytes, signature)
    try:
        sums = parse_sums(sums_bytes.decode("utf-8"))
    except UnicodeDecodeError:
        raise BrainError(f"{SUMS} is not text", "the release is malformed") from None
    meta = fetch(http, asset_url(META), MAX_SMALL)
    check_digest(META, meta, sums)
    return Offer(parse_meta(meta), sums)
