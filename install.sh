#!/bin/sh
# brain's installer for Linux and macOS:
#
#   curl -fsSL https://github.com/brain-memory/brain/releases/latest/download/install.sh | sh
#
# Fetches the release (BRAIN_VERSION=dev-2026-09 pins one), checks the wheel's sha256 against the
# release's sha256sums.txt and that file's Ed25519 signature (with openssl, else python3 and
# cryptography, when either can), installs brain into its own environment (uv's tool install where
# uv is on PATH, else a venv in ~/.local/share/brain/venv), and ends with `brain install`, which
# links brain into ~/.local/bin (or BRAIN_BINDIR) and sets up a vault where there is none.
# Run from a checkout (./install.sh), it installs that checkout instead: no network needed.
#
# Options and environment:
#   --no-modify-path, BRAIN_NO_MODIFY_PATH=1   never add the bin folder to a shell profile
#   --version TAG, BRAIN_VERSION=TAG           install this release rather than the latest
#   BRAIN_BINDIR=DIR                           where the `brain` link goes (default ~/.local/bin)
#   BRAIN_PYTHON=python3.12                    the Python for the venv (3.11 or newer)
#   BRAIN_NO_UV=1                              use a venv even where uv is on PATH
#   BRAIN_RELEASE_URL=URL                      another release server (a mirror, or tests)
set -eu

# The release base URL and the public keys: brain/release.py owns them; tests check these agree.
BRAIN_BASE_URL="https://github.com/brain-memory/brain/releases"
BRAIN_PUBLIC_KEYS="HkWVkqxcxECfmHUcXujEtsv2KwzDEdE0JbY9n8OXwp4="

say() { printf 'brain-install: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

MODIFY_PATH=1
case "${BRAIN_NO_MODIFY_PATH:-}" in 1 | true | yes) MODIFY_PATH=0 ;; esac
VERSION="${BRAIN_VERSION:-}"
while [ $# -gt 0 ]; do
    case "$1" in
        --no-modify-path) MODIFY_PATH=0 ;;
        --version) [ $# -ge 2 ] || die "--version needs a tag, e.g. --version dev-2026-09"; VERSION="$2"; shift ;;
        --version=*) VERSION="${1#--version=}" ;;
        -h | --help) sed -n '2,21p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done

DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
VENV="$DATA_HOME/brain/venv"
BINDIR="${BRAIN_BINDIR:-$HOME/.local/bin}"
BASE="${BRAIN_RELEASE_URL:-$BRAIN_BASE_URL}"
BASE="${BASE%/}"
TMP="$(mktemp -d 2>/dev/null || mktemp -d -t brain-install)"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# --- what to install: this checkout, or a release --------------------------------------------------

CHECKOUT=""
case "$0" in
    */install.sh | install.sh)
        here="$(cd "$(dirname "$0")" 2>/dev/null && pwd || true)"
        if [ -n "$here" ] && [ -f "$here/brain/__init__.py" ] &&
            grep -q '^name = "brain-memory"' "$here/pyproject.toml" 2>/dev/null; then
            CHECKOUT="$here"
        fi
        ;;
esac

fetch() { # fetch URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 2 --connect-timeout 15 --max-time 300 -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -T 60 -O "$2" "$1"
    else
        die "neither curl nor wget is installed; install one and run this again"
    fi
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    elif command -v openssl >/dev/null 2>&1; then
        openssl dgst -sha256 -r "$1" | cut -d' ' -f1
    else
        die "no sha256 tool (sha256sum, shasum or openssl) found; install one and run this again"
    fi
}

# verify_signature FILE SIG: 0 verified, 1 not signed by a known key, 2 no verifier at hand
verify_signature() {
    continued=0
    if command -v openssl >/dev/null 2>&1; then
        for key in $BRAIN_PUBLIC_KEYS; do
            # the DER prefix of an Ed25519 public key is 12 bytes: its base64 joins cleanly
            printf '%s\n' '-----BEGIN PUBLIC KEY-----' "MCowBQYDK2VwAyEA$key" \
                '-----END PUBLIC KEY-----' >"$TMP/key.pem"
            out="$(openssl pkeyutl -verify -pubin -inkey "$TMP/key.pem" -rawin -in "$1" \
                -sigfile "$2" 2>&1 || true)"
            case "$out" in
                *"Verified Successfully"*) return 0 ;;
                *"Verification Failure"*) continued=1 ;;
                *) continued=2; break ;; # an openssl without Ed25519 (LibreSSL, < 3.0)
            esac
        done
        [ "$continued" = 1 ] && return 1
    fi
    for py in python3 python; do
        command -v "$py" >/dev/null 2>&1 || continue
        rc=0
        "$py" - "$1" "$2" $BRAIN_PUBLIC_KEYS <<'PY' || rc=$?
