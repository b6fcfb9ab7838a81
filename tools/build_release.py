#!/usr/bin/env python3
"""Build a release: the wheel, release.json, sha256sums.txt and its Ed25519 signature.

    tools/build_release.py build --tag dev-2026-09 --out dist      # key from $BRAIN_SIGNING_KEY
    tools/build_release.py build --tag dev-2026-09 --key-file key.pem --out dist
    tools/build_release.py check-tag dev-2026-09-rc1                # prints release|prerelease
    tools/build_release.py keygen --out key.pem                    # prints the public key

The checkout is copied to a temporary folder and the copy gets `brain/_build.py` (TAG and COMMIT)
and a version with the tag as its local label, so the checkout itself is never changed. The
signature is checked against the public keys compiled into the built wheel: a release signed with
a key its own brain does not trust fails here, not on users' machines. `--public-key` replaces
those keys in the copy (tests build a release that trusts their throwaway key this way; nothing at
run time can).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from brain import release  # noqa: E402

COPY = (
    *("brain", "hooks", "starter", "bin", "docs"),
    *("pyproject.toml", "setup.py", "README.md", "LICENSE"),
)


def _commit() -> str:
    def git(*args: str) -> str:
        proc = subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
        )
        return proc.stdout.strip() if proc.returncode == 0 else ""

    head = git("rev-parse", "--short=12", "HEAD")
    if not head:
        return ""
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def _signing_key(path: str | None) -> bytes:
    if path:
        return Path(path).read_bytes()
    text = os.environ.get("BRAIN_SIGNING_KEY", "")
    if not text.strip():
        sys.exit("build_release: no signing key: set BRAIN_SIGNING_KEY (PEM) or pass --key-file")
    return text.encode()


def _sign(pem: bytes, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        sys.exit("build_release: the signing key is not an Ed25519 private key")
    return key.sign(data)


def _prepare(src: Path, tag: str, commit: str, keys: list[str] | None) -> None:
    for name in COPY:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif path.exists():
            shutil.copy2(path, src / name)
    (src / "brain" / "_build.py").write_text(
        f'"""Written by tools/build_release.py."""\n\nTAG = {tag!r}\nCOMMIT = {commit!r}\n',
        encoding="utf-8",
    )
    init = src / "brain" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    m = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if m is None:
        sys.exit("build_release: brain/__init__.py has no __version__ line")
    version = release.wheel_version(tag, m[1])
    init.write_text(text.replace(m[0], f'__version__ = "{version}"'), encoding="utf-8")
    if keys is not None:
        rel = src / "brain" / "release.py"
        text = rel.read_text(encoding="utf-8")
        new, n = re.subn(
            r"^PUBLIC_KEYS: tuple\[str, \.\.\.\] = \(.*?\)$",
            f"PUBLIC_KEYS: tuple[str, ...] = {tuple(keys)!r}",
            text,
            flags=re.MULTILINE | re.DOTALL,
        )
        if n != 1:
            sys.exit("build_release: cannot find PUBLIC_KEYS in brain/release.py")
        rel.write_text(new, encoding="utf-8")


def _compiled_keys(src: Path) -> tuple[str, ...]:
    text = (src / "brain" / "release.py").read_text(encoding="utf-8")
    m = re.search(r"^PUBLIC_KEYS: tuple\[str, \.\.\.\] = (\(.*?\))$", text, re.M | re.S)
    assert m is not None
    import ast

    keys = ast.literal_eval(m[1])
    return tuple(keys)


def build(tag: str, out: Path, key_pem: bytes, commit: str, keys: list[str] | None) -> Path:
    if release.parse_tag(tag) is None:
        sys.exit(f"build_release: {tag!r} is not a release tag (dev-YYYY-MM[a-z][-rcN])")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="brain-release-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        _prepare(src, tag, commit, keys)
        wheels = Path(tmp) / "wheels"
        pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q"]
        # One wheel for every platform: `brain` as an entry point (Windows needs its brain.exe);
        # setup.py otherwise gives POSIX builds the script that imports nothing else.
        subprocess.run(
            [*pip, "--disable-pip-version-check", "-w", str(wheels), str(src)],
            check=True,
            env={**os.environ, "BRAIN_UNIVERSAL_WHEEL": "1"},
        )
        (wheel,) = wheels.glob("brain_memory-*.whl")
        trusted = _compiled_keys(src)
        shutil.copy2(wheel, out / wheel.name)
    meta = json.dumps({"tag": tag, "commit": commit, "wheel": wheel.name}, indent=2) + "\n"
    (out / release.META).write_text(meta, encoding="utf-8")
    sums = {name: release.sha256((out / name).read_bytes()) for name in (wheel.name, release.META)}
    data = release.format_sums(sums).encode()
    signature = _sign(key_pem, data)
    release.verify_signature(data, signature, trusted)  # a key the built brain trusts, or exit
    (out / release.SUMS).write_bytes(data)
    (out / release.SIG).write_bytes(signature)
    return out / wheel.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build and sign a release into --out")
    b.add_argument("--tag", required=True)
    b.add_argument("--out", default="dist")
    b.add_argument("--key-file", help="Ed25519 private key (PEM); default $BRAIN_SIGNING_KEY")
    b.add_argument("--commit", help="default: this checkout's commit (-dirty if unclean)")
    b.add_argument("--public-key", action="append", help="replace the compiled-in keys (tests)")
    c = sub.add_parser("check-tag", help="print release or prerelease; exit 1 for a bad tag")
    c.add_argument("tag")
    k = sub.add_parser("keygen", help="write a new private key; print its public key")
    k.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    if args.command == "check-tag":
        parsed = release.parse_tag(args.tag)
        if parsed is None:
            print(f"{args.tag!r} is not a release tag (dev-YYYY-MM[a-z][-rcN])", file=sys.stderr)
            return 1
        print("prerelease" if parsed.prerelease else "release")
        return 0
    if args.command == "keygen":
        from cryptography.hazmat.primitives import serialization as ser
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption())
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        raw = key.public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
        print(base64.b64encode(raw).decode())
        return 0
    commit = _commit() if args.commit is None else args.commit
    wheel = build(args.tag, Path(args.out), _signing_key(args.key_file), commit, args.public_key)
    print(f"built {wheel} and signed {Path(args.out) / release.SUMS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
