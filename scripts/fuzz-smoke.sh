#!/usr/bin/env bash
# A short run of every fuzz target in fuzz/ (what CI runs), each under a
# virtual-memory limit (ulimit -v), libFuzzer's RSS limit and a per-input
# timeout. Exits non-zero when a target crashes, leaks past a limit or
# hangs; the input that did it is kept and its path printed.
#
#   bash scripts/fuzz-smoke.sh                    # 15 s per target (about 3 minutes with a cold build)
#   FUZZ_SECONDS=600 bash scripts/fuzz-smoke.sh   # longer
#   FUZZ_TARGETS="sst_file" bash scripts/fuzz-smoke.sh
#
# Installs a nightly toolchain and cargo-fuzz when missing (and says
# SKIPPED where no nightly toolchain can be had, or fails with
# FUZZ_REQUIRED=1). Longer runs and the other options are in fuzz/README.md.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-15}
rss_mb=${FUZZ_RSS_MB:-2048}
vmem_kib=${FUZZ_VMEM_KIB:-$((4 << 20))}
targets=(${FUZZ_TARGETS:-filter_reader standalone_file sst_file build_then_query sharded_file sketch_file conformance_manifest db_log_files})
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-/var/tmp/rocks-ribbon-fuzz-target}

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz-smoke: installing the nightly toolchain (rustup toolchain install nightly)"
    if ! rustup toolchain install nightly --profile minimal >/dev/null 2>&1; then
        if [ "${FUZZ_REQUIRED:-}" = 1 ]; then
            echo "fuzz-smoke: cannot install a nightly toolchain here" >&2
            exit 2
        fi
        echo "fuzz-smoke: SKIPPED: no nightly toolchain can be installed on this machine (set FUZZ_REQUIRED=1 to fail instead)"
        exit 0
    fi
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# No sanitizer: ASan's shadow memory would
# not fit under ulimit -v; the unsafe code in ribbon is covered by Miri
# (scripts/miri-smoke.sh).
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-smoke.XXXXXX")
echo "fuzz-smoke: building the fuzz targets (cargo +nightly fuzz build)"
if ! cargo +nightly fuzz build --sanitizer none >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >&2
    echo "fuzz-smoke: build failed (log $work/build.log)" >&2
    exit 2
fi

failed=()
for t in "${targets[@]}"; do
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    log="$work/$t.log"
    start=$(date +%s)
    set +e
    (
        ulimit -v "$vmem_kib"
        exec cargo +nightly fuzz run --sanitizer none "$t" "$work/corpus/$t" "fuzz/seeds/$t" -- \
            -max_total_time="$seconds" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" \
            -timeout=10 -artifact_prefix="$work/artifacts/$t/" -print_final_stats=1
    ) >"$log" 2>&1
    rc=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    echo "fuzz-smoke: $t: ${runs:-?} inputs in $(($(date +%s) - start)) s, exit $rc (limits: ${seconds} s, ${rss_mb} MB RSS, ulimit -v ${vmem_kib} KiB)"
    if [ "$rc" -ne 0 ]; then
        failed+=("$t")
        tail -n 30 "$log" >&2
        echo "fuzz-smoke: $t: log $log, inputs in $work/artifacts/$t/" >&2
    fi
done

if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzz-smoke: FAILED: ${failed[*]} (kept $work)" >&2
    exit 1
fi
rm -rf "$work"
echo "fuzz-smoke: all ${#targets[@]} targets ran clean"