import base64, sys
try:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
except ImportError:
    sys.exit(2)
data, sig = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
for key in sys.argv[3:]:
    try:
        Ed25519PublicKey.from_public_bytes(base64.b64decode(key)).verify(sig, data)
        sys.exit(0)
    except Exception:
        pass
sys.exit(1)
PY
        [ "$rc" = 2 ] || return "$rc"
    done
    return 2
}

TAG=""
WHEEL=""
if [ -n "$CHECKOUT" ]; then
    say "installing the checkout $CHECKOUT"
else
    if [ -n "$VERSION" ]; then
        printf '%s\n' "$VERSION" | grep -Eq '^dev-20[0-9]{2}-(0[1-9]|1[0-2])[a-z]?(-rc[1-9][0-9]*)?$' ||
            die "BRAIN_VERSION=$VERSION is not a release tag (dev-YYYY-MM, dev-YYYY-MMa, dev-YYYY-MM-rcN)"
        URL="$BASE/download/$VERSION"
    else
        URL="$BASE/latest/download"
    fi
    say "fetching $URL"
    fetch "$URL/sha256sums.txt" "$TMP/sha256sums.txt" || die "cannot download $URL/sha256sums.txt"
    fetch "$URL/sha256sums.txt.sig" "$TMP/sha256sums.txt.sig" || die "cannot download the signature"
    rc=0
    verify_signature "$TMP/sha256sums.txt" "$TMP/sha256sums.txt.sig" || rc=$?
    case "$rc" in
        0) say "sha256sums.txt: signature verified" ;;
        1) die "sha256sums.txt is not signed by brain's release key: the release may have been tampered with; nothing was installed" ;;
        *) say "warning: no Ed25519 verifier here (openssl 3 or python3 with cryptography); the signature was not checked, only the checksums" ;;
    esac
    WHEEL="$(sed -n 's/^[0-9a-f]\{64\} [ *]\(brain_memory-[A-Za-z0-9_.+!-]*-py3-none-any\.whl\)$/\1/p' \
        "$TMP/sha256sums.txt" | head -n 1)"
    [ -n "$WHEEL" ] || die "sha256sums.txt lists no brain wheel; the release is malformed"
    fetch "$URL/release.json" "$TMP/release.json" || die "cannot download $URL/release.json"
    for name in release.json "$WHEEL"; do
        [ "$name" = "$WHEEL" ] && { fetch "$URL/$WHEEL" "$TMP/$WHEEL" || die "cannot download $URL/$WHEEL"; }
        want="$(awk -v n="$name" '{ f = $2; sub(/^\*/, "", f); if (f == n) print $1 }' "$TMP/sha256sums.txt")"
        got="$(sha256_of "$TMP/$name")"
        [ -n "$want" ] && [ "$want" = "$got" ] ||
            die "$name does not match its sha256 in sha256sums.txt (cut short or tampered with); nothing was installed"
    done
    TAG="$(sed -n 's/^ *"tag": *"\([^"]*\)".*/\1/p' "$TMP/release.json" | head -n 1)"
    say "brain ${TAG:-?}: $WHEEL (sha256 checked)"
fi

# --- the environment --------------------------------------------------------------------------------

SOURCE="${CHECKOUT:-$TMP/$WHEEL}"
METHOD=venv
case "${BRAIN_NO_UV:-}" in 1 | true | yes) ;; *) command -v uv >/dev/null 2>&1 && METHOD=uv ;; esac

if [ "$METHOD" = uv ]; then
    say "installing with uv tool install"
    UV_TOOL_BIN_DIR="$BINDIR" uv tool install --force --quiet "$SOURCE" || die "uv tool install failed"
    ENV="$(uv tool dir)/brain-memory"
    ENVPY="$ENV/bin/python"
