#!/usr/bin/env bash
# Builds the Debian packages (liblocus0, liblocus-cuda0 where the CUDA toolkit is found,
# liblocus-dev, locus-tools) from the release build into build/packages/, and lists them with
# their dependencies. Install them with: apt-get install ./build/packages/*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh release >/dev/null
rm -rf build/packages
(cd build/release && cpack -G DEB -B "$PWD/../packages" >/dev/null)
rm -rf build/packages/_CPack_Packages
for deb in build/packages/*.deb; do
  echo "$(basename "$deb"): $(du -h "$deb" | cut -f1); Depends: $(dpkg-deb -f "$deb" Depends)"
done
