#!/usr/bin/env bash
# Installs, builds and runs every test (ctest), then the sanitizer build unless LOCUS_SKIP_SANITIZE=1,
# then each fuzz target for 30 s on its corpus (clang, libFuzzer) unless LOCUS_SKIP_FUZZ=1, then
# the CPU and sim suite under ThreadSanitizer unless LOCUS_SKIP_TSAN=1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
ctest --preset release
if [ "${LOCUS_SKIP_SANITIZE:-0}" != 1 ]; then
  scripts/build.sh sanitize
  ctest --preset sanitize
fi
if [ "${LOCUS_SKIP_FUZZ:-0}" != 1 ]; then
  scripts/build.sh fuzz
  ctest --preset fuzz
fi
if [ "${LOCUS_SKIP_TSAN:-0}" != 1 ]; then
  scripts/build.sh tsan
  ctest --preset tsan
fi
