"""Credential rules shared by `brain lint` (one bullet at a time) and `brain secrets` (files).

Every rule is a keyword prefilter (a plain ``in`` test on the lowercased text, so a
note that names no credential never reaches a regex), a pattern whose quantifiers
are bounded and possessive (Python 3.11+) and whose starts sit on a token boundary
(so a 1 MB line costs linear time, with no input cap that could hide a secret),
and an acceptance test on the captured secret: minimum length, Shannon entropy and
a placeholder allowlist.  The design follows gitleaks
(https://github.com/gitleaks/gitleaks): keywords, a secret capture group, entropy.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import json
import math
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brain.gitutil import Revision

# Assignment-style rules need this many bits/char and chars.  At 8 chars, 3.0 bits
# means eight distinct characters: it rejects "hunter22" and "changeme" (2.75) and
# any repeated filler, yet keeps short human passwords such as "Xy7!pq9z" (3.0) that
# gitleaks' 3.5 for generic-api-key (tuned for 10+ char machine keys) would miss.
ENTROPY_THRESHOLD = 3.0
MIN_SECRET_LEN = 8

# (secret, start, end): the secret text and its span in the scanned string.
_Extracted = tuple[str, int, int]


@dataclass(frozen=True)
class Rule:
    """One credential format."""

    id: str
    description: str
    pattern: re.Pattern[str]
    # Lowercase substrings; the rule runs only when one occurs in the lowercased text. Each holds
    # one of brain.text.CREDENTIAL_HINTS (tests/test_masking.py checks), or an echoed query holding
    # it would not be masked.
    keywords: tuple[str, ...]
    min_entropy: float = 0.0
    min_length: int = 1
    # Assignment-style rule: a specific rule reporting an overlapping span wins.
    generic: bool = False
    # Extra test on the secret text (e.g. "looks random", not a dotted identifier).
    value_check: Callable[[str], bool] | None = None
    # Custom secret extraction for multi-line or structured formats; None means the
    # first capture group that took part in the match (else the whole match).
    extract: Callable[[re.Match[str]], _Extracted | None] | None = None

    def __post_init__(self) -> None:
        if not self.keywords or any(k != k.lower() or not k for k in self.keywords):
            raise ValueError(f"rule {self.id}: keywords must be non-empty and lowercase")


@dataclass(frozen=True)
class Finding:
    # as given by the caller (vault-relative, '/'-separated), so it can act on the file; masked for
    # a finding in the name. A presenter masks it (`redact`) before it prints it.
    path: str
    line: int | None  # 1-based line of the secret's start; None: in the file's name
    rule: str  # rule id
    masked: str  # e.g. "ghp_…(40)": never enough to reuse
    # Where inside the file, when not in its own bytes: a zip member's name, `gzip`, `PDF object
    # 4`, joined by " > " when nested; `line` counts lines there.
    inside: str | None = None


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    if not value:
        return 0.0
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


def mask(secret: str) -> str:
    """First chars then an ellipsis and the length: at most 4 chars and a quarter shown."""
    shown = min(4, len(secret) // 4)
    return f"{secret[:shown]}…({len(secret)})"


# --- allowlist -------------------------------------------------------------------

# Placeholders people write where a secret would go.  Searched in the secret only.
# "xxxx" and "fake" are case-sensitive so a random base64 key body (1-2 kB) rarely
# hits them by chance;
# "test" must start the value or follow a non-letter ("my-test-key", not "Contest").
_PLACEHOLDER = re.compile(
    r"""(?ix)
      example | redacted | dummy | placeholder | change[_-]?me
    | (?-i:xxxx|XXXX|fake|Fake|FAKE) | \*{3} | \.{3} | …
    | ^your[_-]? | [_-]here$ | ^(?:insert|paste|enter|put)[_-]
    | (?:^|[^a-z])test
    | ^\$[a-z_({] | \$\{ | \{\{ | \{[a-z_][\w.-]{0,60}\} | <[^<>]{0,100}> | ^%
    """
)
# Whole values that are defaults or words, never a chosen secret.
_PLACEHOLDER_WORDS = frozenset(
    """password passwd pass secret pwd admin root postgres mysql guest user username
    changeit letmein default none null nil true false hunter2 token apikey api_key
    qwerty 123456 12345678 s3cret""".split()
)


def is_placeholder(secret: str) -> bool:
    """True for values that stand in for a secret (EXAMPLE, xxxx, ${VAR}, {var}, <token>...)."""
    return secret.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER.search(secret) is not None


_DOTTED_IDENT = re.compile(r"[A-Za-z_$][\w$]{0,100}(?:\.[A-Za-z_$][\w$]{0,100}){1,20}")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]{0,100}(?:_[A-Z0-9]{1,100}){1,20}")
_PLAIN_PUNCT = frozenset("-_./")


def _looks_random(value: str) -> bool:
    """Gate for assignment values: rules out code references, paths, numbers and words.

    Machine keys almost always hold a digit and human passwords a digit or a symbol,
    while prose and code after "token:" ("refreshToken", "settings.API_KEY",
    "/run/secrets/db", "GITHUB_TOKEN", "4096") do not.
    """
    if value.isdigit() or "://" in value or value.startswith(("/", "./", "../", "~/")):
        return False
    if _DOTTED_IDENT.fullmatch(value) or _ENV_NAME.fullmatch(value):
        return False
    return any(c.isdigit() for c in value) or any(
        not c.isalnum() and c not in _PLAIN_PUNCT for c in value
    )


def _url_password_ok(value: str) -> bool:
    low = value.lower()
    return "password" not in low and "passwd" not in low


# --- structured extractors ---------------------------------------------------------

_PEM_HEADER_LINE = re.compile(r"^[ \t]*[A-Za-z][A-Za-z0-9-]{0,40}:.*$", re.MULTILINE)
_B64_TOKEN = re.compile(r"[A-Za-z0-9+/=]+")
_PEM_WINDOW = 65536  # a 16k-bit RSA key is ~12 kB of base64; stop looking beyond this


def _pem_body(segment: str) -> str:
    """The base64 body of a PEM block, from the text right after its BEGIN line."""
    return "".join(_pem_parts(segment))


def _pem_parts(segment: str) -> list[str]:
    """The base64 words of a PEM block's body, from the text right after its BEGIN line.

    Accepts real newlines or JSON-escaped ones (GCP key files), drops RFC 1421 /
    OpenPGP armor headers ("Proc-Type: 4,ENCRYPTED", "Version: ..."), stops at the
    first word that is not base64 (prose after a quoted header), and requires one
    run of 40+ chars, as every PEM line is 64 (70 for OpenSSH).
    """
    text = segment.replace("\\r", "\n").replace("\\n", "\n")
    text = _PEM_HEADER_LINE.sub("", text)
    parts: list[str] = []
    for word in text.split():
        if not _B64_TOKEN.fullmatch(word):
            break
        parts.append(word)
    if not parts or max(len(p) for p in parts) < 40:
        return []
    return parts


def _extract_private_key(m: re.Match[str]) -> _Extracted | None:
    """The body, spanning from the end of the BEGIN line (which `redact` leaves in place) to the
    END line, or to the body's last word when there is none."""
    text = m.string
    start = m.end()
    end = text.find("-----", start, start + _PEM_WINDOW)
    if end < 0:
        end = min(len(text), start + _PEM_WINDOW)
        parts = _pem_parts(text[start:end])
        # without an END line the body is its full lines and a padded last one, not the prose
        # words after it that happen to be base64 too ("and", "then")
        full = next((i for i, p in enumerate(parts) if len(p) < 40), len(parts))
        if full < len(parts) and parts[full].endswith("="):
            full += 1
        if parts[:full]:
            last = parts[full - 1]
            end = text.rfind(last, start, end) + len(last)
    else:
        parts = _pem_parts(text[start:end])
    return ("".join(parts), start, end) if parts else None


_GCP_TYPE = re.compile(r'"type"\s{0,20}:\s{0,20}"service_account"')
_GCP_KEY_ID = re.compile(r'"private_key_id"\s{0,20}:\s{0,20}"([0-9a-f]{40})"')
_GCP_KEY = re.compile(r'"private_key"\s{0,20}:\s{0,20}"-----BEGIN[ A-Z]{0,40}PRIVATE KEY-----')


def _extract_gcp(m: re.Match[str]) -> _Extracted | None:
    """A flat JSON object with type service_account and a real private key (id)."""
    obj = m.group(0)
    if "service_account" not in obj or not _GCP_TYPE.search(obj):
        return None
    key_id = _GCP_KEY_ID.search(obj)
    if key_id and _acceptable(key_id.group(1), 40, ENTROPY_THRESHOLD):
        return key_id.group(1), m.start(), m.end()
    key = _GCP_KEY.search(obj)
    if key:
        body = _pem_body(obj[key.end() :])
        if _acceptable(body, 64, ENTROPY_THRESHOLD):
            return body, m.start(), m.end()
    return None


def _extract_jwt(m: re.Match[str]) -> _Extracted | None:
    """RFC 7519: the first segment is base64url JSON naming an "alg" (RFC 7515 §4.1.1)."""
    header = m.group(0).split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if not isinstance(decoded, dict) or "alg" not in decoded:
        return None
    return m.group(0), m.start(), m.end()


def _default_extract(m: re.Match[str]) -> _Extracted:
    for index in range(1, (m.re.groups or 0) + 1):
        value = m.group(index)
        if value is not None:
            return value, m.start(index), m.end(index)
    return m.group(0), m.start(), m.end()


def _acceptable(secret: str, min_length: int, min_entropy: float) -> bool:
    return (
        len(secret) >= min_length
        and shannon_entropy(secret) >= min_entropy
        and not is_placeholder(secret)
    )


# --- rules -------------------------------------------------------------------------

# Between a key name and its value: closing quotes/brackets, markdown bold, then
# `=`, `:`, `:=` or `=>`, or the prose a note says it in ("the staging password is X", "token
# was X"): the value's own gate (length, entropy, a digit or symbol) keeps "the secret is
# important" out.  Horizontal whitespace only: a rule never spans lines.
_OPEN = r"""(?![A-Za-z0-9_])[ \t"'`*\]]{0,5}(?::=|=>|=|:|(?<=[ \t])(?:is|was)[ \t])[ \t"'`*]{0,5}"""
# A value: no whitespace, quotes, brackets or separators; it must end cleanly so
# "os.environ['X']" and "get_token()" (code, not a literal) do not match.
_VALUE = r"""([^\s"'`<>(){}\[\],;|\\]{8,200}+)(?=[\s"'`,;|)\\]|$)"""


def _generic(rule_id: str, description: str, names: str, keywords: tuple[str, ...]) -> Rule:
    """Assignment of a literal to a credential-named key, gated like gitleaks' generic rule."""
    return Rule(
        id=rule_id,
        description=description,
        pattern=re.compile(rf"(?i)(?:{names}){_OPEN}{_VALUE}"),
        keywords=keywords,
        min_entropy=ENTROPY_THRESHOLD,
        min_length=MIN_SECRET_LEN,
        generic=True,
        value_check=_looks_random,
    )


RULES: tuple[Rule, ...] = (
    # AWS key ids: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html
    # (AKIA long-term, ASIA STS temporary; ABIA/ACCA are the other documented prefixes).
    Rule(
        id="aws-access-key",
        description="AWS access key id",
        pattern=re.compile(r"(?<![A-Z0-9])((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}+)(?![A-Z0-9])"),
        keywords=("akia", "asia", "abia", "acca"),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # Secret keys are 40 base64 chars; alone they are indistinguishable from other
    # base64, so only the assignment forms (credentials file, env, JSON) count.
    Rule(
        id="aws-secret-key",
        description="AWS secret access key assignment",
        pattern=re.compile(
            rf"(?i)secret[_.-]?access[_.-]?key{_OPEN}([A-Za-z0-9/+]{{40}}+)(?![A-Za-z0-9/+=])"
        ),
        keywords=("secret_access_key", "secretaccesskey", "secret-access-key", "secret.access"),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # Service-account key file: https://cloud.google.com/iam/docs/keys-create-delete
    # The object is flat (no nested braces), so one bounded [^{}] run finds it.
    Rule(
        id="gcp-service-account",
        description="GCP service-account key JSON",
        pattern=re.compile(r"\{[^{}]{0,16384}+\}"),
        keywords=("service_account",),
        extract=_extract_gcp,
    ),
    # https://cloud.google.com/docs/authentication/api-keys: "AIza" + 35 chars.
    Rule(
        id="gcp-api-key",
        description="Google Cloud API key",
        pattern=re.compile(r"(?<![A-Za-z0-9_-])(AIza[0-9A-Za-z_-]{35}+)(?![A-Za-z0-9_-])"),
        keywords=("aiza",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # Storage account keys are 64 bytes (88 base64 chars), Service Bus / Event Hubs
    # SharedAccessKey 32 bytes (44): https://learn.microsoft.com/azure/storage/common/storage-configure-connection-string
    Rule(
        id="azure-storage-key",
        description="Azure AccountKey / SharedAccessKey in a connection string",
        pattern=re.compile(
            r"(?i)(?:AccountKey|SharedAccessKey)[ \t]{0,5}=[ \t]{0,5}"
            r"([A-Za-z0-9+/]{40,100}+={0,2}+)(?![A-Za-z0-9+/=])"
        ),
        keywords=("accountkey", "sharedaccesskey"),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # Entra ID client secrets since 2022 carry "Q~" at offset 4 (gitleaks
    # azure-ad-client-secret); any format counts when assigned to AZURE/ARM_CLIENT_SECRET.
    Rule(
        id="azure-client-secret",
        description="Azure AD (Entra ID) client secret",
        pattern=re.compile(
            rf"(?i:(?:azure|arm)_client_secret){_OPEN}([A-Za-z0-9_~.-]{{30,80}}+)(?![A-Za-z0-9_~.-])"
            r"|(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}+)(?![A-Za-z0-9_~.-])"
        ),
        keywords=("q~", "azure_client_secret", "arm_client_secret"),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/
    # prefix + 36 base62 (30 random + 6 CRC32); GitHub reserves growth, so allow longer.
    Rule(
        id="github-token",
        description="GitHub token (ghp_/gho_/ghu_/ghs_/ghr_)",
        pattern=re.compile(r"(?<![A-Za-z0-9_])(gh[pousr]_[A-Za-z0-9]{36,251}+)(?![A-Za-z0-9_])"),
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # Fine-grained PAT: "github_pat_" + 22 id + "_" + 59 secret = 82 chars.
    Rule(
        id="github-fine-grained-pat",
        description="GitHub fine-grained personal access token",
        pattern=re.compile(r"(?<![A-Za-z0-9_])(github_pat_[0-9A-Za-z_]{82}+)(?![A-Za-z0-9_])"),
        keywords=("github_pat_",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # https://docs.gitlab.com/ee/security/tokens/#token-prefixes: glpat- + 20 (legacy)
    # or longer routable tokens; deploy (gldt-), runner (glrt-), trigger (glptt-).
    Rule(
        id="gitlab-token",
        description="GitLab personal/deploy/runner/trigger token",
        pattern=re.compile(
            r"(?<![A-Za-z0-9_-])((?:glpat|gldt|glrt|glptt)-[0-9A-Za-z_-]{20,300}+)(?![0-9A-Za-z_-])"
        ),
        keywords=("glpat-", "gldt-", "glrt-", "glptt-"),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # https://api.slack.com/authentication/token-types: xoxb bot, xoxp user, xoxa/xoxr
    # app/refresh, xoxs/xoxo legacy.
    Rule(
        id="slack-token",
        description="Slack API token",
        pattern=re.compile(r"(?<![A-Za-z0-9-])(xox[abposr]-[0-9A-Za-z-]{10,250}+)(?![0-9A-Za-z-])"),
        keywords=("xox",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # https://api.slack.com/messaging/webhooks: the path after /services/ is the secret.
    Rule(
        id="slack-webhook",
        description="Slack incoming webhook URL",
        pattern=re.compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{20,300}+)"
        ),
        keywords=("hooks.slack.com",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # https://docs.stripe.com/keys: live secret (sk_live_) and restricted (rk_live_) keys.
    Rule(
        id="stripe-key",
        description="Stripe live secret or restricted key",
        pattern=re.compile(
            r"(?<![A-Za-z0-9_])((?:sk|rk)_live_[0-9A-Za-z]{24,247}+)(?![0-9A-Za-z])"
        ),
        keywords=("sk_live_", "rk_live_"),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # OpenAI: classic "sk-" + 48 base62; project / service-account / admin keys carry
    # a kind prefix and use base64url (gitleaks openai-api-key).
    Rule(
        id="openai-key",
        description="OpenAI API key",
        pattern=re.compile(
            r"(?<![A-Za-z0-9_-])(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}+"
            r"|[A-Za-z0-9]{48}+))(?![A-Za-z0-9_-])"
        ),
        keywords=("sk-",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # Anthropic: "sk-ant-" + kind/version ("api03", "admin01") + base64url body.
    Rule(
        id="anthropic-key",
        description="Anthropic API key",
        pattern=re.compile(
            r"(?<![A-Za-z0-9_-])(sk-ant-[a-z]{2,10}[0-9]{0,3}-[A-Za-z0-9_-]{32,250}+)(?![A-Za-z0-9_-])"
        ),
        keywords=("sk-ant-",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # npm granular/automation tokens: https://github.blog/2021-09-23-announcing-npms-new-access-token-format/
    Rule(
        id="npm-token",
        description="npm access token",
        pattern=re.compile(r"(?<![A-Za-z0-9_])(npm_[A-Za-z0-9]{36}+)(?![A-Za-z0-9])"),
        keywords=("npm_",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # PyPI API tokens are macaroons whose fixed header base64-encodes "pypi.org".
    Rule(
        id="pypi-token",
        description="PyPI upload token",
        pattern=re.compile(r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}+)(?![A-Za-z0-9_-])"),
        keywords=("pypi-ageichlwas5vcmc",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # Hugging Face user access tokens: "hf_" + 34 letters (gitleaks huggingface-access-token).
    Rule(
        id="huggingface-token",
        description="Hugging Face access token",
        pattern=re.compile(r"(?<![A-Za-z0-9_])(hf_[A-Za-z]{34}+)(?![A-Za-z0-9])"),
        keywords=("hf_",),
        min_entropy=ENTROPY_THRESHOLD,
    ),
    # RFC 7468 PEM, OpenSSH and OpenPGP armor ("PRIVATE KEY BLOCK"); the body, not
    # the header, is the secret, so a header quoted in prose is not a finding.
    Rule(
        id="private-key",
        description="Private key block",
        pattern=re.compile(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"),
        keywords=("private key",),
        min_entropy=ENTROPY_THRESHOLD,
        min_length=64,
        extract=_extract_private_key,
    ),
    # RFC 7519 compact JWS: three base64url segments; the header must decode.
    Rule(
        id="jwt",
        description="JSON Web Token",
        pattern=re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,2048}+\.[A-Za-z0-9_-]{2,8192}+"
            r"\.[A-Za-z0-9_-]{10,2048}+(?![A-Za-z0-9_-])"
        ),
        keywords=("eyj",),
        extract=_extract_jwt,
    ),
    # RFC 3986 userinfo "user:password@".  The URL shape is strong evidence and such
    # passwords are short and human-chosen, so the bar is lower than for generic
    # assignments: 6+ chars and 2.5 bits ("s3cr3tP4ss" is 2.65), defaults excluded. A bare @
    # typed in the password (RFC 3986 wants %40) belongs to it: the userinfo ends at the last @
    # before the host, as git reads it (its complaint names the part after the first @ a user).
    Rule(
        id="url-password",
        description="Password embedded in a URL",
        pattern=re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}+://"
            r"[^\s:/?#@\"'`<>]{0,64}+:([^\s/?#\"'`<>]{1,128})@(?=[A-Za-z0-9\[_-])"
        ),
        keywords=("://",),
        min_entropy=2.5,
        min_length=6,
        generic=True,
        value_check=_url_password_ok,
    ),
    # "Authorization: Bearer <opaque token>" pasted from curl; JWT or vendor rules win
    # on the same span.
    Rule(
        id="bearer-token",
        description="Bearer token in an Authorization header",
        pattern=re.compile(
            r"(?i)(?<![a-z0-9_])bearer[ \t]{1,5}"
            r"([A-Za-z0-9._~+/-]{20,1024}+=*+)(?![A-Za-z0-9._~+/=-])"
        ),
        keywords=("bearer",),
        min_entropy=ENTROPY_THRESHOLD,
        min_length=20,
        generic=True,
        value_check=_looks_random,
    ),
    _generic(
        "generic-password",
        "Password assigned a literal value",
        r"password|passwd|passphrase|pwd",
        ("password", "passwd", "passphrase", "pwd"),
    ),
    _generic(
        "generic-secret",
        "Secret assigned a literal value",
        r"secret(?:[_.-]?key)?",
        ("secret",),
    ),
    _generic(
        "generic-api-key",
        "API key assigned a literal value",
        r"(?:api|access|auth)[ _.-]?key",
        tuple(
            f"{w}{sep}key" for w in ("api", "access", "auth") for sep in ("", " ", "_", "-", ".")
        ),
    ),
    _generic(
        "generic-token",
        "Token assigned a literal value",
        r"token",
        ("token",),
    ),
)


@dataclass(frozen=True)
class _Hit:
    rule: Rule
    anchor: int  # where the finding is reported (match start: BEGIN line, JSON "{")
    secret: str
    start: int
    end: int


# A line break inside a paragraph (a non-blank line going on to another): hard-wrapped prose puts
# one between "the staging password is" and its value, and the index joins the two into one unit.
_WRAP = re.compile(r"(?<=\S)\n(?=[ \t]*\S)")


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """`ch` as the one ASCII character NFKC folds it to (fullwidth `ｇ`, mathematical `𝐠`, `＠`),
    else `ch` itself: a fold to several characters (`ﬁ`, `…`) or to none would move every offset
    after it."""
    folded = unicodedata.normalize("NFKC", ch)
    return folded if len(folded) == 1 and folded.isascii() else ch


def folded(text: str) -> str:
    """`text` with each compatibility character NFKC folds to one ASCII character (fullwidth and
    mathematical letters, digits and punctuation) folded, every offset kept: a token spelt
    `ｇｈｐ＿...` is the token to a reader (an agent folds it without a thought), so the rules read
    it as one and the mask covers it where it stands. ASCII and NFKC-normal text cost one check."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return "".join(map(_fold_char, text))


def _hits(text: str) -> list[_Hit]:
    text = folded(text)
    lowered = text.lower()
    # The generic rules (a key name, then its value) read a paragraph's lines as one; a space for
    # each break keeps every offset, so line numbers and spans hold in the text as written.
    wrapped = _WRAP.sub(" ", text) if "\n" in text else text
    hits: list[_Hit] = []
    for rule in RULES:
        if not any(k in lowered for k in rule.keywords):
            continue
        extract = rule.extract or _default_extract
        for m in rule.pattern.finditer(wrapped if rule.generic else text):
            got = extract(m)
            if got is None:
                continue
            secret, start, end = got
            if not _acceptable(secret, rule.min_length, rule.min_entropy):
                continue
            if rule.value_check is not None and not rule.value_check(secret):
                continue
            hits.append(_Hit(rule, m.start(), secret, start, end))
    hits = _drop_shadowed(hits)
    hits.sort(key=lambda h: (h.anchor, h.rule.id))
    return hits


def _drop_shadowed(hits: list[_Hit]) -> list[_Hit]:
    """Drop generic hits whose secret overlaps a specific rule's ("token: ghp_...").

    Spans are sorted once and searched by bisection, so a file with thousands of
    findings stays O(n log n).
    """
    specific = sorted((h.start, h.end) for h in hits if not h.rule.generic)
    if not specific:
        return hits
    starts = [s for s, _ in specific]
    reach: list[int] = []  # reach[i]: furthest end among specific[0..i]
    for _, end in specific:
        reach.append(max(end, reach[-1]) if reach else end)
    kept: list[_Hit] = []
    for hit in hits:
        if hit.rule.generic:
            before = bisect.bisect_left(starts, hit.end)  # specifics starting before its end
            if before and reach[before - 1] > hit.start:
                continue
        kept.append(hit)
    return kept


def scan_text(text: str, path: str) -> list[Finding]:
    """All findings in a file's text, sorted by line; one per (line, rule, secret)."""
    return [finding for finding, _ in scan_keyed(text, path)]


def scan_keyed(text: str, path: str) -> list[tuple[Finding, str]]:
    """`scan_text`'s findings, each with a digest of its secret: what tells one credential from
    another across versions of a file (`brain secrets --history`) without keeping the secret."""
    import hashlib

    findings: list[tuple[Finding, str]] = []
    seen: set[tuple[int, str, str]] = set()
    line, pos = 1, 0
    for hit in _hits(text):  # anchors ascend, so line numbers are counted incrementally
        line += text.count("\n", pos, hit.anchor)
        pos = hit.anchor
        key = (line, hit.rule.id, hit.secret)
        if key not in seen:
            seen.add(key)
            digest = hashlib.blake2b(hit.secret.encode("utf-8", "surrogatepass"), digest_size=16)
            finding = Finding(path, line, hit.rule.id, mask(hit.secret))
            findings.append((finding, digest.hexdigest()))
    return findings


def scan_line(line: str) -> list[tuple[str, str]]:
    """(rule id, masked secret) for one line, e.g. a bullet lint is about to write."""
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for hit in _hits(line):
        if (hit.rule.id, hit.secret) not in seen:
            seen.add((hit.rule.id, hit.secret))
            out.append((hit.rule.id, mask(hit.secret)))
    return out


def scan_name(path: str) -> list[Finding]:
    """A credential in a file's name or folders (line None). The finding's path is the file's, so
    a caller can act on it (sync leaves the file uncommitted); every listing prints paths, so
    whatever prints it masks it first (`redact`)."""
    return [finding for finding, _ in name_keyed(path)]


def name_keyed(path: str) -> list[tuple[Finding, str]]:
    """`scan_name`'s findings, each with its secret's digest (as `scan_keyed`)."""
    return [(Finding(path, None, f.rule, f.masked), key) for f, key in scan_keyed(path, path)]


# --- masking output ----------------------------------------------------------------

# A word of key material cut loose from what named it (a snippet that starts inside a private key):
# long, of the key alphabets, and more random than hex can be (a commit id or a UUID stays).
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
_KEY_ENTROPY = 4.2
_CUT = "…"


def redact(text: str, *, clipped: bool = False) -> str:
    """`text` with every secret the rules find replaced by its mask, as `brain secrets` shows it.

    Line breaks inside a masked span are kept, so line numbers still hold. `clipped` is for an
    excerpt cut out of a longer text (recall's snippets, cut at `…`), where a secret may have lost
    what identifies it: a random-looking word at a cut, and any word of key material, go too.
    """
    hits = sorted(_hits(text), key=lambda h: (h.start, -h.end))
    if hits:
        out: list[str] = []
        pos = 0
        for hit in hits:
            if hit.end <= pos:
                continue  # inside a span already masked
            start = max(hit.start, pos)
            span = text[start : hit.end]
            lead = " " if span[:1].isspace() else ""
            out += [text[pos:start], lead, mask(hit.secret), "\n" * span.count("\n")]
            pos = hit.end
        out.append(text[pos:])
        text = "".join(out)
    return _redact_cut(text) if clipped and text else text


def _redact_cut(text: str) -> str:
    words = text.split(" ")
    for i, written in enumerate(words):
        word = folded(written)  # a fullwidth fragment is read, and masked, as the plain one
        bare = word.strip(_CUT + ".,;:()[]\"'`")
        if not bare:
            continue
        at_cut = (i == 0 and word.startswith(_CUT)) or (i == len(words) - 1 and word.endswith(_CUT))
        material = _KEY_MATERIAL.fullmatch(bare) and shannon_entropy(bare) >= _KEY_ENTROPY
        fragment = at_cut and _acceptable(bare, MIN_SECRET_LEN, ENTROPY_THRESHOLD)
        if material or (fragment and _looks_random(bare)):
            words[i] = word.replace(bare, mask(bare))
    return " ".join(words)


# --- gitleaks ----------------------------------------------------------------------

GITLEAKS_TIMEOUT = 120.0
GITLEAKS_MASK = "…(redacted)"  # gitleaks runs with --redact: the secret never leaves it


def _normalized(path: Path) -> Path:
    return Path(os.path.normpath(path.absolute()))


def _relative_to(file: Path, root: Path) -> str | None:
    """'/'-separated path of file under root, lexically first, then through symlinks."""
    for candidate, base in ((_normalized(file), root), (file.resolve(), root.resolve())):
        try:
            return candidate.relative_to(base).as_posix()
        except ValueError:
            continue
    return None


def _collect(paths: Sequence[Path], root: Path) -> dict[str, Path]:
    """Vault-relative '/'-path -> file, for files under root (directories walked, .git skipped)."""
    files: dict[str, Path] = {}
    for given in paths:
        path = given if given.is_absolute() else root / given
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            rel = _relative_to(file, root)
            if rel is not None and ".git" not in rel.split("/") and file.is_file():
                files[rel] = file
    return files


def _parse_report(
    report: Path, scratch: Path, source: Path, known: set[str]
) -> list[Finding] | None:
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, list):
        return None
    findings: list[Finding] = []
    for item in data:
        if not isinstance(item, dict):
            return None
        file, line, rule = item.get("File"), item.get("StartLine"), item.get("RuleID")
        if not isinstance(file, str) or not isinstance(rule, str):
            return None
        if not isinstance(line, int) or isinstance(line, bool):
            return None
        # Absolute when --source is; a relative one is taken from the working
        # directory (the scratch dir), or failing that from the source dir.
        reported = Path(file)
        bases = [reported] if reported.is_absolute() else [scratch / file, source / file]
        rel = next((r for r in (_relative_to(b, source) for b in bases) if r in known), None)
        if rel is None:
            return None  # not a file we gave it: the report is not what we think it is
        findings.append(Finding(rel, max(line, 1), rule, GITLEAKS_MASK))
    findings.sort(key=lambda f: (f.path, f.line, f.rule))
    return findings


def gitleaks_findings(paths: Sequence[Path], root: Path) -> list[Finding] | None:
    """`run_gitleaks` over files on disk: ``paths`` are files or directories, absolute or
    relative to ``root``; those outside ``root`` are skipped, and ``root``'s
    `.gitleaks.toml` is passed when there is one."""
    import shutil

    if shutil.which("gitleaks") is None:
        return None
    root = _normalized(root)
    return run_gitleaks(_collect(paths, root), root / ".gitleaks.toml")


def run_gitleaks(
    files: Mapping[str, Path | str], config: Path | None = None
) -> list[Finding] | None:
    """Run `gitleaks` when a binary is on PATH; None when absent or when it fails.

    ``files`` maps a vault-relative '/'-path to the file to scan or to its text (what is staged,
    which is on no disk). They are laid out in a scratch directory under those paths, so gitleaks
    sees exactly these files and its report maps back to vault paths. Findings carry gitleaks'
    own rule ids and GITLEAKS_MASK, since with --redact the report never holds the secret.
    ``config`` is passed when it is a file. `detect --no-git` exists in every v8 release (hidden
    but kept after 8.19); `dir` is the newer spelling and the fallback. The one place brain runs
    gitleaks.
    """
    import shutil  # here, not at the top: masking an echoed query needs none of the three
    import subprocess
    import tempfile

    exe = shutil.which("gitleaks")
    if exe is None:
        return None
    if not files:
        return []
    try:
        with tempfile.TemporaryDirectory(prefix="brain-gitleaks-") as tmp:
            scratch = Path(os.path.realpath(tmp))
            source = scratch / "src"
            for rel, content in files.items():
                target = source / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, Path):
                    shutil.copyfile(content, target)
                else:
                    target.write_text(content, encoding="utf-8")
            report = scratch / "report.json"
            common = ["--report-format", "json", "--report-path", str(report)]
            common += ["--redact", "--exit-code", "0"]
            if config is not None and config.is_file():
                common += ["--config", str(config)]
            for argv in (
                [exe, "detect", "--no-git", "--source", str(source), *common],
                [exe, "dir", str(source), *common],
            ):
                report.unlink(missing_ok=True)
                done = subprocess.run(
                    argv,
                    cwd=scratch,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=GITLEAKS_TIMEOUT,
                    check=False,
                )
                if done.returncode == 0 and report.is_file():
                    return _parse_report(report, scratch, source, set(files))
    except (OSError, subprocess.SubprocessError):
        return None
    return None


# --- bytes: binary files, compressed files, archives, PDFs ---------------------------------------

# A NUL byte in the first 8000 bytes means binary, as git decides (xdiff-interface.c,
# buffer_is_binary).
BINARY_SNIFF = 8000
# What one file may decompress to, all its members and streams together, how deep archives may
# nest, and how many members one may have: a zip bomb (kilobytes that inflate to petabytes) costs
# at most this much memory and time, and what lies past it is named as not scanned.
MAX_INFLATED = 32 << 20
MAX_NESTING = 3
MAX_MEMBERS = 10_000
_CHUNK = 1 << 20
# Reasons one file's line names before it counts the rest (a corrupt PDF has hundreds of streams).
_MAX_REASONS = 3

# A binary file is read as its runs of ASCII text (every rule's credential is ASCII) of 8 bytes or
# more (no rule matches fewer): printable characters, tab, CR and LF. Between two runs stands a
# vertical tab, which ends a value and is not the space a key and its value may have between them,
# and the line breaks of what was left out, so a line is the line `grep -an` counts. Random bytes
# hold few such runs, so the rules read a fraction of the file.
_TEXT_RUN = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")

# PDF (ISO 32000-1 §7.3.8): `<< /Filter /FlateDecode ... >> stream` EOL data `endstream`, inside
# `N 0 obj`; "endstream" is not a stream's start.
_PDF_STREAM = re.compile(rb"(?<![A-Za-z])stream\r?\n")
_PDF_OBJ = re.compile(rb"(\d{1,10})[ \t\r\n]{1,10}\d{1,5}[ \t\r\n]{1,10}obj\b")
_PDF_FILTER = re.compile(rb"/Filter[ \t\r\n]{0,10}\[?[ \t\r\n]{0,10}/([A-Za-z0-9]{1,40})")
_PDF_HEAD = 4096  # how far before `stream` its object's dictionary may start
# Text shown with kerning, `[(the tok)-20(en is gh)5(p_...)] TJ` (§9.4.3): its strings joined.
_PDF_TJ = re.compile(rb"\[([^\[\]]{0,65536}+)\][ \t\r\n]{0,10}TJ")
_PDF_STRING = re.compile(rb"\(((?:[^()\\]|\\.){0,4096}+)\)")
_PAST_CAP = f"decompresses past the {MAX_INFLATED >> 20} MB one file may; the rest not scanned"


@dataclass(frozen=True)
class DataScan:
    """What `scan_data` found in one file's bytes."""

    findings: tuple[tuple[Finding, str], ...]  # each with its secret's digest, as `scan_keyed`
    unscanned: str  # the parts not scanned and why, as one line; "" when every part was read


def as_text(data: bytes) -> str:
    """A file's bytes as the text the rules read: UTF-8 (a stray byte replaced), UTF-16 after its
    byte-order mark, and for a binary file its runs of ASCII text, each where it stands."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", "replace")
    if b"\0" not in data[:BINARY_SNIFF]:
        return data.decode("utf-8", "replace")
    parts: list[bytes] = []
    end = 0
    for run in _TEXT_RUN.finditer(data):
        parts += [b"\n" * data.count(b"\n", end, run.start()), b"\v", run.group()]
        end = run.end()
    return b"".join(parts).decode("ascii")


def _kind(data: bytes) -> str:
    """The container `data` is by its magic bytes (a renamed `backup.md.gz` is still gzip)."""
    if data[:2] == b"\x1f\x8b":
        return "gzip"
    # "BZh", the block size, then a block's or the end's magic (bzip2's pi and sqrt(pi) digits)
    if data[:3] == b"BZh" and data[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bzip2"
    if data[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):  # also .docx, .xlsx, .odt, .epub, .jar
        return "zip"
    # the header may follow up to 1 KB of junk (ISO 32000-1 annex H); a note about PDFs that
    # quotes one has no end-of-file marker after it
    if b"%PDF-" in data[:1024] and b"%%EOF" in data[-1024:]:
        return "pdf"
    return ""


def _part(inside: str, name: str) -> str:
    return f"{inside} > {name}" if inside else name


def _read_limited(stream: Any, left: int) -> tuple[bytes, str]:
    """What `stream` yields up to `left` bytes, and why it was not read whole (or "")."""
    out = bytearray()
    why = ""
    try:
        while True:
            chunk = stream.read(min(_CHUNK, left - len(out) + 1))
            if not chunk:
                break
            out += chunk
            if len(out) > left:
                del out[left:]
                why = _PAST_CAP
                break
    except EOFError:
        why = "cut short; scanned as far as it goes"
    # Hostile bytes may raise whatever a decoder has (zlib.error, LZMAError, BadZipFile,
    # struct.error): the part is named as not scanned, never a traceback.
    except Exception:
        why = "corrupt; scanned as far as it could be read"
    return bytes(out), why


def _decompress(kind: str, data: bytes, left: int) -> tuple[bytes, str]:
    """What a gzip, bzip2 or xz file holds, up to `left` bytes, with `_read_limited`'s why.
    Decompressor objects, not file objects: those drop what a read decoded when the data turns
    out cut short. Streams written one after another (`cat a.gz b.gz`) are read in turn."""
    import bz2
    import lzma
    import zlib

    def decompressor() -> Any:
        if kind == "gzip":
            return zlib.decompressobj(wbits=31)  # 16 + 15: a gzip header and trailer
        return bz2.BZ2Decompressor() if kind == "bzip2" else lzma.LZMADecompressor()

    out = bytearray()
    rest = data
    try:
        while rest and _kind(rest) == kind:
            inflater = decompressor()
            pending = rest
            while not inflater.eof:
                want = left - len(out) + 1
                chunk = inflater.decompress(pending, want)
                # zlib hands back the input it did not read yet; bz2 and lzma keep it themselves
                pending = getattr(inflater, "unconsumed_tail", b"")
                out += chunk
                if len(out) > left:
                    del out[left:]
                    return bytes(out), _PAST_CAP
                if len(chunk) < want and not inflater.eof and not pending:
                    return bytes(out), "cut short; scanned as far as it goes"
            rest = inflater.unused_data
    except (zlib.error, lzma.LZMAError, OSError, EOFError, ValueError):
        return bytes(out), "corrupt; scanned as far as it could be read"
    return bytes(out), ""


class _Reader:
    """One file's bytes, read layer by layer (the bytes, then what they decompress to) within one
    budget of MAX_INFLATED bytes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.left = MAX_INFLATED
        self.found: list[tuple[Finding, str]] = []
        self.reasons: list[str] = []
        self.capped = False

    def note(self, part: str, why: str) -> None:
        if why == _PAST_CAP:
            self.capped = True
        self.reasons.append(f"{part}: {why}" if part else why)

    def full(self, part: str) -> bool:
        """True once the budget is spent: nothing more is decompressed, and that is named once."""
        if self.left > 0:
            return False
        if not self.capped:
            self.note(part, _PAST_CAP)
        return True

    def summary(self) -> str:
        shown = "; ".join(self.reasons[:_MAX_REASONS])
        more = len(self.reasons) - _MAX_REASONS
        return f"{shown}; and {more} more" if more > 0 else shown

    def opened(self, part: str, content: bytes, why: str, depth: int) -> None:
        """What `part` decompressed to (`why` it is not whole, or ""), read as the next layer."""
        self.left -= len(content)
        if why:
            self.note(part, why)
        if content:
            self.layer(content, part, depth + 1)

    def layer(self, data: bytes, inside: str, depth: int) -> None:
        raw = [
            (replace(f, inside=inside) if inside else f, key)
            for f, key in scan_keyed(as_text(data), self.path)
        ]
        before = len(self.found)
        kind = _kind(data)
        if kind and self.full(_part(inside, kind)):
            pass
        elif kind and depth >= MAX_NESTING:
            self.note(_part(inside, kind), f"nested more than {MAX_NESTING} deep; not opened")
        elif kind == "zip":
            self.zip(data, inside, depth)
        elif kind == "pdf":
            self.pdf(data, inside, depth)
        elif kind:
            self.stream(data, kind, inside, depth)
        # a secret its parts name (a stored zip member, a member's name) is reported there only
        inner = {key for _, key in self.found[before:]}
        self.found[before:before] = [(f, key) for f, key in raw if key not in inner]

    def stream(self, data: bytes, kind: str, inside: str, depth: int) -> None:
        self.opened(_part(inside, kind), *_decompress(kind, data, self.left), depth)

    def zip(self, data: bytes, inside: str, depth: int) -> None:
        import io
        import zipfile

        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
            members = archive.infolist()
        except Exception:  # hostile bytes: see _read_limited
            self.note(
                _part(inside, "zip"), "not a zip that can be opened; its bytes scanned as they are"
            )
            return
        with archive:
            for count, info in enumerate(members):
                if count == MAX_MEMBERS:
                    self.note(
                        inside or "zip", f"more than {MAX_MEMBERS} members; the rest not scanned"
                    )
                    break
                if self.full(inside or "zip"):
                    break
                if info.is_dir():
                    continue
                part = _part(inside, redact(info.filename))
                for f, key in scan_keyed(info.filename, self.path):
                    self.found.append((Finding(f.path, None, f.rule, f.masked, part), key))
                if info.flag_bits & 0x1 or info.compress_type == 99:  # 99: WinZip AES
                    self.note(part, "encrypted; not scanned")
                    continue
                try:
                    with archive.open(info) as member:
                        content, why = _read_limited(member, self.left)
                except Exception:  # an unknown method, a bad header
                    method = info.compress_type
                    content, why = b"", f"compression method {method}, or corrupt; not scanned"
                self.opened(part, content, why, depth)

    def pdf(self, data: bytes, inside: str, depth: int) -> None:
        import zlib

        if b"/Encrypt" in data:
            self.note(_part(inside, "PDF"), "encrypted; its streams not scanned")
            return
        view = memoryview(data)
        for number, m in enumerate(_PDF_STREAM.finditer(data), 1):
            if self.full(inside or "PDF"):
                break
            window = data[max(0, m.start() - _PDF_HEAD) : m.start()]
            objects = list(_PDF_OBJ.finditer(window))
            head = window[objects[-1].start() :] if objects else window
            filters = _PDF_FILTER.search(head)
            if filters is None or filters.group(1) != b"FlateDecode":
                continue  # raw (read above with the file) or an image codec
            name = f"PDF object {int(objects[-1].group(1))}" if objects else f"PDF stream {number}"
            part = _part(inside, name)
            end = data.find(b"endstream", m.end())
            inflater = zlib.decompressobj()
            try:
                content = inflater.decompress(
                    view[m.end() : end if end >= 0 else len(data)], self.left + 1
                )
            except zlib.error:
                self.note(part, "does not inflate (corrupt); not scanned")
                continue
            why = ""
            if len(content) > self.left:
                content, why = content[: self.left], _PAST_CAP
            elif not inflater.eof:
                why = "cut short; scanned as far as it goes"
            before = len(self.found)
            self.opened(part, content, why, depth)
            if b"TJ" in content:
                self.kerned(content, part, {key for _, key in self.found[before:]})

    def kerned(self, content: bytes, part: str, known: set[str]) -> None:
        """The text a content stream shows in pieces, each TJ array's strings joined where the
        array stood (lines kept), read for what the pieces hid."""

        def joined(m: re.Match[bytes]) -> bytes:
            text = b"".join(_PDF_STRING.findall(m.group(1)))
            return b"(" + text + b")" + b"\n" * m.group(1).count(b"\n")

        for f, key in scan_keyed(as_text(_PDF_TJ.sub(joined, content)), self.path):
            if key not in known:
                self.found.append((replace(f, inside=part), key))


def scan_data(data: bytes, path: str) -> DataScan:
    """Every credential in a file's bytes, keyed as `scan_keyed` keys them: a text file's text; a
    binary file's runs of text; what a gzip, bzip2 or xz file, a zip's members (also .docx and
    the like) and a PDF's FlateDecode streams decompress to, within MAX_INFLATED bytes and
    MAX_NESTING levels. What could not be read (an encrypted member, corrupt data, past the cap)
    is named in `unscanned`. The name is not scanned here (`scan_name`)."""
    reader = _Reader(path)
    reader.layer(data, "", 0)
    return DataScan(tuple(reader.found), reader.summary())


# --- commits -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CommitFinding:
    commit: str  # the full id of the commit that brought the credential into `path`
    path: str  # as `Finding.path`: masked when the name holds a credential
    line: int | None  # in that commit's version of the file; None: in the name
    rule: str
    masked: str
    inside: str | None = None  # as `Finding.inside`


@dataclass(frozen=True)
class CommitUnscanned:
    commit: str
    path: str
    why: str


@dataclass(frozen=True)
class CommitScan:
    ok: bool  # no finding, and every file read whole
    commit_count: int  # commits read
    blob_count: int  # distinct blobs read
    findings: tuple[CommitFinding, ...]  # oldest commit first
    unscanned: tuple[CommitUnscanned, ...]  # oldest commit first
    first_bad: str | None  # the oldest commit that holds a credential
    hint: str | None  # how to take it out of those commits, one line; None when none holds one


def scan_commits(repo: Path, tip: str, exclude: Sequence[str]) -> CommitScan:
    """Scan what every commit reachable from `tip` and from none of `exclude` (git's `tip --not
    exclude...`; none: the whole history) adds or changes: a root commit's every file, a commit's
    files that differ from its parent, a merge's that differ from every parent. The rules and the
    decompression are `scan_data`'s; each blob is read once. A credential is reported at the
    commit that brought it into its file (a later edit that keeps it is not reported again; a
    later commit that deletes it does not undo it: it is in the history). An `exclude` that names
    no commit hides nothing (scanning more is the safe side); a `tip` that names none is an
    error. `hint` is written for `tip` being the checked-out branch, as sync sends it."""
    from brain import gitutil
    from brain.errors import BrainError

    git = gitutil.repository(repo)
    if git is None:
        raise BrainError(
            f"{repo} is not a git repository, so it has no commits", "run it in the vault"
        )
    start = gitutil.commit_id(git, tip)
    if start is None:
        if tip == "HEAD" and git.head_is_unborn:
            return CommitScan(True, 0, 0, (), (), None, None)  # nothing committed yet
        raise BrainError(f"{tip} names no commit in {repo}", "name a branch or a commit id")
    hidden = [found for name in exclude if (found := gitutil.commit_id(git, name))]
    cache: dict[bytes, DataScan] = {}
    reported: set[tuple[str, bool, str | None, str]] = set()
    findings: list[CommitFinding] = []
    unscanned: list[CommitUnscanned] = []
    commits = 0
    first: Revision | None = None
    for commit in gitutil.revisions(git, [start], hidden, every_parent=True):
        commits += 1
        cid = commit.id
        for path, oid in sorted(commit.changes, key=lambda item: item[0]):
            scanned = cache.get(oid)
            if scanned is None:
                scanned = cache[oid] = scan_data(gitutil.blob_data(git, oid), path)
            if scanned.unscanned:
                unscanned.append(CommitUnscanned(cid, redact(path), scanned.unscanned))
            shown = redact(path)  # a name that holds a credential is never printed
            for f, key in name_keyed(path) + list(scanned.findings):
                if (path, f.line is None, f.inside, key) in reported:
                    continue
                reported.add((path, f.line is None, f.inside, key))
                findings.append(CommitFinding(cid, shown, f.line, f.rule, f.masked, f.inside))
                first = first or commit
    hint = _removal_hint(repo, first, findings[0]) if first is not None else None
    return CommitScan(
        not findings and not unscanned,
        commits,
        len(cache),
        tuple(findings),
        tuple(unscanned),
        None if first is None else first.id,
        hint,
    )


def _removal_hint(repo: Path, commit: Revision, finding: CommitFinding) -> str:
    """How to take a credential out of commits not sent yet, keeping every change: undo the
    commits from the first that holds it on (`reset --soft`: the work tree and the index stay as
    they are), remove it from the file, and commit again. Rewriting one commit (`rebase -i`, edit)
    would keep the others as they were, but the same lines in later commits conflict, and
    dropping it would lose the rest of what it changed."""
    import shlex

    from brain.escapes import one_line as printable  # brain.text imports this module: no cycle

    short = commit.id[:12]
    vault = shlex.quote(str(repo))
    where = printable(finding.path) + (f"[{printable(finding.inside)}]" if finding.inside else "")
    if not commit.root:
        undo = f"git -C {vault} reset --soft {short}~1"
    else:  # the first commit: the branch starts again, with every file staged
        undo = f"git -C {vault} update-ref -d HEAD"
    return (
        f"commit {short} put a credential in {where} ({finding.rule}: {finding.masked}): to take "
        f"it out of the commits not sent, undo them from that one on, keeping their changes "
        f"(`{undo}`), remove the credential from {printable(finding.path)} if it is still there, "
        "and commit again"
    )
