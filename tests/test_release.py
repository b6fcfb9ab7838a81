"""brain.release: the tag grammar, the checksum file, signatures, the build's version."""

from __future__ import annotations

import base64
import re

import pytest
from conftest import ROOT

from brain import release
from brain.errors import BrainError


@pytest.mark.parametrize(
    ("tag", "ok", "pre"),
    [
        ("dev-2026-09", True, False),
        ("dev-2026-09a", True, False),
        ("dev-2026-12z", True, False),
        ("dev-2026-09-rc1", True, True),
        ("dev-2026-09a-rc12", True, True),
        ("dev-2026-13", False, False),
        ("dev-2026-00", False, False),
        ("dev-2026-9", False, False),
        ("dev-2026-09-rc0", False, False),
        ("dev-2026-09A", False, False),
        ("v2026.09", False, False),
        ("dev-2026-09\n", False, False),
    ],
)
def test_tag_grammar(tag: str, ok: bool, pre: bool) -> None:
    parsed = release.parse_tag(tag)
    assert (parsed is not None) is ok
    if parsed is not None:
        assert parsed.prerelease is pre


def test_tags_order_by_calendar_then_letter_with_candidates_first() -> None:
    order = [
        "dev-2025-12",
        "dev-2026-01-rc1",
        "dev-2026-01-rc2",
        "dev-2026-01",
        "dev-2026-01a",
        "dev-2026-02",
    ]
    parsed = [release.parse_tag(t) for t in order]
    assert all(p is not None for p in parsed)
    assert sorted(parsed) == parsed  # type: ignore[type-var]


def test_wheel_version_is_distinct_per_release() -> None:
    assert release.wheel_version("dev-2026-09a", "0.1.0") == "0.1.0+dev.2026.09a"
    with pytest.raises(BrainError):
        release.wheel_version("latest", "0.1.0")


def test_sums_round_trip_and_refuse_paths() -> None:
    sums = {"b.whl": "1" * 64, "a.json": "2" * 64}
    assert release.parse_sums(release.format_sums(sums)) == sums
    assert release.parse_sums(f"{'3' * 64} *c.whl\n") == {"c.whl": "3" * 64}
    for bad in (f"{'3' * 64}  ../x.whl", f"{'3' * 64}  /etc/passwd", "nonsense"):
        with pytest.raises(BrainError):
            release.parse_sums(bad)


def test_check_digest() -> None:
    sums = {"x": release.sha256(b"data")}
    release.check_digest("x", b"data", sums)
    with pytest.raises(BrainError, match="does not match"):
        release.check_digest("x", b"dat", sums)
    with pytest.raises(BrainError, match="not listed"):
        release.check_digest("y", b"data", sums)


def test_signatures_from_any_listed_key_and_no_other() -> None:
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    def pair() -> tuple[Ed25519PrivateKey, str]:
        k = Ed25519PrivateKey.generate()
        raw = k.public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
        return k, base64.b64encode(raw).decode()

    (old, old_pub), (new, new_pub), (evil, _) = pair(), pair(), pair()
    data = b"sums\n"
    keys = (old_pub, new_pub)  # rotation: both trusted
    assert release.verify_signature(data, old.sign(data), keys) == old_pub
    assert release.verify_signature(data, new.sign(data), keys) == new_pub
    with pytest.raises(BrainError, match="not made by any key"):
        release.verify_signature(data, evil.sign(data), keys)
    with pytest.raises(BrainError, match="not made by any key"):
        release.verify_signature(data + b"x", old.sign(data), keys)


def test_public_keys_are_valid_and_have_a_pem_form() -> None:
    """The installers build each key's PEM for `openssl pkeyutl -pubin` as the DER prefix of an
    Ed25519 key, in base64, followed by the key: that PEM must load as the same key."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    assert release.PUBLIC_KEYS
    for installer in ("install.sh", "install.ps1"):
        text = (ROOT / installer).read_text(encoding="utf-8")
        prefix = re.search(r"(MCow[A-Za-z0-9+/]+)\$key", text)
        assert prefix, installer
        for key in release.PUBLIC_KEYS:
            raw = base64.b64decode(key, validate=True)
            Ed25519PublicKey.from_public_bytes(raw)
            pem = f"-----BEGIN PUBLIC KEY-----\n{prefix[1]}{key}\n-----END PUBLIC KEY-----\n"
            loaded = load_pem_public_key(pem.encode())
            assert isinstance(loaded, Ed25519PublicKey)
            assert loaded.public_bytes_raw() == raw


def test_meta_is_checked() -> None:
    wheel = b"brain_memory-0.1.0+dev.2026.9-py3-none-any.whl"
    good = b'{"tag": "dev-2026-09", "commit": "abc", "wheel": "' + wheel + b'"}'
    assert release.parse_meta(good).tag == "dev-2026-09"
    for bad in (
        b"[]",
        b"{}",
        good.replace(b"dev-2026-09", b"../x"),
        good.replace(b"brain_memory", b"../evil"),
    ):
        with pytest.raises(BrainError):
            release.parse_meta(bad)


def test_base_url_is_overridable_for_mirrors_and_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    assert release.asset_url("x") == f"{release.BASE_URL}/latest/download/x"
    monkeypatch.setenv("BRAIN_RELEASE_URL", "http://127.0.0.1:9/r/")
    assert release.asset_url("x", "dev-2026-09") == "http://127.0.0.1:9/r/download/dev-2026-09/x"


def test_the_hot_path_does_not_import_httpx_for_the_notice() -> None:
    import subprocess
    import sys

    code = (
        "import sys, brain.notice, brain.release; "
        "print('httpx' in sys.modules, 'cryptography' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
