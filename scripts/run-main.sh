#!/usr/bin/env bash
# The main job: installs what is missing (Fashion-MNIST included), builds, shows the machine's
# devices, then trains the MLP 784-256-10 on Fashion-MNIST with `locus train` on the best
# device (LOCUS_DEVICE or arguments override: scripts/run-main.sh --device sim --epochs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
build/release/bin/locus info
build/release/bin/locus train "$@"
