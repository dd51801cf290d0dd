#!/usr/bin/env bash
# The main job for now: install, build, then `locus info` and the device examples.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
build/release/bin/locus info
for ex in build/release/examples/example_*; do
  echo "== $(basename "$ex")"
  "$ex"
done
