"""The credential rule set shared by `brain lint` and `brain secrets`.

Every credential below is generated at import from a seeded RNG and assembled by
concatenation, so this file holds no token literal a forge's secret scanner would
take for a live credential.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import textwrap
from pathlib import Path

import pytest

from brain import secrets
from brain.secrets import (
    ENTROPY_THRESHOLD,
    MIN_SECRET_LEN,
    RULES,
    Finding,
    Rule,
    gitleaks_findings,
    mask,
    run_gitleaks,
    scan_line,
    scan_text,
    shannon_entropy,
)

RNG = random.Random(20240917)  # noqa: S311 -- reproducible fake credentials, not crypto
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def pem(kind: str, lines: int = 6, width: int = 64, headers: str = "") -> tuple[str, str]:
    """A PEM block with a random base64 body: (block text, body without newlines)."""
    rows = [rand(width, B64) for _ in range(lines)]
    block = (
        "-----BEGIN " + kind + " KEY-----\n" + headers + "\n".join(rows) + "\n"
        "-----END " + kind + " KEY-----"
    )
    return block, "".join(rows)


def service_account(key_id: str, key_text: str) -> dict[str, str]:
    return {
        "type": "service_" + "account",
        "project_id": "demo-project",
        "private_key_id": key_id,
        "private_key": key_text,
        "client_email": "ci@demo-project.iam.gserviceaccount.com",
        "client_id": "1" + rand(20, string.digits),
        "token_uri": "https://oauth2.googleapis.com/token",
    }


# --- generated credentials ---------------------------------------------------------

AKIA = "AK" + "IA" + rand(16, UPPER)
ASIA = "AS" + "IA" + rand(16, UPPER)
AWS_SECRET = rand(40, B64)
GCP_KEY_ID = rand(40, HEX)
GCP_PEM, GCP_BODY = pem("PRIVATE", lines=4)
GCP_JSON_ONE_LINE = json.dumps(service_account(GCP_KEY_ID, GCP_PEM + "\n"))
GCP_API = "AI" + "za" + rand(35, URLSAFE)
AZ_ACCOUNT_KEY = rand(86, B64) + "=="
AZ_SB_KEY = rand(43, B64) + "="
AZ_Q = rand(3) + "8" + "Q~" + rand(34, ALNUM + "_~.-")
AZ_ASSIGNED = rand(40, ALNUM + "_~.-")
GH = {p: p + "_" + rand(36) for p in ("ghp", "gho", "ghu", "ghs", "ghr")}
GH_FINE = "github" + "_pat_" + rand(22) + "_" + rand(59)
GLPAT = "gl" + "pat-" + rand(20, URLSAFE)
SLACK = "xo" + "xb-" + rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(24)
SLACK_HOOK_PATH = "T" + rand(10, UPPER) + "/B" + rand(10, UPPER) + "/" + rand(24)
STRIPE = "sk" + "_live_" + rand(24)
STRIPE_RK = "rk" + "_live_" + rand(99)
OPENAI = "sk" + "-" + rand(48)
OPENAI_PROJ = "sk" + "-proj-" + rand(156, URLSAFE)
OPENAI_SVC = "sk" + "-svcacct-" + rand(120, URLSAFE)
ANTHROPIC = "sk" + "-ant-api03-" + rand(93, URLSAFE) + "AA"
NPM = "np" + "m_" + rand(36)
PYPI = "py" + "pi-AgEIcHlwaS5vcmc" + rand(160, URLSAFE)
HF = "h" + "f_" + rand(34, string.ascii_letters)
SSH_PEM, SSH_BODY = pem("OPENSSH PRIVATE", lines=3, width=70)
JWT = (
    b64url({"alg": "HS256", "typ": "JWT"})
    + "."
    + b64url({"sub": rand(12), "iat": 1700000000})
    + "."
    + rand(43, URLSAFE)
)
URL_PW = rand(16)
BEARER = rand(40)
PASSWORD = rand(14, ALNUM + "!@#%^&*")
CLIENT_SECRET = rand(32)
API_KEY = rand(32, HEX)
ACCESS_TOKEN = rand(30)

# (rule id, text, the exact secret the rule must report)
POSITIVE = [
    pytest.param("aws-access-key", f"aws_access_key_id = {AKIA}", AKIA, id="aws-akia"),
    pytest.param("aws-access-key", f"creds: {ASIA} (sts)", ASIA, id="aws-asia"),
    pytest.param(
        "aws-secret-key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, id="aws-secret-ini"
    ),
    pytest.param(
        "aws-secret-key", f'"SecretAccessKey": "{AWS_SECRET}",', AWS_SECRET, id="aws-secret-json"
    ),
    pytest.param("gcp-service-account", GCP_JSON_ONE_LINE, GCP_KEY_ID, id="gcp-sa-json"),
    pytest.param("gcp-api-key", f"maps key {GCP_API}", GCP_API, id="gcp-api-key"),
    pytest.param(
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + AZ_ACCOUNT_KEY
        + ";EndpointSuffix=core.windows.net",
        AZ_ACCOUNT_KEY,
        id="azure-account-key",
    ),
    pytest.param(
        "azure-storage-key",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="
        + AZ_SB_KEY,
        AZ_SB_KEY,
        id="azure-servicebus-key",
    ),
    pytest.param("azure-client-secret", f'"password": "{AZ_Q}"', AZ_Q, id="azure-q-format"),
    pytest.param(
        "azure-client-secret",
        f"AZURE_CLIENT_SECRET={AZ_ASSIGNED}",
        AZ_ASSIGNED,
        id="azure-assigned",
    ),
    *[
        pytest.param("github-token", f"export GH_TOKEN={tok}", tok, id=f"github-{prefix}")
        for prefix, tok in GH.items()
    ],
    pytest.param("github-fine-grained-pat", f"pat: {GH_FINE}", GH_FINE, id="github-fine"),
    pytest.param("gitlab-token", f"`{GLPAT}`", GLPAT, id="gitlab-pat"),
    pytest.param("slack-token", f"bot={SLACK}", SLACK, id="slack-bot"),
    pytest.param(
        "slack-webhook",
        "curl -X POST https://hooks.slack.com/services/" + SLACK_HOOK_PATH,
        SLACK_HOOK_PATH,
        id="slack-webhook",
    ),
    pytest.param("stripe-key", f"STRIPE={STRIPE}", STRIPE, id="stripe-sk"),
    pytest.param("stripe-key", f"restricted {STRIPE_RK}", STRIPE_RK, id="stripe-rk"),
    pytest.param("openai-key", f"OPENAI_API_KEY={OPENAI}", OPENAI, id="openai-classic"),
    pytest.param("openai-key", f"key: {OPENAI_PROJ}", OPENAI_PROJ, id="openai-proj"),
    pytest.param("openai-key", f"({OPENAI_SVC})", OPENAI_SVC, id="openai-svcacct"),
    pytest.param("anthropic-key", f"ANTHROPIC_API_KEY='{ANTHROPIC}'", ANTHROPIC, id="anthropic"),
    pytest.param("npm-token", f"//registry.npmjs.org/:_authToken={NPM}", NPM, id="npm"),
    pytest.param("pypi-token", f"password = {PYPI}", PYPI, id="pypi"),
    pytest.param("huggingface-token", f"HF_TOKEN={HF}", HF, id="huggingface"),
    pytest.param("private-key", SSH_PEM.replace("\n", " "), SSH_BODY, id="private-key-one-line"),
    pytest.param("jwt", f"Authorization: Bearer {JWT}", JWT, id="jwt"),
    pytest.param(
        "url-password",
        f"DATABASE_URL=postgres://app:{URL_PW}@db.internal:5432/app",
        URL_PW,
        id="url-postgres",
    ),
    pytest.param(
        "url-password", "redis://:s3cr3tP4ss@cache:6379/0", "s3cr3tP4ss", id="url-human-password"
    ),
    pytest.param(
        "url-password",
        "https://alice:hunter2@SECRETword99@git.example/vault.git",
        "hunter2@SECRETword99",
        id="url-password-with-a-bare-at",
    ),
    pytest.param(
        "bearer-token",
        f'curl -H "Authorization: Bearer {BEARER}" https://api.internal/v1',
        BEARER,
        id="bearer",
    ),
    pytest.param("generic-password", f"DB_PASSWORD={PASSWORD}", PASSWORD, id="password-env"),
    pytest.param("generic-password", "- **password**: `Xy7!pq9z`", "Xy7!pq9z", id="password-md"),
    pytest.param("generic-password", "passwd: 'Tr0ub4dor&3'", "Tr0ub4dor&3", id="passwd-yaml"),
    pytest.param(
        "generic-secret", f'"client_secret": "{CLIENT_SECRET}"', CLIENT_SECRET, id="client-secret"
    ),
    pytest.param("generic-secret", f"SECRET_KEY = '{API_KEY}'", API_KEY, id="secret-key"),
    pytest.param("generic-api-key", f"api_key={API_KEY}", API_KEY, id="api-key"),
    pytest.param("generic-api-key", f"apiKey: {CLIENT_SECRET}", CLIENT_SECRET, id="apikey-camel"),
    pytest.param("generic-token", f"access_token = {ACCESS_TOKEN}", ACCESS_TOKEN, id="token"),
]

# (rule id the case is about, text): no rule may fire.
NEGATIVE = [
    pytest.param("aws-access-key", "AK" + "IA" + "IOSFODNN7" + "EXAMPLE", id="aws-doc-example"),
    pytest.param("aws-access-key", "AK" + "IA" + rand(15, UPPER), id="aws-short"),
    pytest.param("aws-access-key", "AK" + "IA" + rand(24, UPPER), id="aws-inside-longer"),
    pytest.param("aws-access-key", "ak" + "ia" + rand(16, UPPER).lower(), id="aws-lowercase"),
    pytest.param(
        "aws-secret-key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
        id="aws-secret-doc-example",
    ),
    pytest.param("aws-secret-key", "checksum " + rand(40, B64), id="aws-secret-no-context"),
    pytest.param(
        "gcp-service-account",
        json.dumps({"type": "authorized_user", "client_secret_ref": "see vault"}),
        id="gcp-other-type",
    ),
    pytest.param(
        "gcp-service-account",
        json.dumps(
            service_account(
                "...",
                "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n",
            )
        ),
        id="gcp-placeholder-key",
    ),
    pytest.param("gcp-api-key", "AI" + "za" + rand(20, URLSAFE), id="gcp-api-short"),
    pytest.param("gcp-api-key", "AI" + "za" + "x" * 35, id="gcp-api-placeholder"),
    pytest.param("azure-storage-key", "AccountKey=<your-account-key>;", id="azure-placeholder"),
    pytest.param("azure-storage-key", "AccountKey=" + "A" * 86 + "==", id="azure-low-entropy"),
    pytest.param("azure-storage-key", "UseDevelopmentStorage=true", id="azure-dev-storage"),
    pytest.param(
        "azure-client-secret", "AZURE_CLIENT_SECRET=${AZURE_CLIENT_SECRET}", id="azure-var"
    ),
    pytest.param(
        "azure-client-secret", "AZURE_CLIENT_SECRET=your-client-secret-here", id="azure-here"
    ),
    pytest.param("github-token", "gh" + "p_" + "x" * 36, id="github-xxxx"),
    pytest.param("github-token", "gh" + "p_" + rand(20), id="github-short"),
    pytest.param("github-token", "gh" + "x_" + rand(36), id="github-unknown-prefix"),
    pytest.param("github-token", "token: ghp_<your-token>", id="github-angle"),
    pytest.param("github-fine-grained-pat", "github" + "_pat_" + rand(40), id="github-fine-short"),
    pytest.param("github-fine-grained-pat", "github" + "_pat_" + "X" * 82, id="github-fine-xxxx"),
    pytest.param("gitlab-token", "gl" + "pat-" + "x" * 20, id="gitlab-xxxx"),
    pytest.param("gitlab-token", "gl" + "pat-" + rand(10), id="gitlab-short"),
    pytest.param("slack-token", "xo" + "xb-your-bot-token-here", id="slack-placeholder"),
    pytest.param("slack-token", "xo" + "xz-" + rand(30), id="slack-unknown-kind"),
    pytest.param(
        "slack-webhook",
        "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
        id="slack-webhook-docs",
    ),
    pytest.param("slack-webhook", "https://hooks.slack.com/services/...", id="slack-webhook-dots"),
    pytest.param("stripe-key", "sk" + "_test_" + rand(24), id="stripe-test-mode"),
    pytest.param("stripe-key", "sk" + "_live_" + rand(10), id="stripe-short"),
    pytest.param("openai-key", "sk" + "-" + rand(20), id="openai-short"),
    pytest.param("openai-key", "task-" + rand(48), id="openai-inside-word"),
    pytest.param("openai-key", "OPENAI_API_KEY=sk-...", id="openai-ellipsis"),
    pytest.param("anthropic-key", "sk" + "-ant-api03-...", id="anthropic-ellipsis"),
    pytest.param("anthropic-key", "sk" + "-ant-api03-" + "X" * 95, id="anthropic-xxxx"),
    pytest.param("npm-token", "np" + "m_" + rand(20), id="npm-short"),
    pytest.param("npm-token", "run npm_config_registry=https://registry.local", id="npm-config"),
    pytest.param("pypi-token", "py" + "pi-AgEIcHlwaS5vcmc...", id="pypi-truncated"),
    pytest.param("pypi-token", "py" + "pi-" + rand(60), id="pypi-no-macaroon"),
    pytest.param("huggingface-token", "h" + "f_" + rand(20, string.ascii_letters), id="hf-short"),
    pytest.param("huggingface-token", "h" + "f_" + "x" * 34, id="hf-xxxx"),
    pytest.param("private-key", "-----BEGIN RSA PRIVATE KEY-----", id="pem-header-only"),
    pytest.param(
        "private-key",
        "-----BEGIN RSA PRIVATE KEY----- MIIEpAIBAAKCAQEA... -----END RSA PRIVATE KEY-----",
        id="pem-truncated",
    ),
    pytest.param(
        "private-key",
        "- a key file starts with -----BEGIN OPENSSH PRIVATE KEY----- and then the base64 "
        "body follows on the lines below, seventy characters each",
        id="pem-in-prose",
    ),
    pytest.param("private-key", pem("PUBLIC")[0].replace("\n", " "), id="pem-public-key"),
    pytest.param(
        "private-key",
        "-----BEGIN PRIVATE KEY----- " + "A" * 64 + " -----END PRIVATE KEY-----",
        id="pem-low-entropy",
    ),
    pytest.param(
        "jwt",
        b64url({"typ": "JWT"}) + "." + b64url({"sub": "x"}) + "." + rand(43, URLSAFE),
        id="jwt-no-alg",
    ),
    pytest.param(
        "jwt", "eyJ" + rand(30, URLSAFE) + "." + rand(30) + "." + rand(30), id="jwt-bad-header"
    ),
    pytest.param("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi...", id="jwt-truncated"),
    pytest.param("url-password", "postgres://user:password@localhost/db", id="url-password-word"),
    pytest.param("url-password", "postgres://postgres:postgres@localhost", id="url-default"),
    pytest.param("url-password", "https://user:${PASSWORD}@host/x", id="url-var"),
    pytest.param("url-password", "https://user:<password>@host/x", id="url-angle"),
    pytest.param("url-password", "postgres://app:{db_pass}@db:5432/app", id="url-format-field"),
    pytest.param("url-password", "https://user:****@host/x", id="url-stars"),
    pytest.param("url-password", "mysql://root:pass@127.0.0.1/app", id="url-pass"),
    pytest.param("url-password", "https://user@example.com/path?q=1", id="url-no-password"),
    pytest.param("url-password", "git clone git@github.com:org/repo.git", id="url-scp-like"),
    pytest.param("url-password", "redis://:foobar@cache:6379", id="url-low-entropy"),
    pytest.param("bearer-token", "Authorization: Bearer $TOKEN", id="bearer-var"),
    pytest.param("bearer-token", "Authorization: Bearer <token>", id="bearer-angle"),
    pytest.param("bearer-token", "-H 'Authorization: Bearer YOUR_TOKEN_HERE'", id="bearer-here"),
    pytest.param(
        "bearer-token", "use bearer authentication for the internal API", id="bearer-prose"
    ),
    pytest.param("generic-password", "password: hunter22", id="pw-low-entropy"),
    pytest.param("generic-password", "password: changeme", id="pw-changeme"),
    pytest.param("generic-password", "password = ${DB_PASSWORD}", id="pw-brace-var"),
    pytest.param("generic-password", "password: $DB_PASSWORD", id="pw-dollar-var"),
    pytest.param("generic-password", "password: {{ db_password }}", id="pw-template"),
    pytest.param("generic-password", "password: <password>", id="pw-angle"),
    pytest.param("generic-password", "password: ********", id="pw-stars"),
    pytest.param("generic-password", "password: [REDACTED]", id="pw-redacted"),
    pytest.param("generic-password", "password: dummy-pass-123", id="pw-dummy"),
    pytest.param("generic-password", "password: your-password-here", id="pw-your-here"),
    pytest.param("generic-password", "password: test-1234!", id="pw-test"),
    pytest.param("generic-password", "password: placeholder_99", id="pw-placeholder"),
    pytest.param("generic-password", "password: ...", id="pw-ellipsis"),
    pytest.param("generic-password", "password: Administrator", id="pw-word"),
    pytest.param("generic-password", "PASSWORD_MIN_LENGTH = 12", id="pw-setting-name"),
    pytest.param("generic-password", "password = os.environ['DB_PASSWORD']", id="pw-code"),
    pytest.param("generic-password", "password = get_password(user)", id="pw-call"),
    pytest.param("generic-password", "- the password is kept in 1Password", id="pw-prose"),
    pytest.param("generic-password", "- Reset password: Settings → Security", id="pw-ui-path"),
    pytest.param("generic-secret", "client_secret: EXAMPLE-SECRET-123", id="secret-example"),
    pytest.param("generic-secret", "secret: ${{ secrets.DEPLOY_KEY }}", id="secret-actions"),
    pytest.param("generic-secret", "secret_name: prod/db/creds-2024", id="secret-name"),
    pytest.param("generic-secret", "secret = config.client.secret", id="secret-attr"),
    pytest.param("generic-secret", "secret_key: /run/secrets/key2", id="secret-path"),
    pytest.param("generic-api-key", "api_key = settings.API_KEY", id="api-key-attr"),
    pytest.param("generic-api-key", "API_KEY=xxxx-xxxx-xxxx-xxxx", id="api-key-xxxx"),
    pytest.param("generic-api-key", "api_key: 12345678901234", id="api-key-digits"),
    pytest.param("generic-token", "token: refreshToken", id="token-identifier"),
    pytest.param("generic-token", "token: authentication", id="token-long-word"),
    pytest.param("generic-token", "max_tokens: 4096", id="token-count"),
    pytest.param("generic-token", "token_count: 12345678", id="token-suffix"),
    pytest.param("generic-token", "token: GITHUB_TOKEN_V2", id="token-env-name"),
    pytest.param("generic-token", "token = self.token", id="token-self"),
    pytest.param("generic-token", "token: https://auth.internal/oauth2/token", id="token-url"),
]


def _param_rule(param: object) -> str:
    values: tuple[object, ...] = getattr(param, "values", ("",))
    return str(values[0])


# --- rule-by-rule ------------------------------------------------------------------


@pytest.mark.parametrize(("rule_id", "text", "secret"), POSITIVE)
def test_rule_detects_its_format(rule_id: str, text: str, secret: str) -> None:
    assert (rule_id, mask(secret)) in scan_line(text)


@pytest.mark.parametrize(("rule_id", "text"), NEGATIVE)
def test_rule_ignores_lookalikes_and_placeholders(rule_id: str, text: str) -> None:
    assert rule_id in {r.id for r in RULES}
    assert scan_line(text) == []


def test_every_rule_has_a_positive_and_a_negative_case() -> None:
    ids = {r.id for r in RULES}
    assert {_param_rule(p) for p in POSITIVE} == ids
    assert {_param_rule(p) for p in NEGATIVE} == ids


def test_rule_ids_are_unique_kebab_case() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", i) for i in ids)


def test_rule_rejects_uppercase_keywords() -> None:
    with pytest.raises(ValueError, match="lowercase"):
        Rule(id="x", description="x", pattern=re.compile("X"), keywords=("X",))


def test_keyword_prefilter_keeps_text_away_from_the_regex(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Tripwire:
        def finditer(self, text: str) -> list[re.Match[str]]:
            raise AssertionError("regex ran although no keyword occurs")

    rule = Rule(id="trip", description="t", pattern=Tripwire(), keywords=("magicword",))  # type: ignore[arg-type]
    monkeypatch.setattr(secrets, "RULES", (rule,))
    assert scan_text("nothing to see\nhere", "n.md") == []
    with pytest.raises(AssertionError, match="regex ran"):
        scan_text("a MagicWord appears", "n.md")


def test_specific_rule_wins_over_generic_on_the_same_secret() -> None:
    tok = GH["ghp"]
    assert scan_line(f"token: {tok}") == [("github-token", mask(tok))]
    assert scan_line(f"GITHUB_TOKEN={tok}") == [("github-token", mask(tok))]
    assert scan_line(f"https://x-access-token:{tok}@github.com/o/r.git") == [
        ("github-token", mask(tok))
    ]
    # The AWS secret key is assigned to a "...access_key" name: one finding, not two.
    assert scan_line(f"aws_secret_access_key = {AWS_SECRET}") == [
        ("aws-secret-key", mask(AWS_SECRET))
    ]


def test_two_secrets_on_one_line_are_both_reported_in_order() -> None:
    line = f"{AKIA} and {STRIPE}"
    assert scan_line(line) == [("aws-access-key", mask(AKIA)), ("stripe-key", mask(STRIPE))]


# --- entropy threshold -------------------------------------------------------------


def test_entropy_values() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaaaaaa") == 0.0
    assert shannon_entropy("abababab") == 1.0
    assert shannon_entropy("abcdefgh") == 3.0
    assert shannon_entropy("hunter22") == pytest.approx(2.75)


def test_threshold_is_three_bits_and_eight_chars() -> None:
    assert (ENTROPY_THRESHOLD, MIN_SECRET_LEN) == (3.0, 8)
    # Eight distinct chars reach exactly 3.0 bits: flagged.
    assert scan_line("password: Xy7!pq9z") == [("generic-password", mask("Xy7!pq9z"))]
    # One repeat drops it to 2.75 bits: this is where words and "hunter22" sit.
    assert shannon_entropy("Xy7!pq9X") == pytest.approx(2.75)
    assert scan_line("password: Xy7!pq9X") == []
    # Seven chars: below the length floor even though all distinct (2.81 bits).
    assert scan_line("password: Xy7!pq9") == []


def test_random_machine_keys_clear_the_threshold() -> None:
    # 3.0 bits must not cost recall on real keys: 200 random 32-hex keys all pass.
    keys = [rand(32, HEX) for _ in range(200)]
    assert all(scan_line(f"api_key={k}") == [("generic-api-key", mask(k))] for k in keys)


def test_long_words_pass_entropy_but_not_the_digit_or_symbol_gate() -> None:
    # "authentication" has 3.04 bits: entropy alone would flag prose, hence the gate.
    assert shannon_entropy("authentication") > ENTROPY_THRESHOLD
    assert scan_line("token: authentication") == []
    assert scan_line("token: authentication2") == [("generic-token", mask("authentication2"))]


# --- masking -----------------------------------------------------------------------


def test_mask_format() -> None:
    assert mask(GH["ghp"]) == "ghp_…(40)"
    assert mask("Xy7!pq9z") == "Xy…(8)"
    assert mask("abc") == "…(3)"
    assert mask("") == "…(0)"


@pytest.mark.parametrize(("rule_id", "text", "secret"), POSITIVE)
def test_findings_never_reveal_more_than_four_chars(rule_id: str, text: str, secret: str) -> None:
    for _rule, masked in scan_line(text):
        shown, _, rest = masked.partition("…")
        assert len(shown) <= 4
        assert len(shown) <= len(secret) // 4
        assert re.fullmatch(r"\(\d+\)", rest)
    assert secret[: len(secret) // 2] not in repr(scan_text(text, "n.md"))


def test_mask_never_shows_more_than_a_quarter() -> None:
    for n in range(40):
        value = rand(n)
        shown = mask(value).partition("…")[0]
        assert len(shown) <= min(4, n // 4)
        assert value.startswith(shown)


# --- whole files -------------------------------------------------------------------


def test_scan_text_reports_starting_lines_sorted() -> None:
    rsa, _ = pem("RSA PRIVATE")
    sa = json.dumps(service_account(GCP_KEY_ID, GCP_PEM + "\n"), indent=2)
    text = "\n".join(
        [
            "# Deploy notes",  # 1
            f"- gh token {GH['ghs']}",  # 2
            "- key for the bastion:",  # 3
            rsa,  # 4 .. 11
            "- service account:",  # 12
            sa,  # 13 ..
            f"- last: {STRIPE}",
        ]
    )
    lines = text.split("\n")
    sa_start = lines.index("{") + 1
    pk_in_json = next(i for i, ln in enumerate(lines, 1) if '"private_key":' in ln)
    last = len(lines)
    assert (sa_start, pk_in_json) == (13, 17)
    found = scan_text(text, "notes/deploy.md")
    assert found == [
        Finding("notes/deploy.md", 2, "github-token", mask(GH["ghs"])),
        Finding("notes/deploy.md", 4, "private-key", found[1].masked),
        Finding("notes/deploy.md", 13, "gcp-service-account", mask(GCP_KEY_ID)),
        Finding("notes/deploy.md", 17, "private-key", mask(GCP_BODY)),
        Finding("notes/deploy.md", last, "stripe-key", mask(STRIPE)),
    ]
    assert found[1].masked.endswith(f"({6 * 64})")


@pytest.mark.parametrize(
    ("kind", "headers"),
    [
        pytest.param("RSA PRIVATE", "", id="rsa"),
        pytest.param("EC PRIVATE", "", id="ec"),
        pytest.param("DSA PRIVATE", "", id="dsa"),
        pytest.param("PRIVATE", "", id="pkcs8"),
        pytest.param("ENCRYPTED PRIVATE", "", id="pkcs8-encrypted"),
        pytest.param("OPENSSH PRIVATE", "", id="openssh"),
        pytest.param(
            "RSA PRIVATE",
            "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + rand(32, HEX).upper() + "\n\n",
            id="rsa-legacy-encrypted",
        ),
    ],
)
def test_private_key_kinds_report_the_begin_line(kind: str, headers: str) -> None:
    block, body = pem(kind, headers=headers)
    text = "intro\n\n```\n" + block + "\n```\n"
    assert scan_text(text, "k.md") == [Finding("k.md", 4, "private-key", mask(body))]


def test_pgp_private_key_block() -> None:
    rows = [rand(64, B64) for _ in range(5)]
    block = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: exported\n\n"
        + "\n".join(rows)
        + "\n="
        + rand(4, B64)
        + "\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    found = scan_text("x\n" + block, "p.md")
    assert [(f.line, f.rule) for f in found] == [(2, "private-key")]


def test_one_finding_per_line_rule_and_secret() -> None:
    tok = GH["ghp"]
    other = GH["gho"]
    text = f"{tok} again {tok}\n{tok}\n{tok} {other}\n"
    assert [(f.line, f.rule, f.masked) for f in scan_text(text, "d.md")] == [
        (1, "github-token", mask(tok)),
        (2, "github-token", mask(tok)),
        (3, "github-token", mask(tok)),
        (3, "github-token", mask(other)),
    ]


def test_crlf_line_numbers() -> None:
    text = "a\r\nb\r\n" + f"password={PASSWORD}\r\n"
    assert scan_text(text, "w.md") == [Finding("w.md", 3, "generic-password", mask(PASSWORD))]


def test_clean_note_has_no_findings() -> None:
    note = textwrap.dedent(
        """\
        # Rotating credentials
        - The API key lives in the vault; export it as `$API_KEY` before running.
        - token: see 1Password entry "deploy bot"
        - password policy: 12+ chars, rotate every 90 days
        - `curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/me`
        - DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app
        - AWS example ids look like AKIAIOSFODNN7EXAMPLE in the docs
        """
    )
    assert scan_text(note, "c.md") == []


# --- pathological input ------------------------------------------------------------

SENTINEL = GH["ghr"]
HUGE = 1_000_000
ADVERSARIAL = {
    "plain": "a" * HUGE,
    "base64": rand(4096, B64) * (HUGE // 4096),
    "jwt-starts": "eyJ" * (HUGE // 3),
    "jwt-dots": "eyJabcdefgh." * (HUGE // 12),
    "assignments": "password=" * (HUGE // 9),
    "token-colons": "token:" * (HUGE // 6),
    "url-schemes": "https://" * (HUGE // 8),
    "url-userinfo": ("ab://" + "u" * 60 + ":" + "p" * 120) * (HUGE // 186),
    "pem-headers": "-----BEGIN PRIVATE KEY-----" * (HUGE // 27),
    "pem-body": "-----BEGIN PRIVATE KEY-----" + "A" * HUGE,
    "braces": "{" * HUGE,
    "service-accounts": '{"type": "service_account",' * (HUGE // 27),
    "slack-dashes": "xoxb-" * (HUGE // 5),
    "bearer": "Bearer " * (HUGE // 7),
    "azure-q": "abc1Q~" * (HUGE // 6),
}


@pytest.mark.parametrize("text", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_megabyte_lines_are_scanned_whole(text: str) -> None:
    # Every pattern is bounded and boundary-anchored (no input cap), so a secret
    # after a megabyte of hostile text is still found; CI time bounds the cost.
    assert scan_line(text) == []
    assert ("github-token", mask(SENTINEL)) in scan_line(text + " " + SENTINEL)


# --- gitleaks ----------------------------------------------------------------------


def fake_gitleaks(bin_dir: Path, body: str) -> None:
    """A real executable named gitleaks: POSIX sh builtins only, since PATH is bin_dir."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "gitleaks"
    script.write_text("#!/bin/sh\n" + textwrap.dedent(body), encoding="utf-8")
    script.chmod(0o755)


