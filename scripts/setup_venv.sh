#!/usr/bin/env bash
# Create .venv (once), install rne_dynamics, and build the bundled arm's machine code (seconds, once per machine;
# later processes load it from the cache in milliseconds; other robots' is built at their first calls). Safe to run again.
#   bash scripts/setup_venv.sh            run time and tests (Pinocchio, example-robot-data, pytest, ...)
#   bash scripts/setup_venv.sh --runtime  run time only (the library, the command line and the ROS 2 nodes)
# Prints a line per phase (pip itself is quiet): how long each takes depends on the network and the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=requirements-test.txt
if [[ "${1:-}" == "--runtime" ]]; then
    requirements=requirements.txt
fi
phase() { echo "setup_venv.sh [${SECONDS} s]: $*"; }
phase "creating .venv (python3 -m venv; kept if it exists)"
python3 -m venv .venv
phase "upgrading pip"
.venv/bin/python -m pip install --quiet --upgrade pip
phase "installing $requirements (numpy, numba, scipy, rclpy and the ROS 2 messages from PyPI; the longest phase on a fresh machine, nothing to do on a second run)"
.venv/bin/python -m pip install --quiet -r "$requirements"
# -qq: setuptools' "Editable installation" warning box is a warning, not an error (pip -q shows it); errors still show
phase "installing rne_dynamics from this checkout (editable: edits take effect without reinstalling)"
.venv/bin/python -m pip install -qq --no-deps -e .
phase "building the bundled arm's machine code (rne-dynamics compile: a line per call)"
.venv/bin/rne-dynamics compile
# the step is numba's (100 s once per installation, this project's 2-core VM): built on while live or the tests start;
# then every generic kernel (about 8 minutes once), the reference path that serves a robot until its C is built
phase "compiling the simulator's step, then the generic kernels, in the background (minutes, once; logs: .venv/compile-simulator.log, .venv/compile-generic.log)"
nohup sh -c '.venv/bin/rne-dynamics compile --simulator > .venv/compile-simulator.log 2>&1;
             .venv/bin/rne-dynamics compile --generic > .venv/compile-generic.log 2>&1' > /dev/null 2>&1 &
phase "done: .venv is ready"
