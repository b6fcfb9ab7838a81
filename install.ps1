# brain's installer for Windows (PowerShell 5.1 or 7):
#
#   powershell -ExecutionPolicy Bypass -c "irm https://github.com/brain-memory/brain/releases/latest/download/install.ps1 | iex"
#
# Fetches the release ($env:BRAIN_VERSION = "dev-2026-09" pins one), checks the wheel's sha256
# against the release's sha256sums.txt and that file's Ed25519 signature (with python and
# cryptography, or openssl 3, when either is at hand), installs brain into its own environment
# (uv's tool install where uv is on PATH, else a venv in %LOCALAPPDATA%\brain\venv), and ends with
# `brain install`, which links brain into ~\.local\bin (or BRAIN_BINDIR) and sets up a vault.
# Run from a checkout (.\install.ps1), it installs that checkout instead.
#
#   -NoModifyPath / BRAIN_NO_MODIFY_PATH=1   never add the bin folder to the user's PATH
#   -Version TAG / BRAIN_VERSION=TAG         install this release rather than the latest
#   BRAIN_BINDIR, BRAIN_PYTHON, BRAIN_NO_UV=1, BRAIN_RELEASE_URL as for install.sh
param(
    [switch]$NoModifyPath,
    [string]$Version = $env:BRAIN_VERSION
)
$ErrorActionPreference = "Stop"
Set-StrictMode -Version Latest

# The release base URL and the public keys: brain/release.py owns them; tests check these agree.
$BrainBaseUrl = "https://github.com/brain-memory/brain/releases"
$BrainPublicKeys = @("HkWVkqxcxECfmHUcXujEtsv2KwzDEdE0JbY9n8OXwp4=")

function Say([string]$Text) { [Console]::Error.WriteLine("brain-install: $Text") }
function Die([string]$Text) { Say "error: $Text"; exit 1 }

if ($env:BRAIN_NO_MODIFY_PATH -in @("1", "true", "yes")) { $NoModifyPath = $true }
$DataHome = if ($env:LOCALAPPDATA) { $env:LOCALAPPDATA } else { Join-Path $HOME ".local/share" }
$Venv = Join-Path $DataHome "brain\venv"
$BinDir = if ($env:BRAIN_BINDIR) { $env:BRAIN_BINDIR } else { Join-Path $HOME ".local\bin" }
$Base = if ($env:BRAIN_RELEASE_URL) { $env:BRAIN_RELEASE_URL } else { $BrainBaseUrl }
$Base = $Base.TrimEnd("/")
$Tmp = Join-Path ([IO.Path]::GetTempPath()) ("brain-install-" + [Guid]::NewGuid())
New-Item -ItemType Directory -Path $Tmp | Out-Null
$IsWin = [Environment]::OSVersion.Platform -eq "Win32NT"
$BinSub = if ($IsWin) { "Scripts" } else { "bin" }
$Exe = if ($IsWin) { ".exe" } else { "" }

function Find-Python {
    if ($env:BRAIN_PYTHON) { return $env:BRAIN_PYTHON }
    foreach ($candidate in @("py", "python3", "python")) {
        if (Get-Command $candidate -ErrorAction SilentlyContinue) {
            $pyArgs = if ($candidate -eq "py") { @("-3", "-c") } else { @("-c") }
            & $candidate @pyArgs "import sys; sys.exit(sys.version_info < (3, 11))" 2>$null
            if ($LASTEXITCODE -eq 0) { return $candidate }
        }
    }
    return $null
}

