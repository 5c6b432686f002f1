#!/usr/bin/env bash
# Creates (if missing) the Python peers' virtual environment and installs
# tools/peers/requirements.txt into it. Idempotent: re-running only checks /
# completes the installation.
#
#   NEARDUP_PEERS_VENV  where the venv lives (default /work/venv-peers)
#   PYTHON              interpreter used to create it (default python3.11, else python3)
#
# Do not install simhash-pybind into this venv: it provides a module also
# named `simhash` and would shadow the pure-Python package.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${NEARDUP_PEERS_VENV:-/work/venv-peers}"
req="$here/requirements.txt"

if [[ -z "${PYTHON:-}" ]]; then
    if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi

if [[ ! -x "$venv/bin/python" ]]; then
    echo "setup-venv: creating $venv with $("$PYTHON" --version 2>&1)" >&2
    "$PYTHON" -m venv "$venv"
fi

pyver="$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$pyver" != "3.11" ]]; then
    echo "setup-venv: warning: venv uses Python $pyver; the fixture was made with 3.11" >&2
    echo "            (Unicode 14.0.0); regenerating it with another version may change values." >&2
fi

warn_pybind() {
    if "$venv/bin/python" -c 'from importlib.metadata import version; version("simhash-pybind")' 2>/dev/null; then
        echo "setup-venv: warning: simhash-pybind is installed in $venv and may shadow simhash" >&2
    fi
}

# Fast path: everything already installed at the pinned versions.
if "$venv/bin/python" - "$req" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split('#', 1)[0].strip()
    if not line:
        continue
    name, want = line.split('==')
    if version(name) != want:
        sys.exit(1)
PY
then
    warn_pybind
    echo "setup-venv: $venv is up to date" >&2
    exit 0
fi

"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req"
"$venv/bin/python" -m pip check >&2
warn_pybind
echo "setup-venv: $venv ready" >&2
