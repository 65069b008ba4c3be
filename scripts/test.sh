#!/usr/bin/env bash
# The whole test suite: formatting, lints, the pure-Rust crates (which must
# not build any C or C++), then everything against the native RocksDB.
source "$(dirname "$0")/env.sh"

echo "== formatting and lints"
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings

echo "== the pure-Rust crates compile no C/C++"
cpp_deps=$(cargo tree -p rocks-ribbon -p ribbon-sst -p ribbon-cli -e normal,build --prefix none \
  | grep -E '^(cc|cxx|cxx-build|librocksdb-sys|bindgen|zstd-sys|lz4-sys|libz-sys|snappy-sys) ' || true)
if [ -n "$cpp_deps" ]; then
  echo "ribbon, ribbon-sst or ribbon-cli depends on a C/C++ build: $cpp_deps" >&2
  exit 1
fi
cargo test --release -p rocks-ribbon -p ribbon-sst -p ribbon-cli

echo "== everything else, against native RocksDB"
cargo test --release --workspace --exclude rocks-ribbon --exclude ribbon-sst --exclude ribbon-cli