else
    PY="${BRAIN_PYTHON:-}"
    if [ -z "$PY" ]; then
        for candidate in python3 python3.13 python3.12 python3.11 python; do
            if command -v "$candidate" >/dev/null 2>&1 &&
                "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
                PY="$candidate"
                break
            fi
        done
    fi
    [ -n "$PY" ] || die "brain needs Python 3.11 or newer (or uv): install one and run this again"
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        die "$PY is older than Python 3.11; set BRAIN_PYTHON to a newer one"
    ENV="$VENV"
    ENVPY="$ENV/bin/python"
    if ! "$ENVPY" -c 'import pip' >/dev/null 2>&1; then
        say "creating $ENV"
        rm -rf "$ENV"
        mkdir -p "$(dirname "$ENV")"
        "$PY" -m venv "$ENV" || die "cannot create a venv in $ENV (on Debian: apt install python3-venv)"
    fi
    say "installing into $ENV"
    "$ENVPY" -m pip install -q --disable-pip-version-check "$SOURCE" ||
        die "pip could not install brain into $ENV"
fi

# keep the wheel (for `brain update --rollback`) and mark the environment as the installer's own
"$ENVPY" - "$ENV" "$METHOD" "${CHECKOUT:+checkout}" "$TAG" "${WHEEL:+$TMP/$WHEEL}" <<'PY' ||
import hashlib, json, os, shutil, sys, tempfile, time
env, method, checkout, tag, wheel = sys.argv[1:6]
marker = os.path.join(env, "brain-install.json")
try:
    with open(marker, encoding="utf-8") as f:
        old = json.load(f)
except (OSError, ValueError):
    old = {}
current = None
if wheel:
    folder = os.path.join(env, "brain-releases")
    os.makedirs(folder, exist_ok=True)
    kept = os.path.join(folder, os.path.basename(wheel))
    shutil.copyfile(wheel, kept)
    with open(kept, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    current = {"tag": tag, "wheel": kept, "sha256": digest}
previous = old.get("current") if isinstance(old, dict) else None
if previous == current or (previous and current and previous.get("tag") == current.get("tag")):
    previous = old.get("previous")
doc = {
    "installer": "install.sh",
    "method": method,
    "source": "checkout" if checkout else "release",
    "current": current,
    "previous": previous,
    "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
}
fd, tmp = tempfile.mkstemp(dir=env, prefix=".brain-install.", suffix=".tmp")
with os.fdopen(fd, "w", encoding="utf-8") as f:
    f.write(json.dumps(doc, indent=2) + "\n")
os.replace(tmp, marker)
PY
    die "cannot write $ENV/brain-install.json"

# --- PATH and the vault ------------------------------------------------------------------------------

BRAIN="$ENV/bin/brain"
[ -x "$BRAIN" ] || die "the install left no $BRAIN"
# the profile first, so that `brain install` finds the line and says to open a new shell rather
# than to add it
case ":${PATH:-}:" in
    *":$BINDIR:"*) ;;
    *)
        line="export PATH=\"$BINDIR:\$PATH\""
        profile=""
        case "${SHELL:-}" in
            */zsh) profile="$HOME/.zshrc" ;;
            */bash) profile="$HOME/.bashrc" ;;
            */fish) profile="$HOME/.config/fish/config.fish"; line="fish_add_path $BINDIR" ;;
            *) profile="$HOME/.profile" ;;
        esac
        if [ "$MODIFY_PATH" = 1 ]; then
            if ! grep -Fqs "$line" "$profile"; then
                mkdir -p "$(dirname "$profile")"
                printf '\n# added by brain'"'"'s installer (BRAIN_NO_MODIFY_PATH=1 skips this)\n%s\n' \
                    "$line" >>"$profile"
                say "added $BINDIR to PATH in $profile (open a new shell, or: $line)"
            fi
        else
            say "$BINDIR is not on PATH; add it yourself: $line"
        fi
        ;;
esac
say "running brain install"
if ! BRAIN_BINDIR="$BINDIR" "$BRAIN" install; then
    say "brain install did not finish; fix what it says, then run: $BRAIN install"
    if [ ! -e "$BINDIR/brain" ]; then
        mkdir -p "$BINDIR" && ln -s "$BRAIN" "$BINDIR/brain" && say "linked $BINDIR/brain -> $BRAIN"
    fi
fi

say "done: $("$BRAIN" version 2>/dev/null || echo brain)"
