#!/usr/bin/env bash
# Miri over a smoke test of the `ribbon` crate's unsafe code and fast paths
# (what CI runs, about a minute on 2 cores once Miri's sysroot is built):
#
# * the banding's unchecked slot accesses at the edges of the band
#   (`alg::tests`), the batched-query loop (`batch::tests`), the kernel and
#   prefetch helpers (`arch::tests`) and the trailer rules (`trailer::tests`);
# * `ribbon/tests/miri_smoke.rs`: every standalone shape, each RocksDB
#   filter kind with single, batched and hash queries, truncated and damaged
#   blocks, and the FastLocalBloom kernels against each other. It shrinks
#   its sizes under `cfg(miri)`.
#
# Miri interprets the code, so it checks every memory access for bounds,
# alignment and aliasing; it runs the portable kernels (it has no CPU to
# detect AVX2 on), while `cargo test` runs and compares both.
#
#   bash scripts/miri-smoke.sh
#
# Needs the nightly toolchain with the miri component:
#   rustup toolchain install nightly --component miri,rust-src
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${MIRI_TARGET_DIR:-/var/tmp/rocks-ribbon-miri-target}

if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "miri-smoke: needs Miri: rustup toolchain install nightly --component miri,rust-src" >&2
    exit 2
fi

start=$(date +%s)
cargo +nightly miri setup
cargo +nightly miri test -p rocks-ribbon --lib -- alg::tests arch::tests batch::tests trailer::tests
cargo +nightly miri test -p rocks-ribbon --test miri_smoke
echo "miri-smoke: passed in $(($(date +%s) - start)) s"
