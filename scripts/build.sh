#!/usr/bin/env bash
# Configures and builds Locus (Release, Ninja) into build/ or $1 with the given preset.
# LOCUS_WERROR=1 (CI sets it for the release build) turns the library's warnings into errors.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
werror=OFF
[ "${LOCUS_WERROR:-0}" = 1 ] && [ "$preset" = release ] && werror=ON
cmake --preset "$preset" -DLOCUS_WERROR=$werror >/dev/null
cmake --build --preset "$preset"
