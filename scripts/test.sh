#!/usr/bin/env bash
# Installs, builds and runs every test (ctest), then the suite under ASan+UBSan (clang) unless
# LOCUS_SKIP_SANITIZE=1, then each fuzz target of that same build for 30 s on its corpus
# (libFuzzer) unless LOCUS_SKIP_FUZZ=1, then the CPU and sim suite under ThreadSanitizer unless
# LOCUS_SKIP_TSAN=1. Each stage prints how long it took, so a slow one shows in CI's log.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { echo "== test.sh: $1 done at $((SECONDS - start)) s"; }
scripts/install-deps.sh
scripts/build.sh release
stage "release build"
ctest --preset release
stage "release tests"
if [ "${LOCUS_SKIP_SANITIZE:-0}" != 1 ] || [ "${LOCUS_SKIP_FUZZ:-0}" != 1 ]; then
  scripts/build.sh sanitize
  stage "sanitize build"
fi
if [ "${LOCUS_SKIP_SANITIZE:-0}" != 1 ]; then
  ctest --preset sanitize
  stage "sanitize tests"
fi
if [ "${LOCUS_SKIP_FUZZ:-0}" != 1 ]; then
  ctest --preset fuzz
  stage "fuzz"
fi
if [ "${LOCUS_SKIP_TSAN:-0}" != 1 ]; then
  scripts/build.sh tsan
  stage "tsan build"
  ctest --preset tsan
  stage "tsan tests"
fi
