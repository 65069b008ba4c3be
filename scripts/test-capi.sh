#!/usr/bin/env bash
# Issue 34, the C half: the C library (ribbon-capi: libribbon.so and
# libribbon.a), its Rust tests (capi/tests: every extern "C" function called
# with raw pointers, error paths, answers equal to the Rust API's), the
# header check (capi/include/ribbon.h is what cbindgen generates now), and
# the C and Go examples compiled against the header and library and RUN on
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

echo "== the C example (examples/c), against libribbon.so"
cc -std=c11 -O2 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I capi/include \
  examples/c/sst_query.c -L "$lib" -lribbon -o "$work/sst_query"
LD_LIBRARY_PATH="$lib" "$work/sst_query" "$fixture"
# The header alone compiles as C++ too.
if command -v c++ >/dev/null 2>&1; then
  echo '#include "ribbon.h"' | c++ -x c++ -fsyntax-only -Wall -Werror -I capi/include -
fi

echo "== the Go example (examples/go, cgo), against libribbon.a"
(
  cd examples/go
  CGO_CFLAGS="-I$PWD/../../capi/include" \
  CGO_LDFLAGS="$lib/libribbon.a -lm -ldl -lpthread" \
  GOFLAGS=-mod=mod GOCACHE="${GOCACHE:-$target/go-cache}" \
    go build -o "$work/go_example" .
)
"$work/go_example" "$fixture"
