#!/usr/bin/env bash
# Benchmarks: criterion (Rust against RocksDB's C++ in one process, and
# against xorf and fastbloom), then the report with every ratio next to its
# target (docs/benchmarks.md, docs/build-ns-per-key.svg).
# RIBBON_BENCH_MAX_N=10000000 adds n = 10^7 to the build benchmarks.
source "$(dirname "$0")/env.sh"
cargo bench --bench filters -- "$@"
cargo run --release -q --bin bench-report
