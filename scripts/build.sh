#!/usr/bin/env bash
# Configures and builds Locus (Release, Ninja) into build/ or $1 with the given preset.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
