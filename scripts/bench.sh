#!/usr/bin/env bash
# Benchmarks: criterion (Rust against RocksDB's C++ in one process, against
# xorf and fastbloom, and SstFile's batched queries against the raw
# FilterReader), then the report with every ratio next to its target and
# whether it is met (docs/benchmarks.md, docs/build-ns-per-key.svg,
# docs/construction-memory.svg): peak construction memory, the DB-level run
# through the bridge, and `ribbon sst info`/`verify` over 1,000 SSTs and a
# multi-GB SST generated in a temporary directory. About 15 minutes on a
# 2-core machine.
#
# RIBBON_BENCH_MAX_N (default 10000000) caps the build sizes;
# RIBBON_BENCH_SST_GB (default 2) sizes the big SST.
# `bash scripts/bench.sh --native` builds Rust and RocksDB's C++ with
# -Ctarget-cpu=native (a second RocksDB build, in its own target directory)
# and writes docs/benchmarks-native.md.
# Arguments after the options go to criterion (a filter such as `build/`).
source "$(dirname "$0")/env.sh"
if [ "${1:-}" = "--native" ]; then
  shift
  export RUSTFLAGS="${RUSTFLAGS:-} -Ctarget-cpu=native"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR}-native"
fi
export RIBBON_BENCH_MAX_N="${RIBBON_BENCH_MAX_N:-10000000}"
cargo build --release -q -p ribbon-cli
cargo bench --bench filters -- "$@"
cargo run --release -q --bin bench-report
# The README's results table is generated from the report.
python3 scripts/readme-results.py
