"""`brain secrets` reads every file by its bytes: a name that is not UTF-8, a binary file, a
compressed file, a zip's members, a PDF's streams; what it cannot read is named, never clean.

Credentials are built at run time from a seeded RNG: no token literal lives in this file.
"""

from __future__ import annotations

import binascii
import bz2
import gzip
import io
import lzma
import os
import random
import string
import struct
import subprocess
import time
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest
from conftest import brain, git

from brain import secrets
from brain.secrets_scan import scan

RNG = random.Random(26_002)  # noqa: S311 - reproducible fake credentials, not crypto


def token() -> str:
    body = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "ghp" + "_" + body


def note(secret: str) -> bytes:
    return f"# Deploy\n\nsteps\nthe bot token is {secret}\n".encode()


def found(data: bytes, path: str = "f") -> list[tuple[int | None, str, str | None]]:
    return [(f.line, f.rule, f.inside) for f, _ in secrets.scan_data(data, path).findings]


def write_bytes_name(folder: Path, name: bytes, data: bytes) -> None:
    with open(os.fsencode(folder) + b"/" + name, "wb") as fh:  # noqa: PTH123 - a bytes name
        fh.write(data)


@pytest.fixture
def repo(git_vault: Path) -> Path:
    return git_vault.resolve()


# --- a name that is not UTF-8 (#26 item 2) -------------------------------------------------------


def test_a_staged_file_whose_name_is_not_utf8_is_scanned(repo: Path) -> None:
    """`git diff --cached` gave the name decoded with replacement characters, which `git show`
    could not find: the file was dropped and `--staged` said "no secrets in 0 files"."""
    write_bytes_name(repo / "notes", b"deploy\xff.md", note(token()))
    git(repo, "add", "-A")
    result = scan(repo, staged=True)
    assert not result.ok
    assert [(f.path, f.line, f.rule) for f in result.findings] == [
        ("notes/deploy\udcff.md", 4, "github-token")
    ]
    assert result.files == ("notes/deploy\udcff.md",)
    run = brain("secrets", "--staged", "--vault", str(repo))
    assert run.code == 1
    assert run.out == "notes/deploy\\xff.md:4: github-token (ghp_…(40))\n"


def test_a_file_whose_name_is_not_utf8_is_scanned_in_the_work_tree(repo: Path) -> None:
    """It was named as skipped ("the name is not valid UTF-8"), its content never read."""
    secret = token()
    write_bytes_name(repo / "notes", b"deploy\xff.md", note(secret))
    run = brain("secrets", "--vault", str(repo))
    assert run.code == 1
    assert run.out == "notes/deploy\\xff.md:4: github-token (ghp_…(40))\n"
    assert "not valid UTF-8" not in run.err
    doc = brain("secrets", "--vault", str(repo), "--json").json()
    assert doc["skipped"] == []
    assert secret not in str(doc)


def test_the_pre_commit_hook_blocks_a_credential_in_a_file_named_in_latin1(repo: Path) -> None:
    installed = brain("install", str(repo), "--json")
    assert installed.code == 0, installed
    git(repo, "commit", "-q", "-m", "brain installed", "--allow-empty")
    write_bytes_name(repo / "notes", b"caf\xe9.md", note(token()))
    git(repo, "add", "-A")
    argv = ["git", "-C", str(repo), "commit", "-q", "-m", "deploy notes"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode != 0, done.stderr
    assert "notes/caf\\xe9.md:4: github-token" in done.stderr
    assert "no secrets in" not in done.stderr
    assert (
        b"caf\xe9.md"
        not in subprocess.run(
            ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "-z", "HEAD"],
            capture_output=True,
            check=True,
        ).stdout
    )


def test_a_submodule_staged_is_no_file_to_scan(repo: Path, tmp_path: Path) -> None:
    """A gitlink has no blob: `git cat-file` cannot read it, and it is not named as unread."""
    sub = repo / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    git(sub, "commit", "-q", "--allow-empty", "-m", "x")
    git(repo, "add", "sub")
    result = scan(repo, staged=True)
    assert (result.ok, result.files, result.skipped) == (True, (), ())


# --- binary files ---------------------------------------------------------------------------------


