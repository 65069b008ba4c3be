#!/usr/bin/env bash
# The whole test suite: formatting, lints, the pure-Rust crate without C++,
# then everything against the native RocksDB harness.
source "$(dirname "$0")/env.sh"

if rustup component list --installed 2>/dev/null | grep -q rustfmt; then
  cargo fmt --all -- --check
fi
# The pure-Rust crate and the tool compile no C++ (no RocksDB in their graph).
cargo test --release -p ribbon -p ribbon-cli
if rustup component list --installed 2>/dev/null | grep -q clippy; then
  cargo clippy --release --workspace --all-targets -- -D warnings
fi
cargo test --release --workspace
