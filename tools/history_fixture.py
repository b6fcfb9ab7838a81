#!/usr/bin/env python3
# ruff: noqa: E501 - the spec is dialogue: sentences read better on one line
"""Write testdata/transcripts/history: labelled transcripts for `brain lessons` and `brain howto`.

    .venv/bin/python tools/history_fixture.py          # rewrites the fixture from SESSIONS below

Each session is written in its agent's own on-disk format (Claude Code JSONL with tool_use /
tool_result blocks, Codex CLI rollouts with function calls and their outputs in both the JSON and
the freeform shape, Gemini CLI chat JSON with toolCalls). `labels.json` lists every labelled
moment by the key `brain lessons` gives it (agent/session/turn for a correction, agent/session/
call for a retry): `label` true for a lesson, false for a look-alike; and the howto tasks, each a
phrase as a person would ask it and the command that did it. `split` says which part is held out
from tuning (see tools/eval_history.py).

The people, projects and systems are made up.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "testdata" / "transcripts" / "history"


# -- the spec --------------------------------------------------------------------------------


@dataclass
class Step:
    kind: str  # user | agent | shell | write | rejected
    text: str
    code: int | None = 0  # shell: exit status (None: still running in the background)
    out: str = ""
    label: bool | None = None  # True: a lesson; False: a look-alike
    lang: str = "en"
    tool: str = ""  # write: Write/Edit (Claude), apply_patch (Codex), write_file/replace (Gemini)


def U(text: str, label: bool | None = None, lang: str = "en") -> Step:
    return Step("user", text, label=label, lang=lang)


def A(text: str) -> Step:
    return Step("agent", text)


def SH(cmd: str, code: int | None = 0, out: str = "", label: bool | None = None) -> Step:
    return Step("shell", cmd, code, out, label)


def W(path: str, tool: str = "") -> Step:
    return Step("write", path, tool=tool)


def REJ(cmd: str) -> Step:
    return Step("rejected", cmd)


@dataclass
class Session:
    agent: str  # claude | codex | gemini
    sid: str
    cwd: str
    start: str
    split: str  # tune | holdout
    steps: list[Step]
    title: str = ""
    howto: list[tuple[str, str]] = field(default_factory=list)  # (task phrase, command)
    style: str = ""  # codex: "json" (older output shape) or "freeform"


TRACE = (
    'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
    "    import stripe\nModuleNotFoundError: No module named 'stripe'"
)

SESSIONS: list[Session] = [
    # ---------------------------------------------------------------- claude, tune
    Session(
        "claude",
        "a1c0ffee-0001-4000-8000-000000000001",
        "/home/dev/shop",
        "2026-11-16T09:00:00Z",
        "tune",
        title="Add retry to the Paynova webhook",
        howto=[("how do I add a package to the shop", "pnpm add p-retry")],
        steps=[
            U("The Paynova webhook gives up too early. Add a retry around the call to their API."),
            A("I'll add the p-retry package with npm install p-retry and wrap the call."),
            U("No, we use pnpm in this repo, never npm. The lockfile is pnpm-lock.yaml.", True),
            A("Understood, switching to pnpm."),
            SH("pnpm add p-retry", 0, "Packages: +1\nDone in 1.2s"),
            W("/home/dev/shop/src/webhook.ts", "Edit"),
            A("Wrapped the call in pRetry with three attempts. Should I also add a test?"),
            U("Yes please."),
            W("/home/dev/shop/src/webhook.test.ts", "Write"),
            SH(
                "pnpm test",
                1,
                "FAIL src/webhook.test.ts\n  ● retries three times\n    Expected: 3\n    Received: 1",
            ),
            SH("pnpm test -- --runInBand", 0, "PASS src/webhook.test.ts\nTests: 4 passed", True),
            A("Tests pass when run in band: the fake timers leak between parallel workers."),
            U("No problem, thanks for digging into it!", False),
            A("You're welcome."),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0002-4000-8000-000000000002",
        "/home/dev/shop",
        "2026-11-16T14:00:00Z",
        "tune",
        title="Database migration for refunds",
        howto=[("how do I run the database migrations", "pnpm prisma migrate deploy")],
        steps=[
            U("Add a refunds table and run the migration against the dev database."),
            A("Creating the Prisma model for refunds."),
            W("/home/dev/shop/prisma/schema.prisma", "Edit"),
            SH(
                "npx prisma migrate dev --name refunds",
                1,
                "Error: P1001: Can't reach database server at `localhost:5432`",
            ),
            A(
                "The database isn't running. Instead of waiting for you, I'll start it with docker compose."
            ),
            U("Instead of waiting I'll start it myself, one sec.", False),
            A("Sure."),
            U("It's up now."),
            SH("pnpm prisma migrate deploy", 0, "1 migration applied", False),
            A("Migration applied: the refunds table exists now."),
            U("Don't worry about the seed data, I'll add it later.", False),
            A("OK, leaving the seed alone."),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0003-4000-8000-000000000003",
        "/home/dev/shop",
        "2026-11-17T10:00:00Z",
        "tune",
        title="Fix the flaky checkout test",
        howto=[("how did I run only the checkout tests", "pnpm vitest run src/checkout")],
        steps=[
            U("The checkout test fails about one run in five on CI. Can you find out why?"),
            A("Let me look at the test."),
            SH("cat src/checkout/checkout.test.ts", 0, "describe('checkout', ..."),
            SH("grep -rn setTimeout src/checkout", 1, ""),
            SH(
                "grep -rn Date.now src/checkout",
                0,
                "src/checkout/total.ts:12: const now = Date.now()",
                False,
            ),
            A("The total depends on Date.now(). I'll mock the clock with jest.useFakeTimers()."),
            U("We're on vitest, not jest. Use vi.useFakeTimers() instead.", True),
            A("Right, vitest."),
            W("/home/dev/shop/src/checkout/checkout.test.ts", "Edit"),
            SH("pnpm vitest run src/checkout", 0, "✓ src/checkout/checkout.test.ts (6)"),
            A("Six checkout tests pass, fifty runs in a row."),
            U("Great, that looks good.", False),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0004-4000-8000-000000000004",
        "/home/dev/api",
        "2026-11-17T15:00:00Z",
        "tune",
        title="Deploy the API to staging",
        howto=[("how do we deploy the api to staging", "make deploy ENV=staging")],
        steps=[
            U("Deploy the current main of the API to staging."),
            A("I'll run kubectl apply with the production manifests."),
            U(
                "Wait, don't use the production manifests! Staging has its own overlay, and we deploy with make.",
                True,
            ),
            A("Sorry about that. Using the make target."),
            SH(
                "make deploy",
                2,
                "make: *** No rule to make target 'deploy'. Stop.\nUsage: make deploy ENV=<env>",
            ),
            SH(
                "make deploy ENV=staging",
                0,
                "deployment.apps/api configured\nrollout complete",
                True,
            ),
            A("Deployed to staging; rollout complete."),
            U("Perfect, thank you.", False),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0005-4000-8000-000000000005",
        "/home/dev/api",
        "2026-11-18T09:30:00Z",
        "tune",
        title="Python tests for the rates module",
        howto=[("how do I run the api unit tests", "python -m pytest -x tests/unit")],
        steps=[
            U("Write unit tests for the exchange rates module and run them."),
            W("/home/dev/api/tests/unit/test_rates.py", "Write"),
            SH("pytest -x tests/unit", 127, "bash: pytest: command not found"),
            SH("python -m pytest -x tests/unit", 0, "===== 14 passed in 0.41s =====", True),
            A("All 14 tests pass. I used python -m pytest since pytest isn't on PATH."),
            U(
                "That's because you have to activate the venv first. Use .venv/bin/pytest, don't rely on python on PATH.",
                True,
            ),
            A("Good to know."),
            SH(".venv/bin/pytest -x tests/unit", 0, "===== 14 passed in 0.38s ====="),
            A("Same result with the venv's pytest."),
            U("Nope, that's all for today.", False),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0006-4000-8000-000000000006",
        "/home/dev/api",
        "2026-11-18T13:00:00Z",
        "tune",
        title="Rotate the database password",
        howto=[
            (
                "how do I connect to the dev database",
                "psql postgres://app:Zq8rT2vLw9xPm4kQ@db.dev.internal/app -c 'select 1'",
            )
        ],
        steps=[
            U("The dev database password was rotated. Check that the app still connects."),
            SH(
                "psql postgres://app:oldpass@db.dev.internal/app -c 'select 1'",
                2,
                'psql: error: FATAL:  password authentication failed for user "app"',
            ),
            SH(
                "psql postgres://app:Zq8rT2vLw9xPm4kQ@db.dev.internal/app -c 'select 1'",
                0,
                " ?column? \n----------\n        1",
                False,
            ),
            A("Connected with the new password. Should I update the .env file too?"),
            U("No.", False),
            A("OK."),
            U(
                "Why did you paste the password into the shell? Use the PGPASSWORD from the vault next time.",
                True,
            ),
            A("You're right, sorry."),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0007-4000-8000-000000000007",
        "/home/dev/web",
        "2026-11-19T10:00:00Z",
        "tune",
        title="Build the web frontend",
        howto=[("how do I build the frontend for production", "pnpm build --mode production")],
        steps=[
            U("Build the frontend for production and tell me the bundle size."),
            SH("pnpm build", 1, "error: Missing env VITE_API_URL"),
            SH("ls -la", 0, ".env.production\npackage.json"),
            SH(
                "pnpm build --mode production",
                0,
                "dist/assets/index.js  212.4 kB │ gzip: 68.1 kB",
                True,
            ),
            A(
                "The production build is 212 kB (68 kB gzipped). It needed --mode production to pick up .env.production."
            ),
            U("Actually, can you also check the size of the vendor chunk?", False),
            A("The vendor chunk is 140 kB."),
            U("No worries if it's big, we'll split it later.", False),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0008-4000-8000-000000000008",
        "/home/dev/web",
        "2026-11-19T16:00:00Z",
        "tune",
        title="Lint errors in the web app",
        howto=[("how do I fix the lint errors automatically", "pnpm eslint . --fix")],
        steps=[
            U("There are lint errors after the merge. Clean them up."),
            SH(
                "pnpm lint",
                1,
                "✖ 23 problems (23 errors, 0 warnings)\n  19 errors potentially fixable with the `--fix` option.",
            ),
            SH("pnpm eslint . --fix", 0, ""),
            SH("pnpm lint", 1, "✖ 4 problems (4 errors, 0 warnings)"),
            A(
                "Four errors are left; I'll disable the rule for those lines with eslint-disable comments."
            ),
            U("Please don't add eslint-disable comments. Fix the code properly.", True),
            A("Will do."),
            W("/home/dev/web/src/App.tsx", "Edit"),
            SH("pnpm lint", 0, "no problems", False),
            A("Lint is clean."),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0009-4000-8000-000000000009",
        "/home/dev/infra",
        "2026-11-20T09:00:00Z",
        "tune",
        title="Terraform plan for the new bucket",
        howto=[("how did I plan the terraform changes", "terraform -chdir=envs/prod plan")],
        steps=[
            U("Plan the Terraform change that adds the exports bucket."),
            SH("terraform plan", 1, "Error: No configuration files"),
            SH(
                "terraform -chdir=envs/prod plan",
                0,
                "Plan: 1 to add, 0 to change, 0 to destroy.",
                True,
            ),
            A("The plan adds one bucket. Shall I apply it?"),
            U("no, not yet", False),
            A("OK, I'll leave it planned."),
            U(
                "Hmm, the bucket name is wrong: it should be acme-exports-prod, not exports-prod.",
                True,
            ),
            A("Renaming it."),
            W("/home/dev/infra/envs/prod/buckets.tf", "Edit"),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0010-4000-8000-000000000010",
        "/home/dev/infra",
        "2026-11-20T14:00:00Z",
        "tune",
        title="Docker image for the worker",
        howto=[("how do I start the worker locally", "docker compose up -d worker")],
        steps=[
            U("Start the worker locally so I can test the queue."),
            SH("docker-compose up -d worker", 127, "bash: docker-compose: command not found"),
            SH("docker compose up -d worker", 0, "Container infra-worker-1  Started", True),
            A(
                "The worker is running (docker compose v2 plugin; the old docker-compose binary is gone)."
            ),
            U("Thanks! Instead of the full stack I only need the worker, so that's right.", False),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0011-4000-8000-000000000011",
        "/home/dev/shop",
        "2026-11-21T09:00:00Z",
        "tune",
        title="Paynova error handling",
        steps=[
            U("When Paynova returns a 409, treat it as success."),
            A("I'll catch the 409 and throw a custom DuplicatePaymentError so callers can decide."),
            U(
                "That's not what I asked. A 409 means the payment already went through, just return the existing payment.",
                True,
            ),
            A("Understood."),
            W("/home/dev/shop/src/paynova.ts", "Edit"),
            A("Done: a 409 now returns the stored payment."),
            U(
                "Here's the log from staging:\n```\nERROR wrong status 409 from paynova\n  at handle (paynova.ts:40)\n```\nIs that the old build?",
                False,
            ),
            A("Yes, that's the old build: the line number is from before the change."),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0012-4000-8000-000000000012",
        "/home/dev/shop",
        "2026-11-21T15:00:00Z",
        "tune",
        title="Release notes",
        steps=[
            U("Draft release notes for 2.4 from the merged PRs."),
            A(
                "Here is the draft. I grouped the changes by area. Do you want me to commit it as CHANGELOG.md?"
            ),
            U("No, just paste it in the PR description.", False),
            A("Done."),
            U("Also don't commit anything to main directly, open a PR.", True),
            A("Noted."),
            SH(
                "git push origin release-notes",
                1,
                "fatal: The current branch release-notes has no upstream branch.",
            ),
            SH(
                "git push -u origin release-notes",
                0,
                "branch 'release-notes' set up to track 'origin/release-notes'.",
                True,
            ),
        ],
    ),
    Session(
        "claude",
        "a1c0ffee-0013-4000-8000-000000000013",
        "/home/dev/api",
        "2026-11-21T17:00:00Z",
        "tune",
        title="Refactor the invoice totals",
        howto=[("how do I run the invoice totals tests", "pytest tests/test_totals.py -q")],
        steps=[
            U("Refactor the invoice totals into a pure function."),
            A(
                "I moved the calculation into compute_totals() and kept the old function as a wrapper. Sorry it took so long."
            ),
            U("No need to apologize.", False),
            A("Shall I delete the wrapper?"),
            U("Not sure yet, let me think about it.", False),
            A("OK. I'll also rename the module to totals_v2.py."),
            U("Don't rename modules without asking, other services import it.", True),
            A("Understood, I reverted the rename."),
            U("Never mind the wrapper, I found who uses it.", False),
            SH("pytest tests/test_totals.py", 1, "E   AssertionError: assert 10.0 == 10.01"),
            SH("pytest tests/test_totals.py", 0, "1 passed", False),
            SH("pytest tests/test_invoice.py -q", 1, "FAILED tests/test_invoice.py::test_vat"),
            SH("pytest tests/test_totals.py -q", 0, "3 passed", False),
            A("Done for now."),
            U("Stop for today, we'll continue tomorrow.", False),
        ],
    ),
    # ---------------------------------------------------------------- codex, tune
    Session(
        "codex",
        "0196b000-0001-7000-8000-00000000c001",
        "/home/dev/api",
        "2026-11-22T09:00:00Z",
        "tune",
        style="json",
        howto=[("how do I regenerate the openapi client", "make openapi-client")],
        steps=[
            U("Regenerate the OpenAPI client after the new endpoints."),
            SH(
                "openapi-generator generate -i openapi.yaml -g typescript-fetch",
                127,
                "bash: openapi-generator: command not found",
            ),
            SH("make openapi-client", 0, "Generated 42 files in clients/ts", True),
            A("Regenerated the client with make openapi-client (it runs the generator in docker)."),
            U("No problem that it took a while.", False),
        ],
    ),
    Session(
        "codex",
        "0196b000-0002-7000-8000-00000000c002",
        "/home/dev/api",
        "2026-11-22T13:00:00Z",
        "tune",
        style="freeform",
        howto=[("how do I check the types in the api", "uv run mypy src")],
        steps=[
            U("Run the type checker on the API and fix what it finds."),
            SH("mypy src", 127, "bash: mypy: command not found"),
            SH(
                "uv run mypy src", 1, "src/rates.py:12: error: Incompatible return value type", True
            ),
            W("src/rates.py", "apply_patch"),
            SH("uv run mypy src", 0, "Success: no issues found in 31 source files"),
            A("Type check passes. I used uv run since mypy isn't installed globally."),
            U("Right, we always run tools through uv in this repo.", False),
        ],
    ),
    Session(
        "codex",
        "0196b000-0003-7000-8000-00000000c003",
        "/home/dev/web",
        "2026-11-23T10:00:00Z",
        "tune",
        style="freeform",
        howto=[("how did we update the snapshots", "pnpm vitest run -u")],
        steps=[
            U("The snapshot tests fail after the button redesign. Update them."),
            A("I'll delete the __snapshots__ folder and regenerate everything."),
            U(
                "Don't delete the snapshots folder, just update the ones that changed with -u.",
                True,
            ),
            A("OK."),
            SH("pnpm vitest run -u", 0, "Snapshots  7 updated"),
            A("Seven snapshots updated."),
            U("Not bad! Thanks.", False),
        ],
    ),
    Session(
        "codex",
        "0196b000-0004-7000-8000-00000000c004",
        "/home/dev/infra",
        "2026-11-23T15:00:00Z",
        "tune",
        style="json",
        howto=[
            ("how do I see the logs of the api pods", "kubectl logs -n api deploy/api --since=1h")
        ],
        steps=[
            U("Why is the API returning 502s? Check the pod logs."),
            SH(
                "kubectl logs deploy/api",
                1,
                'Error from server (NotFound): deployments.apps "api" not found',
            ),
            SH(
                "kubectl logs -n api deploy/api --since=1h",
                0,
                "panic: runtime error: invalid memory address",
                True,
            ),
            A("The API panics on a nil pointer in the rate limiter since the last deploy."),
            U(
                "Ah, it's in the api namespace, good catch. Stop, don't restart the pods yet, I want to look first.",
                True,
            ),
            A("I won't touch them."),
        ],
    ),
    Session(
        "codex",
        "0196b000-0005-7000-8000-00000000c005",
        "/home/dev/shop",
        "2026-11-24T09:00:00Z",
        "tune",
        style="freeform",
        steps=[
            U("Bump the app version to 2.5.0."),
            A("Editing package.json by hand to 2.5.0."),
            U("Use pnpm version minor instead, it also tags the commit.", True),
            A("Sure."),
            SH("pnpm version minor", 0, "v2.5.0"),
            U("Nein, danke, das reicht so.", False, "de"),
        ],
    ),
    Session(
        "codex",
        "0196b000-0006-7000-8000-00000000c006",
        "/home/dev/api",
        "2026-11-24T14:00:00Z",
        "tune",
        style="json",
        steps=[
            U("Warum schlagen die Integrationstests fehl?"),
            SH(
                "pytest tests/integration",
                1,
                "E   ConnectionRefusedError: [Errno 111] Connection refused",
            ),
            SH("docker ps", 0, "CONTAINER ID   IMAGE"),
            A("Die Tests brauchen Redis. Ich starte Redis mit apt install redis-server."),
            U(
                "Nein, nimm lieber den Redis-Container aus docker-compose.yml, wir installieren nichts global.",
                True,
                "de",
            ),
            A("Verstanden."),
            SH("docker compose up -d redis", 0, "Container api-redis-1  Started"),
            SH("pytest tests/integration", 0, "===== 22 passed in 3.10s =====", False),
            A("Alle 22 Integrationstests laufen jetzt durch."),
            U("Kein Problem, danke!", False, "de"),
        ],
    ),
    # ---------------------------------------------------------------- gemini, tune
    Session(
        "gemini",
        "7e3c0000-0001-4000-8000-00000000be01",
        "",
        "2026-11-25T09:00:00Z",
        "tune",
        title="Docs site build",
        howto=[("how do I build the docs site", "mkdocs build --strict")],
        steps=[
            U("Build the docs site and tell me about broken links."),
            SH(
                "mkdocs build",
                0,
                "INFO - Documentation built in 2.1 seconds\nWARNING - Doc file 'api.md' contains a link to 'rates.md', not found",
            ),
            A("Built, with one broken link warning. I'll rerun in strict mode."),
            SH("mkdocs build --strict", 1, "Aborted with 1 warnings in strict mode!"),
            W("/home/dev/docs/docs/api.md", "replace"),
            SH("mkdocs build --strict", 0, "INFO - Documentation built in 2.0 seconds", False),
            A("Fixed the link; the strict build passes."),
            U("No te preocupes por los avisos de estilo.", False, "es"),
        ],
    ),
    Session(
        "gemini",
        "7e3c0000-0002-4000-8000-00000000be02",
        "",
        "2026-11-25T14:00:00Z",
        "tune",
        title="Limpiar ramas viejas",
        howto=[
            (
                "how do I delete merged branches",
                "git branch --merged main | grep -v main | xargs git branch -d",
            )
        ],
        steps=[
            U("Borra las ramas locales que ya están fusionadas en main."),
            A("Voy a borrar todas las ramas con git branch -D."),
            U(
                "No, usa -d en minúscula para que git se niegue a borrar ramas sin fusionar.",
                True,
                "es",
            ),
            A("De acuerdo."),
            SH(
                "git branch --merged main | grep -v main | xargs git branch -d",
                0,
                "Deleted branch feature/x (was 1a2b3c4).",
            ),
            A("Borré 6 ramas fusionadas."),
            U("Perfecto, gracias.", False, "es"),
        ],
    ),
    Session(
        "gemini",
        "7e3c0000-0003-4000-8000-00000000be03",
        "",
        "2026-11-26T10:00:00Z",
        "tune",
        title="Format the Go service",
        howto=[("how do I format the go code", "gofmt -w ./cmd ./internal")],
        steps=[
            U("Format the Go code in the billing service."),
            SH(
                "go fmt ./...",
                1,
                "go: go.mod file not found in current directory or any parent directory",
            ),
            SH(
                "cd /home/dev/billing && go fmt ./...",
                1,
                "pattern ./...: directory prefix . does not contain main module",
            ),
            SH("gofmt -w ./cmd ./internal", 0, "", True),
            A("Formatted cmd/ and internal/ with gofmt."),
            U(
                "Ce n'est pas ça : on utilise goimports, pas gofmt, pour trier les imports aussi.",
                True,
                "fr",
            ),
            A("D'accord, je relance avec goimports."),
            SH("goimports -w ./cmd ./internal", 0, ""),
        ],
    ),
    # ---------------------------------------------------------------- claude, holdout
    Session(
        "claude",
        "b2c0ffee-0001-4000-8000-000000000101",
        "/home/dev/mobile",
        "2026-11-26T09:00:00Z",
        "holdout",
        title="iOS build for TestFlight",
        howto=[("how do I ship an ios build to testflight", "bundle exec fastlane beta")],
        steps=[
            U("Ship a new iOS build to TestFlight."),
            SH("fastlane beta", 1, "[!] Could not find fastlane 2.212.0 in locally installed gems"),
            SH(
                "bundle exec fastlane beta",
                0,
                "Successfully uploaded the new binary to App Store Connect",
                True,
            ),
            A("Uploaded build 412 to TestFlight. Want me to post in the release channel?"),
            U("No thanks.", False),
            A("OK."),
            U(
                "One more thing: you bumped the build number by hand. Don't do that, fastlane increments it.",
                True,
            ),
        ],
    ),
    Session(
        "claude",
        "b2c0ffee-0002-4000-8000-000000000102",
        "/home/dev/mobile",
        "2026-11-26T15:00:00Z",
        "holdout",
        title="Android lint",
        howto=[("how do I lint the android app", "./gradlew :app:lintDebug")],
        steps=[
            U("Run the Android lint and summarise the warnings."),
            SH(
                "./gradlew lint",
                1,
                "FAILURE: Build failed with an exception.\n* What went wrong: Task 'lint' is ambiguous",
            ),
            SH(
                "./gradlew :app:lintDebug",
                0,
                "BUILD SUCCESSFUL in 48s\nLint found 12 warnings",
                True,
            ),
            A("12 warnings, mostly unused resources."),
            U("Don't worry about unused resources, they're used by the flavors.", False),
            A("Got it, I'll skip those."),
            U(
                "Also, I'd rather you not touch the gradle wrapper version, it's pinned on purpose.",
                True,
            ),
        ],
    ),
    Session(
        "claude",
        "b2c0ffee-0003-4000-8000-000000000103",
        "/home/dev/shop",
        "2026-11-27T09:00:00Z",
        "holdout",
        title="Stripe SDK import error",
        howto=[("how did I install the python dependencies", "uv sync --frozen")],
        steps=[
            U(f"The payment script crashes:\n{TRACE}", False),
            A("The stripe module is missing. I'll pip install stripe."),
            U("No, don't pip install anything, dependencies come from uv.lock. Run uv sync.", True),
            SH(
                "uv sync",
                1,
                "error: The lockfile at `uv.lock` needs to be updated, but `--locked` was provided.",
            ),
            SH("uv sync --frozen", 0, "Installed 3 packages in 41ms", True),
            A("Dependencies installed from the lockfile."),
        ],
    ),
    Session(
        "claude",
        "b2c0ffee-0004-4000-8000-000000000104",
        "/home/dev/api",
        "2026-11-27T13:00:00Z",
        "holdout",
        title="Seed the local database",
        howto=[("how do I seed the local database", "python manage.py loaddata fixtures/dev.json")],
        steps=[
            U("Seed the local database with the dev fixtures."),
            SH(
                "python manage.py loaddata dev.json",
                1,
                "CommandError: No fixture named 'dev' found.",
            ),
            SH(
                "python manage.py loaddata fixtures/dev.json",
                0,
                "Installed 128 object(s) from 1 fixture(s)",
                False,
            ),
            A("Loaded 128 objects."),
            U("Thanks, that works.", False),
            SH("python manage.py migrate", 1, "django.db.utils.OperationalError: no such table"),
            SH("python manage.py showmigrations", 0, "[X] 0001_initial", False),
        ],
    ),
    Session(
        "claude",
        "b2c0ffee-0005-4000-8000-000000000105",
        "/home/dev/web",
        "2026-11-27T16:00:00Z",
        "holdout",
        title="Storybook",
        howto=[("how do I start storybook", "pnpm storybook --no-open")],
        steps=[
            U("Start Storybook so I can review the new buttons."),
            SH("pnpm storybook", None, "Command running in background with ID: b1"),
            A("Storybook is starting in the background; it will open a browser tab."),
            U("Stop, I'm on a remote box, it can't open a browser. Run it with --no-open.", True),
            SH(
                "pnpm storybook --no-open",
                0,
                "Storybook 8.1 started\nLocal: http://localhost:6006/",
            ),
            A("Storybook runs on port 6006."),
            U("I said port 6007, 6006 is taken by the other project.", True),
        ],
    ),
    Session(
        "claude",
        "b2c0ffee-0006-4000-8000-000000000106",
        "/home/dev/infra",
        "2026-11-28T09:00:00Z",
        "holdout",
        title="Renew the TLS certificate",
        howto=[
            ("how do I renew the tls certificate", "sudo certbot renew --cert-name api.acme.test")
        ],
        steps=[
            U("The TLS certificate for the API expires on Friday, renew it."),
            SH(
                "certbot renew",
                1,
                "Could not bind TCP port 80 because you don't have the appropriate permissions",
            ),
            SH(
                "sudo certbot renew --cert-name api.acme.test",
                0,
                "Congratulations, all renewals succeeded",
                True,
            ),
            A("Renewed the certificate for api.acme.test; it's valid until February."),
            U("No rush on the other certs, they're good until spring.", False),
            A("OK."),
            U(
                "Also, the reload: it's nginx -s reload, not a full restart, we don't want to drop connections.",
                True,
            ),
        ],
    ),
    Session(
        "claude",
        "b2c0ffee-0007-4000-8000-000000000107",
        "/home/dev/api",
        "2026-11-28T13:00:00Z",
        "holdout",
        title="Benchmark the search endpoint",
        howto=[
            (
                "how do I benchmark the search endpoint",
                "hey -n 2000 -c 50 http://localhost:8000/search?q=paris",
            )
        ],
        steps=[
            U("Benchmark the search endpoint locally."),
            REJ("ab -n 2000 -c 50 http://localhost:8000/search?q=paris"),
            U("[Request interrupted by user for tool use]"),
            U("We use hey for load tests, not ab.", True),
            SH(
                "hey -n 2000 -c 50 http://localhost:8000/search?q=paris",
                0,
                "Requests/sec: 812.4\n  99% in 0.1102 secs",
            ),
            A("812 requests per second, p99 110 ms."),
            U("Not a problem, the p99 is fine for now.", False),
        ],
    ),
    # ---------------------------------------------------------------- codex, holdout
    Session(
        "codex",
        "0196b000-0101-7000-8000-00000000c101",
        "/home/dev/billing",
        "2026-11-28T16:00:00Z",
        "holdout",
        style="freeform",
        howto=[("how do I run the billing service tests", "go test ./... -race")],
        steps=[
            U("Run the billing tests with the race detector."),
            SH("go test -race", 1, "no Go files in /home/dev/billing"),
            SH("go test ./... -race", 0, "ok  \tbilling/internal/invoice\t1.204s", True),
            A("All packages pass with -race."),
            U(
                "En vez de correr todo, la próxima vez usa solo ./internal/..., es más rápido.",
                True,
                "es",
            ),
            A("Entendido."),
        ],
    ),
    Session(
        "codex",
        "0196b000-0102-7000-8000-00000000c102",
        "/home/dev/billing",
        "2026-11-29T09:00:00Z",
        "holdout",
        style="json",
        howto=[("how did we generate the sql code", "sqlc generate -f db/sqlc.yaml")],
        steps=[
            U("Regenerate the database code after the schema change."),
            SH(
                "sqlc generate",
                1,
                "error parsing configuration files. sqlc.(yaml|yml) or sqlc.json: file does not exist",
            ),
            SH("sqlc generate -f db/sqlc.yaml", 0, "", True),
            A("Regenerated the queries into internal/db."),
            U(
                "C'est faux, les requêtes doivent aller dans internal/store, pas internal/db.",
                True,
                "fr",
            ),
            A("Je corrige la configuration."),
            W("db/sqlc.yaml", "apply_patch"),
            U("Pas de souci, merci.", False, "fr"),
        ],
    ),
    Session(
        "codex",
        "0196b000-0103-7000-8000-00000000c103",
        "/home/dev/api",
        "2026-11-29T11:00:00Z",
        "holdout",
        style="freeform",
        steps=[
            U("Check why the CI lint job fails."),
            SH("ruff check .", 1, "src/app.py:3:1: F401 `os` imported but unused"),
            SH("ruff check . --fix", 0, "Found 1 error (1 fixed, 0 remaining).", True),
            A("Fixed the unused import."),
            U("Wait for the CI run to finish before you merge.", False),
            A("I'll wait."),
            U("Otra cosa: no hagas merge con squash, usamos rebase.", True, "es"),
        ],
    ),
    Session(
        "codex",
        "0196b000-0104-7000-8000-00000000c104",
        "/home/dev/web",
        "2026-11-29T14:00:00Z",
        "holdout",
        style="json",
        steps=[
            U("The e2e tests are failing, have a look."),
            SH("pnpm playwright test", 1, "Error: browserType.launch: Executable doesn't exist"),
            SH("pnpm playwright install chromium", 0, "Downloading Chromium 120.0"),
            SH("pnpm playwright test", 0, "24 passed (41s)", False),
            A("Installed the browser; all 24 e2e tests pass."),
            U("Great. Don't forget to mention it in the README.", False),
        ],
    ),
    Session(
        "codex",
        "0196b000-0105-7000-8000-00000000c105",
        "/home/dev/web",
        "2026-11-29T17:00:00Z",
        "holdout",
        style="freeform",
        steps=[
            U("Add a dark mode toggle to the settings page."),
            W("src/settings/DarkMode.tsx", "apply_patch"),
            A("Added the toggle. It stores the choice in localStorage."),
            U("Non merci, ça ira comme ça pour le style.", False, "fr"),
            A("¿Quieres que añada un test?"),
            U("No, gracias, así está bien.", False, "es"),
            A("I'll store it in a cookie instead so the server can render the right theme."),
            U("Keep it in localStorage, the server doesn't render pages.", True),
            SH("pnpm tsc --noEmit", 2, "src/settings/DarkMode.tsx(4,10): error TS2305"),
            SH("pnpm vitest run src/settings", 0, "✓ 3 passed", False),
        ],
    ),
    # ---------------------------------------------------------------- gemini, holdout
    Session(
        "gemini",
        "7e3c0000-0101-4000-8000-00000000be11",
        "",
        "2026-11-30T09:00:00Z",
        "holdout",
        title="Nightly backup script",
        howto=[
            ("how do I back up the production database", "pg_dump -Fc -d app -f /backups/app.dump")
        ],
        steps=[
            U("Schreib ein Backup-Skript für die Produktionsdatenbank."),
            SH(
                "pg_dump -F custom app /backups/app.dump",
                1,
                'pg_dump: error: too many command-line arguments (first is "/backups/app.dump")',
            ),
            SH("pg_dump -Fc -d app -f /backups/app.dump", 0, "", True),
            A("Das Backup liegt in /backups/app.dump."),
            U(
                "Das ist falsch, Backups gehören nach /srv/backups, nicht nach /backups.",
                True,
                "de",
            ),
            A("Ich verschiebe es."),
            U("Keine Sorge, das alte Verzeichnis lösche ich selbst.", False, "de"),
        ],
    ),
    Session(
        "gemini",
        "7e3c0000-0102-4000-8000-00000000be12",
        "",
        "2026-11-30T13:00:00Z",
        "holdout",
        title="Translate the error messages",
        steps=[
            U("Traduis les messages d'erreur du formulaire en français."),
            W("/home/dev/web/src/i18n/fr.json", "write_file"),
            A("J'ai traduit 18 messages et je les ai mis dans fr.json."),
            U(
                "Non, pas comme ça : garde les clés en anglais, traduis seulement les valeurs.",
                True,
                "fr",
            ),
            A("Compris, je corrige."),
            W("/home/dev/web/src/i18n/fr.json", "write_file"),
            U("De rien, c'est parfait maintenant.", False, "fr"),
        ],
    ),
    Session(
        "gemini",
        "7e3c0000-0103-4000-8000-00000000be13",
        "",
        "2026-11-30T16:00:00Z",
        "holdout",
        title="Disk space on the build box",
        howto=[
            ("how did we free disk space on the build machine", "docker system prune -af --volumes")
        ],
        steps=[
            U("The build box is out of disk space. Free some."),
            SH("df -h /", 0, "/dev/sda1  100G  99G  1G  99% /"),
            SH("docker system prune -af --volumes", 0, "Total reclaimed space: 41.2GB"),
            A("Reclaimed 41 GB from unused Docker images and volumes."),
            U(
                "Please don't prune volumes on that box again, the cache volume takes an hour to rebuild.",
                True,
            ),
            A("Understood, only images next time."),
            SH(
                "du -sh /var/cache/build",
                1,
                "du: cannot access '/var/cache/build': No such file or directory",
            ),
            SH("du -sh /var/cache/ci-build", 0, "12G\t/var/cache/ci-build", False),
        ],
    ),
]


# -- writers ---------------------------------------------------------------------------------


def uid(*parts: str) -> str:
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def stamps(start: str) -> Any:
    t = datetime.fromisoformat(start.replace("Z", "+00:00"))
    while True:
        yield t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
        t += timedelta(seconds=20)


class Labels:
    def __init__(self) -> None:
        self.moments: list[dict[str, Any]] = []
        self.howto: list[dict[str, str]] = []

    def add(self, s: Session, step: Step, key: str, kind: str) -> None:
        if step.label is None:
            return
        self.moments.append(
            {"key": key, "kind": kind, "label": step.label, "lang": step.lang, "split": s.split}
        )


REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)


def claude_result(step: Step) -> tuple[str, bool]:
    """A Bash tool_result's content and is_error, as Claude Code writes them."""
    if step.kind == "rejected":
        return REJECTED, True
    if step.code is None:  # run_in_background: it says it started
        return step.out, False
    if step.code:
        return f"Exit code {step.code}\n{step.out}", True
    return step.out or "(no output)", False


