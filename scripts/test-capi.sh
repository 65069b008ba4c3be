#!/usr/bin/env bash
# Issue 34, the C half: the C library (ribbon-capi: libribbon.so and
# libribbon.a), its Rust tests (capi/tests: every extern "C" function called
# with raw pointers, error paths, answers equal to the Rust API's), the
# header check (capi/include/ribbon.h is what cbindgen generates now), and
# the pkg-config files beside the libraries (capi/build.rs), the Go package
# go/ribbon, and the C and Go examples compiled against the header and
# library (through those files) and RUN on
# an SST file RocksDB 11.8.1 wrote (each probe's answer must equal what
# RocksDB's own Get answered; built filters' members must all match).
#
# Runs from the repository root on a fresh Debian machine as root: installs
# gcc and Debian's golang-go with apt-get when they are missing (and a Rust
# toolchain is expected, as for scripts/test.sh). The library is built once,
# in release; CARGO_TARGET_DIR is reused when set (ribbon-capi is pure Rust:
# it needs none of the native RocksDB build).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TARGET_DIR="$target"

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v go >/dev/null 2>&1 || need+=(golang-go)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

echo "== ribbon-capi: Rust tests and the header check"
cargo test --release -q -p ribbon-capi
cargo build --release -q -p ribbon-capi
lib="$target/release"
fixture=conformance/v1/sst/full_ribbon_fv7_zstd_xxh3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== the pkg-config files capi/build.rs writes beside the libraries"
for pc in ribbon ribbon-static; do
  [ -f "$lib/$pc.pc" ] || { echo "test-capi: $lib/$pc.pc was not written by capi/build.rs" >&2; exit 1; }
done
pkg-config --cflags --libs "$lib/ribbon.pc"
pkg-config --cflags --libs "$lib/ribbon-static.pc"

echo "== the C example (examples/c), against libribbon.so: pkg-config, no LD_LIBRARY_PATH (the rpath finds it)"
cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
  examples/c/sst_query.c $(pkg-config --cflags --libs "$lib/ribbon.pc") -o "$work/sst_query"
env -u LD_LIBRARY_PATH "$work/sst_query" "$fixture"
echo "== the C example, against libribbon.a (ribbon-static.pc): nothing to find at run time"
cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
  examples/c/sst_query.c $(pkg-config --cflags --libs "$lib/ribbon-static.pc") -o "$work/sst_query_static"
if ldd "$work/sst_query_static" | grep -q libribbon; then
  echo "test-capi: the static build links libribbon.so" >&2
  exit 1
fi
"$work/sst_query_static" "$fixture"
# The header alone compiles as C++ too.
if command -v c++ >/dev/null 2>&1; then
  echo '#include "ribbon.h"' | c++ -x c++ -fsyntax-only -Wall -Werror -I capi/include -
fi

echo "== the Go package (go/ribbon) and its user (examples/go, a module with a replace), against libribbon.a"
# -tags ribbon_pkgconfig: the library of this target directory, through the
# ribbon-static.pc beside it (the package's default is target/release of
# the checkout, which the README's blocks use: scripts/readme-blocks.py).
export GOFLAGS=-mod=mod GOCACHE="${GOCACHE:-$target/go-cache}" PKG_CONFIG_PATH="$lib"
(cd go && go vet -tags ribbon_pkgconfig ./... && test -z "$(gofmt -l .)" && go test -count=1 -tags ribbon_pkgconfig ./...)
(
  cd examples/go
  test -z "$(gofmt -l .)"
  # -a: Go's cache does not notice a rebuilt libribbon.a.
  go build -a -tags ribbon_pkgconfig -o "$work/go_example" .
)
"$work/go_example" "$fixture"
