#!/usr/bin/env bash
# Create .venv (once), install rne_dynamics, and build the bundled arm's machine code (seconds, once per machine;
# later processes load it from the cache in milliseconds; other robots' is built at their first calls). Safe to run again.
#   bash scripts/setup_venv.sh            run time and tests (Pinocchio, example-robot-data, pytest, ...)
#   bash scripts/setup_venv.sh --runtime  run time only (the library, the command line and the ROS 2 nodes)
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=requirements-test.txt
if [[ "${1:-}" == "--runtime" ]]; then
    requirements=requirements.txt
fi
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r "$requirements"
.venv/bin/python -m pip install --quiet --no-deps -e .
.venv/bin/rne-dynamics compile