def claude(s: Session, labels: Labels) -> None:
    folder = OUT / "claude" / "projects" / s.cwd.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    clock = stamps(s.start)
    lines: list[dict[str, Any]] = []
    parent: str | None = None

    def rec(kind: str, content: Any, n: int, **extra: Any) -> dict[str, Any]:
        nonlocal parent
        me = uid(s.sid, str(n), kind)
        r: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": s.cwd,
            "sessionId": s.sid,
            "version": "2.0.30",
            "gitBranch": "main",
            "type": kind,
            "uuid": me,
            "timestamp": next(clock),
        }
        if kind == "user":
            r["message"] = {"role": "user", "content": content}
        else:
            r["message"] = {
                "id": f"msg_{me[:12]}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": content,
                "stop_reason": None,
                "usage": {"input_tokens": 12, "output_tokens": 40},
            }
            r["requestId"] = f"req_{me[:10]}"
        r.update(extra)
        parent = me
        lines.append(r)
        return r

    for n, step in enumerate(s.steps):
        if step.kind == "user":
            r = rec("user", step.text, n)
            labels.add(s, step, f"claude/{s.sid}/{r['uuid']}", "correction")
        elif step.kind == "agent":
            rec("assistant", [{"type": "text", "text": step.text}], n)
        elif step.kind in ("shell", "rejected"):
            tool = f"toolu_{uid(s.sid, str(n), 'tool')[:24].replace('-', '')}"
            args: dict[str, Any] = {"command": step.text, "description": "Run a command"}
            if step.code is None:
                args["run_in_background"] = True
            rec("assistant", [{"type": "tool_use", "id": tool, "name": "Bash", "input": args}], n)
            body, error = claude_result(step)
            result = {
                "type": "tool_result",
                "tool_use_id": tool,
                "content": body,
                "is_error": error,
            }
            tur: Any = {"stdout": step.out, "stderr": "", "interrupted": False, "isImage": False}
            if error:
                tur = f"Error: {body}"
            rec("user", [result], n * 1000 + 1, toolUseResult=tur)
            labels.add(s, step, f"claude/{s.sid}/{tool}", "retry")
        elif step.kind == "write":
            tool = f"toolu_{uid(s.sid, str(n), 'write')[:24].replace('-', '')}"
            name = step.tool or "Write"
            args = {"file_path": step.text}
            args.update(
                {"content": "// generated\n"}
                if name == "Write"
                else {"old_string": "a", "new_string": "b"}
            )
            rec("assistant", [{"type": "tool_use", "id": tool, "name": name, "input": args}], n)
            body = (
                f"File created successfully at: {step.text}"
                if name == "Write"
                else f"The file {step.text} has been updated."
            )
            result = {"type": "tool_result", "tool_use_id": tool, "content": body}
            rec("user", [result], n * 1000 + 1)
    lines.append({"type": "ai-title", "aiTitle": s.title, "sessionId": s.sid})
    path = folder / f"{s.sid}.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")


