#!/usr/bin/env bash
# Benchmarks: criterion (Rust against RocksDB's C++ in one process, against
# xorf and fastbloom, and SstFile's batched queries against the raw
# FilterReader), then the report with every ratio next to its target and
# whether it is met (docs/benchmarks.md, docs/build-ns-per-key.svg,
# docs/construction-memory.svg): peak construction memory, the DB-level run
# through the bridge, and `ribbon sst info`/`verify` over 1,000 SSTs and a
# multi-GB SST generated in a temporary directory; then the `ribbon doctor`
# section (10^4 synthetic SST files, scripts/doctor-synthetic.py). About 15
# minutes on a 2-core machine.
#
# RIBBON_BENCH_MAX_N (default 10000000) caps the build sizes;
# RIBBON_BENCH_SST_GB (default 2) sizes the big SST.
# `bash scripts/bench.sh --native` builds Rust and RocksDB's C++ with
# -Ctarget-cpu=native (a second RocksDB build, in its own target directory)
# and writes docs/benchmarks-native.md.
# The query-kernel micro-report (`ribbon/benches/kernels.rs`: each kernel
# by filter size, single and batched, next to xorf's BinaryFuse8 and a
# pointer chase) goes between <!-- kernels:begin --> and <!-- kernels:end -->.
# `bash scripts/bench.sh --only doctor` (or `--only kernels`, `--only dbreader`) runs that step
# alone: it rewrites its section and leaves the rest of the report as it
# is. About a minute each once the crates are compiled.
# Arguments after the options go to criterion (a filter such as `build/`).
source "$(dirname "$0")/env.sh"
suffix=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --native)
      export RUSTFLAGS="${RUSTFLAGS:-} -Ctarget-cpu=native"
      export CARGO_TARGET_DIR="${CARGO_TARGET_DIR}-native"
      suffix="-native"
      shift
      ;;
    --only)
      case "${2:-}" in
        doctor | kernels | dbreader) ;;
        *) echo "bench.sh: --only takes one step: doctor, kernels or dbreader" >&2; exit 2 ;;
      esac
      only="$2"
      shift 2
      ;;
    *) break ;;
  esac
done
export RIBBON_BENCH_MAX_N="${RIBBON_BENCH_MAX_N:-10000000}"

# `ribbon doctor` on 10^4 synthetic files, once over the corpus's small
# table and once over a 10 MB table written by RocksDB 11.8.1 (250,000
# keys: a 100 GB-class database), pinned to one core.
doctor_step() {
  local work sst
  work="$(mktemp -d)"
  DOCTOR_BASE_OUT="$work/base" cargo test --release -q --test doctor -- \
    --ignored --exact synthetic_base_table >/dev/null
  sst="$(ls -S "$work"/base/*.sst | head -n 1)"
  python3 scripts/doctor-synthetic.py --report "docs/benchmarks${suffix}.md" \
    --ribbon "$CARGO_TARGET_DIR/release/ribbon" --files 10000 \
    --base sst/tests/corpus/full_bloom_fv5_snappy_crc32c.sst \
    --label 'corpus `full_bloom_fv5_snappy_crc32c.sst` (1,000 keys, FastLocalBloom)' \
    --base "$sst" \
    --label '10 MB table, 250,000 keys, bloomfilter:10 (`tests/doctor.rs` `synthetic_base_table`)'
  rm -rf "$work"
}

# The query-kernel micro-report (issue 37), with the analysis of each
# target in docs/benchmarks-kernels.md.
kernels_step() {
  local out
  out="$(cargo bench -q -p rocks-ribbon --bench kernels 2>/dev/null)"
  {
    echo "## Query kernels (issue 37)"
    echo
    echo "\`cargo bench -p rocks-ribbon --bench kernels\`: ns/query, the fastest of 41 rounds a cell (the bench's module doc says what is timed). What limits each row, against the issue's targets: [docs/benchmarks-kernels.md](benchmarks-kernels.md)."
    echo
    grep '^Kernels available' <<<"$out"
    echo
    grep '^|' <<<"$out"
  } | python3 scripts/report_section.py "docs/benchmarks${suffix}.md" kernels
}

# The database reader against RocksDB (issue 48): in Rust against the
# workspace's RocksDB 11.8.1, and from Python against rocksdict's (the
# package installed as scripts/test-python.sh installs it, into its venv).
dbreader_step() {
  local venv="${ROCKS_RIBBON_PY_VENV:-${TMPDIR:-/tmp}/rocks-ribbon-venv-python}"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.7,<2" numpy rocksdict
  # maturin's build hook runs the maturin executable of this environment.
  PATH="$venv/bin:$PATH" "$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./python
  {
    echo "## Database reader against RocksDB (issue 48)"
    echo
    cargo run --release -q --bin db-reader-bench
    echo
    echo "From Python (\`python python/bench/db_bench.py --markdown\`), rocks_ribbon's \`Db\` against rocksdict's RocksDB on databases rocksdict wrote, in one process:"
    echo
    "$venv/bin/python" python/bench/db_bench.py --markdown
  } | python3 scripts/report_section.py "docs/benchmarks${suffix}.md" dbreader
}

cargo build --release -q -p ribbon-cli
case "$only" in
  doctor) doctor_step; exit 0 ;;
  kernels) kernels_step; exit 0 ;;
  dbreader) dbreader_step; exit 0 ;;
esac
cargo bench --bench filters -- "$@"
cargo run --release -q --bin bench-report
kernels_step
doctor_step
dbreader_step
# The README's results table is generated from the report.
python3 scripts/readme-results.py