PARSE_ARGS = """\
    printf '%s\\n' "$@" > "$FAKE_GITLEAKS_ARGS"
    cmd=$1; shift
    while [ $# -gt 0 ]; do
      case "$1" in
        --source) src=$2; shift ;;
        --report-path) rep=$2; shift ;;
        --report-format|--exit-code|--config) shift ;;
        --*) ;;
        *) src=$1 ;;
      esac
      shift
    done
"""


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("# a\n\n- key\n", encoding="utf-8")
    (root / "notes" / "b.md").write_text("# b\n", encoding="utf-8")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("FAKE_GITLEAKS_ARGS", str(tmp_path / "args.txt"))
    return root


def test_gitleaks_absent_returns_none(vault: Path, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    assert gitleaks_findings([vault / "notes" / "a.md"], vault) is None


def test_gitleaks_report_is_parsed_to_vault_paths(vault: Path, tmp_path: Path) -> None:
    fake_gitleaks(
        tmp_path / "bin",
        PARSE_ARGS
        + """\
        [ "$cmd" = detect ] || exit 9
        [ -f "$src/notes/a.md" ] || exit 3
        [ ! -e "$src/notes/b.md" ] || exit 4
        printf '[{"File": "%s/notes/a.md", "StartLine": 3, "RuleID": "generic-api-key",
          "Secret": "REDACTED"}]' "$src" > "$rep"
        """,
    )
    found = gitleaks_findings([Path("notes/a.md")], vault)
    assert found == [Finding("notes/a.md", 3, "generic-api-key", "…(redacted)")]
    args = (tmp_path / "args.txt").read_text(encoding="utf-8").split("\n")
    assert args[:2] == ["detect", "--no-git"]
    for flag in ("--redact", "--report-format", "--source", "--report-path"):
        assert flag in args
    assert args[args.index("--exit-code") + 1] == "0"
    assert args[args.index("--report-format") + 1] == "json"


def test_gitleaks_falls_back_to_dir_command(vault: Path, tmp_path: Path) -> None:
    fake_gitleaks(
        tmp_path / "bin",
        PARSE_ARGS
        + """\
        [ "$cmd" = dir ] || exit 126
        printf '[{"File": "%s/notes/b.md", "StartLine": 1, "RuleID": "jwt"}]' "$src" > "$rep"
        """,
    )
    found = gitleaks_findings([vault / "notes"], vault)
    assert found == [Finding("notes/b.md", 1, "jwt", "…(redacted)")]


def test_gitleaks_passes_the_vault_config(vault: Path, tmp_path: Path) -> None:
    (vault / ".gitleaks.toml").write_text("[extend]\nuseDefault = true\n", encoding="utf-8")
    fake_gitleaks(tmp_path / "bin", PARSE_ARGS + "printf '[]' > \"$rep\"\n")
    assert gitleaks_findings([vault / "notes" / "a.md"], vault) == []
    args = (tmp_path / "args.txt").read_text(encoding="utf-8").split("\n")
    assert args[args.index("--config") + 1] == str(vault / ".gitleaks.toml")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("printf 'not json' > \"$rep\"\n", id="garbage"),
        pytest.param('printf \'{"findings": []}\' > "$rep"\n', id="not-a-list"),
        pytest.param('printf \'[{"File": 1}]\' > "$rep"\n', id="bad-field"),
        pytest.param(
            'printf \'[{"File": "/elsewhere/x.md", "StartLine": 1, "RuleID": "r"}]\' > "$rep"\n',
            id="unknown-file",
        ),
        pytest.param("exit 1\n", id="crash"),
        pytest.param("exit 0\n", id="no-report"),
    ],
)
def test_gitleaks_failure_returns_none(vault: Path, tmp_path: Path, body: str) -> None:
    fake_gitleaks(tmp_path / "bin", PARSE_ARGS + body)
    assert gitleaks_findings([vault / "notes" / "a.md"], vault) is None