def codex_turn_id(session: str, ts: str, role: str, body: str) -> str:
    # brain.recall.adapters.stable_id: Codex messages carry no id
    return hashlib.sha256("\x1f".join((session, ts, role, body)).encode()).hexdigest()[:32]


def codex(s: Session, labels: Labels) -> None:
    day = s.start[:10].split("-")
    folder = OUT / "codex" / "sessions" / day[0] / day[1] / day[2]
    folder.mkdir(parents=True, exist_ok=True)
    clock = stamps(s.start)
    lines: list[dict[str, Any]] = []
    t0 = next(clock)
    lines.append(
        {
            "timestamp": t0,
            "type": "session_meta",
            "payload": {
                "id": s.sid,
                "timestamp": t0,
                "cwd": s.cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.46.0" if s.style == "json" else "0.63.0",
                "instructions": None,
                "source": "cli",
                "model_provider": "openai",
                "git": {"branch": "main"},
            },
        }
    )
    lines.append(
        {
            "timestamp": next(clock),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": f"<environment_context>\n  <cwd>{s.cwd}</cwd>\n</environment_context>",
                    }
                ],
            },
        }
    )
    first = True
    for n, step in enumerate(s.steps):
        ts = next(clock)
        if step.kind in ("user", "agent"):
            role = "user" if step.kind == "user" else "assistant"
            kind = "input_text" if role == "user" else "output_text"
            item = {"type": "message", "role": role, "content": [{"type": kind, "text": step.text}]}
            lines.append({"timestamp": ts, "type": "response_item", "payload": item})
            if role == "user":
                lines.append(
                    {
                        "timestamp": ts,
                        "type": "event_msg",
                        "payload": {"type": "user_message", "message": step.text, "images": []},
                    }
                )
                if first:
                    lines.append(
                        {
                            "timestamp": ts,
                            "type": "turn_context",
                            "payload": {
                                "cwd": s.cwd,
                                "approval_policy": "on-request",
                                "sandbox_policy": {"mode": "workspace-write"},
                                "model": "gpt-5-codex",
                            },
                        }
                    )
                    first = False
                tid = codex_turn_id(s.sid, ts, "user", step.text)
                labels.add(s, step, f"codex/{s.sid}/{tid}", "correction")
            else:
                lines.append(
                    {
                        "timestamp": ts,
                        "type": "event_msg",
                        "payload": {"type": "agent_message", "message": step.text},
                    }
                )
        elif step.kind == "shell":
            call = f"call_{uid(s.sid, str(n))[:22].replace('-', '')}"
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": "**Running a command**"}],
                        "content": None,
                        "encrypted_content": "gAAAAB" + "x" * 40,
                    },
                }
            )
            if s.style == "json":
                args = {
                    "command": ["bash", "-lc", step.text],
                    "workdir": s.cwd,
                    "timeout_ms": 120000,
                }
                fc = {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps(args),
                    "call_id": call,
                }
                out = json.dumps(
                    {
                        "output": step.out,
                        "metadata": {"exit_code": step.code, "duration_seconds": 0.4},
                    }
                )
            else:
                args = {"command": step.text, "workdir": s.cwd, "timeout_ms": 120000}
                fc = {
                    "type": "function_call",
                    "name": "shell_command",
                    "arguments": json.dumps(args),
                    "call_id": call,
                }
                out = f"Exit code: {step.code}\nWall time: 0.4 seconds\nOutput:\n{step.out}"
            lines.append({"timestamp": ts, "type": "response_item", "payload": fc})
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {"type": "function_call_output", "call_id": call, "output": out},
                }
            )
            lines.append(
                {
                    "timestamp": ts,
                    "type": "event_msg",
                    "payload": {"type": "token_count", "info": None, "rate_limits": None},
                }
            )
            labels.add(s, step, f"codex/{s.sid}/{call}", "retry")
        elif step.kind == "write":
            call = f"call_{uid(s.sid, str(n), 'patch')[:22].replace('-', '')}"
            patch = (
                f"*** Begin Patch\n*** Update File: {step.text}\n@@\n-old\n+new\n*** End Patch\n"
            )
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call,
                        "name": "apply_patch",
                        "input": patch,
                    },
                }
            )
            lines.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "custom_tool_call_output",
                        "call_id": call,
                        "output": f"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM {step.text}\n",
                    },
                }
            )
    stamp = s.start.replace(":", "-").replace("Z", "")
    path = folder / f"rollout-{stamp}-{s.sid}.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")


