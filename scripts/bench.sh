#!/usr/bin/env bash
# Benchmarks: criterion (Rust against RocksDB's C++ in one process, and
# against xorf and fastbloom), then the report with every ratio next to its
# target (docs/benchmarks.md, docs/build-ns-per-key.svg).
# RIBBON_BENCH_MAX_N=10000000 adds n = 10^7 to the build benchmarks.
# `bash scripts/bench.sh --native` builds Rust and RocksDB's C++ with
# -Ctarget-cpu=native (a second RocksDB build, in its own target directory)
# and writes docs/benchmarks-native.md.
source "$(dirname "$0")/env.sh"
if [ "${1:-}" = "--native" ]; then
  shift
  export RUSTFLAGS="${RUSTFLAGS:-} -Ctarget-cpu=native"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR}-native"
fi
cargo bench --bench filters -- "$@"
cargo run --release -q --bin bench-report