def test_gitleaks_not_run_without_files(vault: Path, tmp_path: Path) -> None:
    fake_gitleaks(tmp_path / "bin", "exit 1\n")
    assert gitleaks_findings([], vault) == []


def test_gitleaks_scans_text_that_is_on_no_disk_with_the_vault_config(
    vault: Path, tmp_path: Path
) -> None:
    """What is staged reaches gitleaks as text (the one runner `brain secrets --staged` uses)."""
    (vault / ".gitleaks.toml").write_text("[extend]\nuseDefault = true\n", encoding="utf-8")
    fake_gitleaks(
        tmp_path / "bin",
        PARSE_ARGS
        + """\
        read -r first < "$src/notes/staged.md" || exit 3
        [ "$first" = "only in the index" ] || exit 4
        printf '[{"File": "%s/notes/staged.md", "StartLine": 2, "RuleID": "r"}]' "$src" > "$rep"
        """,
    )
    texts = {"notes/staged.md": "only in the index\nsecret here\n"}
    found = run_gitleaks(texts, vault / ".gitleaks.toml")
    assert found == [Finding("notes/staged.md", 2, "r", "…(redacted)")]
    args = (tmp_path / "args.txt").read_text(encoding="utf-8").split("\n")
    assert args[args.index("--config") + 1] == str(vault / ".gitleaks.toml")
    assert run_gitleaks({}, vault / ".gitleaks.toml") == []


@pytest.mark.parametrize(
    ("line", "rule_id"),
    [
        ("the staging password is Tr0ub4dor&3x", "generic-password"),
        ("The secret was Zq8vN2kLm4xR7tYw9pB3sD6f", "generic-secret"),
        ("our api key is k7Hq2Zp9Wm4Xt8Rv", "generic-api-key"),
    ],
)
def test_a_credential_said_in_prose_is_found(line: str, rule_id: str) -> None:
    """A note says it in words as often as in `key = value`: "the password is X" counts."""
    found = secrets.scan_line(line)
    assert [r for r, _ in found] == [rule_id]
    assert line.rsplit(" ", 1)[1] not in secrets.redact(line)


@pytest.mark.parametrize(
    "line",
    [
        "the secret is important",
        "the token is refreshed hourly",
        "the password is in 1Password",
        "the access key is rotated every 90 days",
        "this token is 12345678 long",
    ],
)
def test_prose_about_a_credential_is_not_one(line: str) -> None:
    assert secrets.scan_line(line) == []