def gemini(s: Session, labels: Labels) -> None:
    folder = (
        OUT
        / "gemini"
        / ".gemini"
        / "tmp"
        / hashlib.sha256(s.sid.encode()).hexdigest()[:16]
        / "chats"
    )
    folder.mkdir(parents=True, exist_ok=True)
    clock = stamps(s.start)
    messages: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        if pending:
            messages.append(
                {
                    "id": uid(s.sid, "tools", str(len(messages))),
                    "timestamp": pending[0]["timestamp"],
                    "type": "gemini",
                    "content": "",
                    "toolCalls": list(pending),
                    "thoughts": [],
                    "model": "gemini-2.5-pro",
                }
            )
            pending.clear()

    for n, step in enumerate(s.steps):
        ts = next(clock)
        if step.kind in ("user", "agent"):
            flush()
            mid = uid(s.sid, str(n))
            if step.kind == "user":
                messages.append({"id": mid, "timestamp": ts, "type": "user", "content": step.text})
                labels.add(s, step, f"gemini/{s.sid}/{mid}", "correction")
            else:
                messages.append(
                    {
                        "id": mid,
                        "timestamp": ts,
                        "type": "gemini",
                        "content": step.text,
                        "thoughts": [],
                        "tokens": {
                            "input": 100,
                            "output": 30,
                            "cached": 0,
                            "thoughts": 5,
                            "tool": 0,
                            "total": 135,
                        },
                        "model": "gemini-2.5-pro",
                    }
                )
        elif step.kind == "shell":
            cid = f"run_shell_command-{1764000000000 + n}-{uid(s.sid, str(n))[:12]}"
            parts = [f"Output: {step.out or '(empty)'}"]
            if step.code:
                parts.append(f"Exit Code: {step.code}")
            parts.append("Process Group PGID: 4242")
            output = "\n".join(parts)
            pending.append(
                {
                    "id": cid,
                    "name": "run_shell_command",
                    "args": {"command": step.text, "description": "Run a command"},
                    "result": [
                        {
                            "functionResponse": {
                                "id": cid,
                                "name": "run_shell_command",
                                "response": {"output": output},
                            }
                        }
                    ],
                    "status": "success",
                    "timestamp": ts,
                    "resultDisplay": step.out,
                    "displayName": "Shell",
                    "description": "Run a command",
                    "renderOutputAsMarkdown": False,
                }
            )
            labels.add(s, step, f"gemini/{s.sid}/{cid}", "retry")
        elif step.kind == "write":
            name = step.tool or "write_file"
            cid = f"{name}-{1764000000000 + n}-{uid(s.sid, str(n))[:12]}"
            args = (
                {"file_path": step.text, "content": "{}"}
                if name == "write_file"
                else {"file_path": step.text, "old_string": "a", "new_string": "b"}
            )
            pending.append(
                {
                    "id": cid,
                    "name": name,
                    "args": args,
                    "result": [
                        {
                            "functionResponse": {
                                "id": cid,
                                "name": name,
                                "response": {"output": f"Successfully wrote to {step.text}."},
                            }
                        }
                    ],
                    "status": "success",
                    "timestamp": ts,
                    "displayName": "WriteFile",
                    "renderOutputAsMarkdown": True,
                }
            )
    flush()
    doc = {
        "sessionId": s.sid,
        "projectHash": hashlib.sha256(s.sid.encode()).hexdigest(),
        "startTime": s.start.replace("Z", ".000Z"),
        "lastUpdated": messages[-1]["timestamp"],
        "messages": messages,
        "summary": s.title,
    }
    stamp = s.start[:16].replace(":", "-").replace("T", "T")
    path = folder / f"session-{stamp}-{s.sid[:8]}.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", "utf-8")


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    labels = Labels()
    writers = {"claude": claude, "codex": codex, "gemini": gemini}
    for s in SESSIONS:
        writers[s.agent](s, labels)
        for phrase, command in s.howto:
            labels.howto.append({"query": phrase, "expect": command, "split": s.split})
    doc = {
        "note": "tools/history_fixture.py writes this; edit SESSIONS there, not this file",
        "moments": labels.moments,
        "howto": labels.howto,
    }
    (OUT / "labels.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
    pos = sum(m["label"] for m in labels.moments)
    print(
        f"{len(SESSIONS)} sessions, {pos} moments, {len(labels.moments) - pos} look-alikes, "
        f"{len(labels.howto)} howto tasks -> {OUT.relative_to(ROOT)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
