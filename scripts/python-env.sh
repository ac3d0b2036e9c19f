#!/usr/bin/env bash
# One throwaway venv with what the Python stages use: eth-account (interop, contract signing hooks),
# http-ece with cryptography (interop: Web Push, docs/protocol.md §9) and schemathesis (contract), pinned. Needs PyPI.
#
# Usage: scripts/python-env.sh VENV_DIR
set -euo pipefail
venv="${1:?usage: scripts/python-env.sh VENV_DIR}"
python3 -m venv "$venv"
# Pinned: a new schemathesis may generate differently; raise it on purpose.
"$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==4.32.5" eth-account "http-ece==1.2.1" cryptography
echo "python packages ready in $venv"
