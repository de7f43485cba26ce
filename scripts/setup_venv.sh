#!/usr/bin/env bash
# Create .venv (once) and install rne_dynamics with everything its tests need. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements-test.txt
.venv/bin/python -m pip install --quiet --no-deps -e .
