#!/usr/bin/env bash
# The MPI module as `locus info` meets it (Note [Backend modules]): it exports only its entry
# point; liblocus without it beside says "not installed" and where it looked, and
# LOCUS_BACKEND_PATH brings it back. tests/mpi_module.sh LOCUS LIBLOCUS; exit 77 (skip) where
# the build has no MPI module (no Open MPI, or a static Locus).
set -euo pipefail
locus="$1" liblocus="$2"
module="$(dirname "$liblocus")/liblocus_mpi.so.0"
[ -f "$module" ] || { echo "no MPI module ($module): skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect_line() {  # LINE FILE
  grep -qxF -- "$1" "$2" || { cat "$2"; fail "expected the line: $1"; }
  echo "ok: $1"
}

strong=$(nm -D --defined-only "$module" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
[ "$strong" = "locus_module_entry " ] || fail "liblocus_mpi exports functions: $strong"
echo "ok: liblocus_mpi.so.0 exports only locus_module_entry"
if readelf -d "$liblocus" | grep -E "NEEDED.*(libmpi|libopen-)"; then fail "liblocus itself needs Open MPI (above)"; fi
echo "ok: liblocus needs no Open MPI library"

"$locus" info > "$work/here.txt"
expect_line "  mpi: available" "$work/here.txt"
mkdir -p "$work/lonely"
cp -L "$liblocus" "$work/lonely/liblocus.so.0"
LD_LIBRARY_PATH="$work/lonely" "$locus" info > "$work/lonely.txt"
expect_line "  mpi: not available: the mpi backend module (liblocus_mpi.so.0) is not installed: looked in $work/lonely (LOCUS_BACKEND_PATH adds directories)" "$work/lonely.txt"
expect_line "  gloo: available" "$work/lonely.txt"
LOCUS_BACKEND_PATH="$(dirname "$module")" LD_LIBRARY_PATH="$work/lonely" "$locus" info > "$work/path.txt"
expect_line "  mpi: available" "$work/path.txt"