# 0 verified, 1 not signed by a known key, 2 no verifier at hand
function Test-Signature([string]$File, [string]$Sig) {
    $py = Find-Python
    if ($py) {
        $script = @'
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
'@
        $scriptFile = Join-Path $Tmp "verify.py"
        Set-Content -Path $scriptFile -Value $script -Encoding ASCII
        & $py $scriptFile $File $Sig @BrainPublicKeys
        if ($LASTEXITCODE -ne 2) { return $LASTEXITCODE }
    }
    if (Get-Command openssl -ErrorAction SilentlyContinue) {
        $failed = $false
        foreach ($key in $BrainPublicKeys) {
            $pem = Join-Path $Tmp "key.pem"
            Set-Content -Path $pem -Encoding ASCII -Value @(
                "-----BEGIN PUBLIC KEY-----", "MCowBQYDK2VwAyEA$key", "-----END PUBLIC KEY-----")
            $out = (& openssl pkeyutl -verify -pubin -inkey $pem -rawin -in $File -sigfile $Sig 2>&1) -join " "
            if ($out -match "Verified Successfully") { return 0 }
            if ($out -match "Verification Failure") { $failed = $true } else { break }
        }
        if ($failed) { return 1 }
    }
    return 2
}

try {
    $Checkout = $null
    if ($PSCommandPath) {
        $here = Split-Path -Parent $PSCommandPath
        $pyproject = Join-Path $here "pyproject.toml"
        if ((Test-Path (Join-Path $here "brain\__init__.py")) -and (Test-Path $pyproject) -and
            (Select-String -Path $pyproject -Pattern '^name = "brain-memory"' -Quiet)) {
            $Checkout = $here
        }
    }
    $Tag = ""
    $Wheel = ""
    if ($Checkout) {
        Say "installing the checkout $Checkout"
        $Source = $Checkout
    } else {
        if ($Version) {
            if ($Version -notmatch '^dev-20\d\d-(0[1-9]|1[0-2])[a-z]?(-rc[1-9]\d*)?$') {
                Die "BRAIN_VERSION=$Version is not a release tag (dev-YYYY-MM, dev-YYYY-MMa, dev-YYYY-MM-rcN)"
            }
            $Url = "$Base/download/$Version"
        } else {
            $Url = "$Base/latest/download"
        }
        Say "fetching $Url"
        $ProgressPreference = "SilentlyContinue"
        foreach ($name in @("sha256sums.txt", "sha256sums.txt.sig", "release.json")) {
            Invoke-WebRequest -UseBasicParsing -Uri "$Url/$name" -OutFile (Join-Path $Tmp $name)
        }
        $sums = Join-Path $Tmp "sha256sums.txt"
        switch (Test-Signature $sums (Join-Path $Tmp "sha256sums.txt.sig")) {
            0 { Say "sha256sums.txt: signature verified" }
            1 { Die "sha256sums.txt is not signed by brain's release key: the release may have been tampered with; nothing was installed" }
            default { Say "warning: no Ed25519 verifier here (python with cryptography, or openssl 3); the signature was not checked, only the checksums" }
        }
        $table = @{}
        foreach ($line in Get-Content $sums) {
            if ($line -match '^([0-9a-f]{64}) [ *]([^/\\]+)$') { $table[$Matches[2]] = $Matches[1] }
        }
        $Wheel = @($table.Keys | Where-Object { $_ -match '^brain_memory-[A-Za-z0-9_.+!-]+-py3-none-any\.whl$' })[0]
        if (-not $Wheel) { Die "sha256sums.txt lists no brain wheel; the release is malformed" }
        Invoke-WebRequest -UseBasicParsing -Uri "$Url/$Wheel" -OutFile (Join-Path $Tmp $Wheel)
        foreach ($name in @("release.json", $Wheel)) {
            $got = (Get-FileHash -Algorithm SHA256 -Path (Join-Path $Tmp $name)).Hash.ToLower()
            if ($table[$name] -ne $got) {
                Die "$name does not match its sha256 in sha256sums.txt (cut short or tampered with); nothing was installed"
            }
        }
        $Tag = (Get-Content (Join-Path $Tmp "release.json") -Raw | ConvertFrom-Json).tag
        Say "brain ${Tag}: $Wheel (sha256 checked)"
        $Source = Join-Path $Tmp $Wheel
    }

    $Method = "venv"
    if (-not ($env:BRAIN_NO_UV -in @("1", "true", "yes")) -and (Get-Command uv -ErrorAction SilentlyContinue)) {
        $Method = "uv"
    }
    if ($Method -eq "uv") {
        Say "installing with uv tool install"
        $env:UV_TOOL_BIN_DIR = $BinDir
        & uv tool install --force --quiet $Source
        if ($LASTEXITCODE -ne 0) { Die "uv tool install failed" }
        $EnvDir = Join-Path (& uv tool dir) "brain-memory"
    } else {
        $py = Find-Python
        if (-not $py) { Die "brain needs Python 3.11 or newer (or uv): install one and run this again" }
        $EnvDir = $Venv
        $envPy = Join-Path $EnvDir "$BinSub\python$Exe"
        if (-not (Test-Path $envPy)) {
            Say "creating $EnvDir"
            if ($py -eq "py") { & py -3 -m venv $EnvDir } else { & $py -m venv $EnvDir }
            if ($LASTEXITCODE -ne 0) { Die "cannot create a venv in $EnvDir" }
        }
        Say "installing into $EnvDir"
        & $envPy -m pip install -q --disable-pip-version-check $Source
        if ($LASTEXITCODE -ne 0) { Die "pip could not install brain into $EnvDir" }
    }
    $EnvPy = Join-Path $EnvDir "$BinSub\python$Exe"
    $Brain = Join-Path $EnvDir "$BinSub\brain$Exe"

    # keep the wheel (for `brain update --rollback`) and mark the environment as the installer's own
    $markerScript = @'
import hashlib, json, os, shutil, sys, tempfile, time
env, method, checkout, tag, wheel = (sys.argv[1:] + [""] * 5)[:5]
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
doc = {"installer": "install.ps1", "method": method,
       "source": "checkout" if checkout else "release",
       "current": current, "previous": previous,
       "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
fd, tmp = tempfile.mkstemp(dir=env, prefix=".brain-install.", suffix=".tmp")
with os.fdopen(fd, "w", encoding="utf-8") as f:
    f.write(json.dumps(doc, indent=2) + "\n")
os.replace(tmp, marker)
'@
    $markerFile = Join-Path $Tmp "marker.py"
    Set-Content -Path $markerFile -Value $markerScript -Encoding ASCII
    $wheelPath = if ($Wheel) { Join-Path $Tmp $Wheel } else { "" }
    $fromCheckout = if ($Checkout) { "checkout" } else { "" }
    & $EnvPy $markerFile $EnvDir $Method $fromCheckout $Tag $wheelPath
    if ($LASTEXITCODE -ne 0) { Die "cannot write $EnvDir\brain-install.json" }

    # PATH first, as install.sh does: brain install then finds the folder on the user's PATH and
    # says to open a new terminal rather than to add it
    $userPath = [Environment]::GetEnvironmentVariable("Path", "User")
    $parts = @(($env:Path + ";" + $userPath) -split ";" | Where-Object { $_ })
    if (-not ($parts -contains $BinDir)) {
        if ($NoModifyPath) {
            Say "$BinDir is not on PATH; add it yourself (Settings > Environment Variables)"
        } elseif ($IsWin) {
            [Environment]::SetEnvironmentVariable("Path", "$BinDir;$userPath", "User")
            Say "added $BinDir to your user PATH (open a new terminal; -NoModifyPath skips this)"
        } else {
            Say "$BinDir is not on PATH; add it in your shell profile"
        }
    }
    Say "running brain install"
    $env:BRAIN_BINDIR = $BinDir
    & $Brain install
    if ($LASTEXITCODE -ne 0) { Say "brain install did not finish; fix what it says, then run: $Brain install" }

    Say ("done: " + ((& $Brain version) -join " "))
} finally {
    Remove-Item -Recurse -Force $Tmp -ErrorAction SilentlyContinue
}
