#!/usr/bin/env bash
# The whole test suite: formatting, lints, the pure-Rust crates (which must
# not build any C or C++) and their packaging, then everything against the
# native RocksDB, a project outside the workspace that uses rocks-bridge, and
# short fuzzing and Miri runs.
source "$(dirname "$0")/env.sh"

echo "== formatting and lints"
cargo fmt --all -- --check
cargo fmt --manifest-path examples/outside/Cargo.toml -- --check
cargo fmt --manifest-path examples/outside-rocksdb024/Cargo.toml -- --check
cargo clippy --release --workspace --all-targets -- -D warnings

echo "== the front door: every path the README and GUIDE name exists, the results table is the bench report's"
python3 scripts/check-docs.py --self-test
python3 scripts/check-docs.py
python3 scripts/readme-results.py --self-test
python3 scripts/readme-results.py --check

echo "== module layering: no import cycles, ribbon's rooms one way (scripts/check-modules.py)"
python3 scripts/check-modules.py --self-test
python3 scripts/check-modules.py

echo "== the pure-Rust crates compile no C/C++"
cpp_deps=$(cargo tree -p rocks-ribbon -p ribbon-sst -p ribbon-reconcile -p ribbon-cli -p ribbon-capi -p rocks-ribbon-python -e normal,build --prefix none \
  | grep -E '^(cc|cxx|cxx-build|librocksdb-sys|bindgen|zstd-sys|lz4-sys|libz-sys|snappy-sys) ' || true)
if [ -n "$cpp_deps" ]; then
  echo "a pure-Rust crate (rocks-ribbon, ribbon-sst, ribbon-reconcile, ribbon-cli, ribbon-capi, rocks-ribbon-python) depends on a C/C++ build: $cpp_deps" >&2
  exit 1
fi
# Where the CPU has AVX2, the tests that compare the AVX2 query kernel with
# the portable one must really run it (they fail if detection does not pick it).
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then export RIBBON_REQUIRE_AVX2=1; fi
# ribbon-cli's viz tests render the page in headless Chromium (Debian's package).
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq chromium
fi
cargo test --release -p rocks-ribbon -p ribbon-sst -p ribbon-reconcile -p ribbon-cli -p ribbon-capi
# ribbon as a #![no_std] crate (alloc only; its unit tests, as doctests need std), and its serde feature.
cargo test --release -p rocks-ribbon --no-default-features --features libm --lib
cargo test --release -p rocks-ribbon --features serde

echo "== performance checks that fit CI: big build's bytes whatever the threads, the kernel micro-report's short form (scripts/test-perf.sh)"
bash scripts/test-perf.sh
echo "== the crates package for crates.io"
# What the dry run does not check: keywords, categories, license files, links.
python3 scripts/check-crates.py --self-test
python3 scripts/check-crates.py
# A target directory of its own, new each run: cargo unpacks the packaged
# crates of its temporary registry under a name derived from the target
# directory and reuses what it unpacked before, so a shared one would verify
# ribbon-cli against an earlier run's ribbon-sst of the same version.
package_dir=$(mktemp -d "${TMPDIR:-/tmp}/rocks-ribbon-package.XXXXXX")
cargo publish --dry-run --allow-dirty --target-dir "$package_dir" -p rocks-ribbon -p ribbon-sst -p ribbon-reconcile -p ribbon-cli
rm -rf "$package_dir"

echo "== everything else, against native RocksDB"
# tests/reconcile_db.rs runs the ribbon binary of this target directory.
cargo build --release -p ribbon-cli --bin ribbon
cargo test --release --workspace --exclude rocks-ribbon --exclude ribbon-sst --exclude ribbon-reconcile --exclude ribbon-cli --exclude ribbon-capi

echo "== the C library from C and Go (scripts/test-capi.sh)"
bash scripts/test-capi.sh

echo "== the Python package on rocksdict's databases (scripts/test-python.sh)"
bash scripts/test-python.sh

echo "== the sharded filter built by Spark (scripts/test-spark.sh)"
bash scripts/test-spark.sh

echo "== every README block runs as written, in a fresh shell (scripts/readme-blocks.py; after the C, Python and Spark builds it reuses)"
python3 scripts/readme-blocks.py
python3 scripts/readme-blocks.py --self-test

echo "== a project outside the workspace, using the packaged rocks-bridge as the README says (scripts/outside-packaged.sh)"
bash scripts/outside-packaged.sh

echo "== Miri over the unsafe code of ribbon (scripts/miri-smoke.sh)"
bash scripts/miri-smoke.sh

echo "== a short fuzzing run of every target (scripts/fuzz-smoke.sh; longer runs: fuzz/README.md)"
bash scripts/fuzz-smoke.sh