def test_a_binary_file_is_read_by_its_runs_of_text() -> None:
    secret = token()
    data = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\1" + b"\n" + b"tEXt token=" + secret.encode() + b"\0"
    line = data[: data.index(b"tEXt")].count(b"\n") + 1  # as `grep -an` counts
    assert found(data) == [(line, "github-token", None)]
    # the bytes around a run end its value: no secret is read across them
    assert found(b"\0\0password=\xffhunter2X\x01\n") == []


def test_utf16_text_with_a_byte_order_mark_is_read_as_text() -> None:
    data = ("\ufeff" + note(token()).decode()).encode("utf-16-le")
    assert data[:2] == b"\xff\xfe"
    assert found(data) == [(4, "github-token", None)]


# --- compressed files -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "compress"),
    [("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress)],
)
def test_a_compressed_file_is_read_decompressed(kind: str, compress: object) -> None:
    assert callable(compress)
    data = compress(note(token()))
    assert found(data, "backup.md.gz") == [(4, "github-token", kind)]
    assert secrets.scan_data(data, "x").unscanned == ""


def test_gzip_streams_one_after_another_are_all_read() -> None:
    data = gzip.compress(b"clean\n") + gzip.compress(note(token()))
    assert found(data) == [(5, "github-token", "gzip")]


def test_a_cut_or_corrupt_gzip_is_scanned_as_far_as_it_goes_and_named() -> None:
    secret = token()
    whole = gzip.compress(note(secret) + bytes(RNG.randrange(256) for _ in range(200_000)))
    cut = secrets.scan_data(whole[: len(whole) // 2], "cut.gz")
    assert [(f.line, f.inside) for f, _ in cut.findings] == [(4, "gzip")]
    assert cut.unscanned == "gzip: cut short; scanned as far as it goes"
    broken = secrets.scan_data(b"\x1f\x8b\x08\0\0\0\0\0\0\x03not deflate at all", "bad.gz")
    assert broken.unscanned == "gzip: corrupt; scanned as far as it could be read"


# --- zip files ------------------------------------------------------------------------------------


def zipped(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def test_zip_members_are_read_and_named() -> None:
    secret = token()
    data = zipped(
        {
            "notes/deploy.md": note(secret),
            "notes/clean.md": b"nothing here\n",
            "old/backup.md.gz": gzip.compress(b"x\n" + note(token())),
            f"keys/{token()}.txt": b"named after a key",
        }
    )
    assert found(data, "notes.zip") == [
        (4, "github-token", "notes/deploy.md"),
        (5, "github-token", "old/backup.md.gz > gzip"),
        (None, "github-token", "keys/ghp_…(40).txt"),  # the member's name holds one: masked
    ]


def test_a_stored_member_is_reported_once_inside_not_again_in_the_raw_bytes() -> None:
    data = zipped({"a.md": note(token())}, zipfile.ZIP_STORED)
    assert found(data) == [(4, "github-token", "a.md")]


def test_a_docx_is_a_zip_and_its_text_is_read() -> None:
    secret = token()
    body = f"<w:document><w:t>the bot token is {secret}</w:t></w:document>".encode()
    data = zipped({"[Content_Types].xml": b"<Types/>", "word/document.xml": body})
    assert found(data, "plan.docx") == [(1, "github-token", "word/document.xml")]


def encrypted_zip(name: str, plain: bytes, password: bytes) -> bytes:
    """A zip whose one member is deflated, then encrypted with PKWARE's traditional cipher
    (APPNOTE.TXT §6.1), as `zip -P` writes it; Python's zipfile reads it back with the password."""
    table = [0] * 256
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table[n] = c
    keys = [0x12345678, 0x23456789, 0x34567890]

    def crc(value: int, byte: int) -> int:
        return (value >> 8) ^ table[(value ^ byte) & 0xFF]

    def update(byte: int) -> None:
        keys[0] = crc(keys[0], byte)
        keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        keys[2] = crc(keys[2], keys[1] >> 24)

    def encrypt(data: bytes) -> bytes:
        out = bytearray()
        for byte in data:
            temp = (keys[2] | 2) & 0xFFFF
            out.append(byte ^ (((temp * (temp ^ 1)) >> 8) & 0xFF))
            update(byte)
        return bytes(out)

    for byte in password:
        update(byte)
    check = binascii.crc32(plain)
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = deflater.compress(plain) + deflater.flush()
    data = encrypt(bytes(RNG.randrange(256) for _ in range(11)) + bytes([check >> 24])) + encrypt(
        body
    )
    raw = name.encode()
    common = struct.pack("<HHHHHIII", 20, 1, 8, 0, 0, check, len(data), len(plain))
    local = b"PK\x03\x04" + common + struct.pack("<HH", len(raw), 0) + raw
    central = b"PK\x01\x02" + struct.pack("<H", 20) + common
    # name, extra and comment lengths, disk, attributes, and where the local header is (0)
    central += struct.pack("<HHHHHII", len(raw), 0, 0, 0, 0, 0, 0) + raw
    end = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(data), 0
    )
    return local + data + central + end


def test_an_encrypted_member_is_named_as_not_scanned() -> None:
    secret = token()
    data = encrypted_zip("vault/deploy.md", note(secret), b"hunter2")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:  # a real encrypted zip
        assert archive.read("vault/deploy.md", pwd=b"hunter2") == note(secret)
        with pytest.raises(RuntimeError, match="password required"):
            archive.read("vault/deploy.md")
    read = secrets.scan_data(data, "backup.zip")
    assert read.findings == ()
    assert read.unscanned == "vault/deploy.md: encrypted; not scanned"


def test_a_zip_that_cannot_be_opened_is_read_by_its_bytes_and_named() -> None:
    secret = token()
    data = b"PK\x03\x04" + b"\0" * 26 + note(secret)  # a local header, no central directory
    read = secrets.scan_data(data, "broken.zip")
    assert [(f.line, f.inside) for f, _ in read.findings] == [(4, None)]
    assert read.unscanned.startswith("zip: not a zip that can be opened")


def test_a_zip_bomb_costs_at_most_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten zips of twenty 4 MB members each, nested: 800 MB from a few kB. Reading stops at the
    cap, within bounded memory, and the file is named as not scanned whole."""
    monkeypatch.setattr(secrets, "MAX_INFLATED", 16 << 20)
    inner = zipped({f"zero{n}.bin": bytes(4 << 20) for n in range(20)})
    bomb = zipped({f"layer{n}.zip": inner for n in range(10)})
    assert len(bomb) < 100_000
    tracemalloc.start()
    started = time.perf_counter()
    try:
        read = secrets.scan_data(bomb, "bomb.zip")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 20
    assert peak < 8 * (16 << 20)
    assert "decompresses past the" in read.unscanned
    assert read.unscanned.count("past the") == 1  # named once, where the cap was reached


def test_nesting_is_bounded() -> None:
    data = note(token())
    for _ in range(secrets.MAX_NESTING + 1):
        data = gzip.compress(data)
    read = secrets.scan_data(data, "deep.gz")
    assert read.findings == ()
    assert read.unscanned == "gzip > gzip > gzip > gzip: nested more than 3 deep; not opened"


# --- PDF ------------------------------------------------------------------------------------------


def pdf(*streams: bytes, encrypt: bool = False) -> bytes:
    """A PDF whose content streams are FlateDecode'd, as most writers make them."""
    out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
    for number, content in enumerate(streams, 4):
        packed = zlib.compress(content)
        out += b"%d 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % (number, len(packed))
        out += packed + b"\nendstream\nendobj\n"
    trailer = b"/Encrypt 9 0 R " if encrypt else b""
    return out + b"trailer\n<< /Root 1 0 R " + trailer + b">>\n%%EOF\n"


def test_a_pdf_stream_is_inflated_and_read() -> None:
    secret = token()
    text = b"BT /F1 12 Tf 72 712 Td (the bot token is " + secret.encode() + b") Tj ET"
    data = pdf(b"BT (cover page) Tj ET", text)
    assert secret.encode() not in data
    assert found(data, "notes.pdf") == [(1, "github-token", "PDF object 5")]


def test_text_a_pdf_shows_in_kerned_pieces_is_joined() -> None:
    secret = token()
    pieces = b"(" + b")-20(".join(secret[i : i + 7].encode() for i in range(0, 40, 7)) + b")"
    text = b"BT /F1 12 Tf\n(cover) Tj\n[(the bot token is )" + pieces + b"] TJ ET"
    assert found(pdf(text), "notes.pdf") == [(3, "github-token", "PDF object 4")]


def test_a_pdf_stream_that_does_not_inflate_and_an_encrypted_pdf_are_named() -> None:
    data = pdf(b"BT (fine) Tj ET").replace(b"stream\nx", b"stream\n\0")
    assert secrets.scan_data(data, "n.pdf").unscanned == (
        "PDF object 4: does not inflate (corrupt); not scanned"
    )
    locked = secrets.scan_data(pdf(b"BT (x) Tj ET", encrypt=True), "n.pdf")
    assert locked.unscanned == "PDF: encrypted; its streams not scanned"


def test_a_note_about_pdfs_is_no_pdf() -> None:
    text = b"# PDF\n\nEvery PDF starts with %PDF-1.7; /Encrypt in its trailer means a password.\n"
    assert secrets.scan_data(text, "notes/pdf.md") == secrets.DataScan((), "")


# --- the command ----------------------------------------------------------------------------------


def test_the_command_names_what_it_could_not_scan_and_is_not_clean(repo: Path) -> None:
    secret = token()
    (repo / "backup.md.gz").write_bytes(gzip.compress(note(secret)))
    (repo / "old.zip").write_bytes(encrypted_zip("a.md", b"x", b"pw"))
    (repo / "notes.pdf").write_bytes(pdf(b"BT (token " + token().encode() + b") Tj ET"))
    run = brain("secrets", "--vault", str(repo))
    assert run.code == 1
    assert run.out.splitlines() == [
        "backup.md.gz[gzip]:4: github-token (ghp_…(40))",
        "notes.pdf[PDF object 4]:1: github-token (ghp_…(40))",
    ]
    assert run.err.splitlines()[0] == "old.zip: a.md: encrypted; not scanned"
    assert "1 file not scanned whole (above)" in run.err.splitlines()[-1]
    doc = brain("secrets", "--vault", str(repo), "--json").json()
    assert doc["not_scanned"] == [
        {"path": "old.zip", "line": None, "message": "a.md: encrypted; not scanned"}
    ]
    assert [f["inside"] for f in doc["findings"]] == ["gzip", "PDF object 4"]
    assert secret not in run.out + run.err + str(doc)
    (repo / "backup.md.gz").unlink()
    (repo / "notes.pdf").unlink()
    only_unread = brain("secrets", "--vault", str(repo))
    assert only_unread.code == 1  # nothing found, but not everything read: never clean
    assert "1 file not scanned whole" in only_unread.err.splitlines()[-1]


def test_staged_reads_a_compressed_file_too(repo: Path) -> None:
    (repo / "dump.sql.xz").write_bytes(lzma.compress(note(token())))
    git(repo, "add", "-A")
    result = scan(repo, staged=True)
    assert [(f.path, f.line, f.inside) for f in result.findings] == [("dump.sql.xz", 4, "xz")]


def test_sync_holds_back_a_credential_in_a_file_named_in_latin1(repo: Path) -> None:
    """Sync's write-down scans what it staged (`scan(vault, staged=True)`): the file is left
    uncommitted and named, the pass ends with its line (no crash on the name)."""
    write_bytes_name(repo / "notes", b"caf\xe9.md", note(token()))
    (repo / "notes" / "fine.md").write_text("# Fine\n\nNothing to hide.\n", "utf-8")
    run = brain("sync", "--vault", str(repo), "--json")
    assert run.code == 1, run
    doc = run.json()
    assert [w.split(": looks like")[0] for w in doc["waiting"]] == [
        "notes/caf\\xe9.md:4"
    ]  # the byte shown escaped
    tree = git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert "notes/fine.md" in tree
    assert "caf" not in tree
    again = brain("sync", "status", "--vault", str(repo))
    assert again.code == 0, again


def test_sync_holds_back_a_file_whose_name_holds_a_credential(repo: Path) -> None:
    """The name's finding carried the masked name, which named no file to leave uncommitted: the
    file went with the pass, its name and so the credential to the remote."""
    in_name = token()
    (repo / "notes" / f"key-{in_name}.md").write_text("nothing in it\n", "utf-8")
    run = brain("sync", "--vault", str(repo), "--json")
    assert run.code == 1, run
    assert "github-token" in " ".join(run.json()["waiting"])
    assert in_name not in git(repo, "log", "--all", "--format=%B", "--name-only")
    assert f"?? notes/key-{in_name}.md" in git(repo, "status", "--porcelain")
