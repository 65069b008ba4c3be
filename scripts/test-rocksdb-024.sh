#!/usr/bin/env bash
# rocks-bridge with the previous rust-rocksdb release, 0.24 (librocksdb-sys
# 0.17.3, RocksDB 10.4.2), through its `rocksdb-0-24` feature: builds and runs
# examples/outside-rocksdb024, a project outside the workspace that writes a
# database with the Rust policies, reopens it from its OPTIONS file and reads
# its tables with ribbon-sst (docs/rocks-bridge.md, "rust-rocksdb 0.24").
#
# Not run by scripts/test.sh (CI keeps one RocksDB): the first run compiles
# RocksDB 10.4.2, 20 to 40 minutes on 2 cores, into a target directory of its
# own (CARGO_TARGET_DIR, default /var/tmp/rocks-ribbon-target-rocksdb024), which
# later runs reuse (then about a minute). Runs from the repository root on a
# fresh Debian machine as root: scripts/env.sh installs g++, make and
# libclang-dev when missing.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/rocks-ribbon-target-rocksdb024}"
source "$(dirname "$0")/env.sh"

manifest=examples/outside-rocksdb024/Cargo.toml
# The user's `rocksdb = "=0.24.0"` must have steered rocks-bridge's
# `rocksdb = ">=0.24, <0.26"` to 0.24 (one librocksdb-sys per build).
resolved=$(cargo tree --manifest-path "$manifest" -e normal --prefix none | grep -E '^(rocksdb|librocksdb-sys) ' | sed 's/ (\*)$//' | sort -u || true)
echo "$resolved"
if ! grep -qx 'librocksdb-sys v0.17.3+10.4.2' <<<"$resolved" || ! grep -qx 'rocksdb v0.24.0' <<<"$resolved"; then
  echo "test-rocksdb-024: expected rocksdb v0.24.0 and librocksdb-sys v0.17.3+10.4.2" >&2
  exit 1
fi
cargo run --release --manifest-path "$manifest"
