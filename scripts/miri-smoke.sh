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
# Installs the nightly toolchain's miri component when missing; where it
# cannot be installed it says SKIPPED (or fails, with MIRI_REQUIRED=1).
set -euo pipefail

cd "$(dirname "$0")/.."
# One target directory per checkout: cargo-miri's test runners record the
# checkout they were built in, and one directory shared by two clones ran the
# other clone's sources (or failed once that clone was deleted).
checkout=$(pwd -P | sha256sum | cut -c1-16)
export CARGO_TARGET_DIR=${MIRI_TARGET_DIR:-/var/tmp/rocks-ribbon-miri-target/$checkout}

if ! cargo +nightly miri --version >/dev/null 2>&1; then
    echo "miri-smoke: installing Miri (rustup component add --toolchain nightly miri rust-src)"
    if ! rustup toolchain install nightly --profile minimal --component miri,rust-src >/dev/null 2>&1 \
        && ! rustup component add --toolchain nightly miri rust-src >/dev/null 2>&1; then
        if [ "${MIRI_REQUIRED:-}" = 1 ]; then
            echo "miri-smoke: cannot install Miri here" >&2
            exit 2
        fi
        echo "miri-smoke: SKIPPED: Miri cannot be installed on this machine (set MIRI_REQUIRED=1 to fail instead)"
        exit 0
    fi
fi

start=$(date +%s)
cargo +nightly miri setup
cargo +nightly miri test -p rocks-ribbon --lib -- alg::tests arch::tests batch::tests trailer::tests \
    solution::tests::every_kernel solution::tests::short_kernels standard128::kernel_tests
cargo +nightly miri test -p rocks-ribbon --test miri_smoke
echo "miri-smoke: passed in $(($(date +%s) - start)) s"
