#!/usr/bin/env bash
# Checks that the BandingObserver hooks of ribbon/src/alg.rs compile away
# where no observer is given. Copies the rocks-ribbon sources twice, as they
# are and with every `observer.` call blanked out, and builds a probe crate
# against each that bands (`band_with_seeds`, so `Banding::add` inlined),
# back-substitutes into the interleaved layout and into rows
# (`simple_back_subst`) with each of the 24 standard configurations (the
# ones the standalone filter dispatches to; Standard128 is one). Prints
# "identical" and exits 0 when the optimised assembly of the two is the
# same instructions (the order in which functions are emitted aside).
#
#   bash docs/viz/observer-asm-check.sh
#
# (Balanced Ribbon passes an observer of its own; its code rightly changes
# when the calls are removed, so the probe does not use it.)
set -euo pipefail
# One line per function (its symbol and instructions), sorted: the order in
# which the compiler emits functions is not code.
canonical() {
  awk '!/^LABEL:$/ && /^_ZN.*:$|^[A-Za-z_][A-Za-z0-9_]*:$|^\t\.(globl|hidden)/ { printf "\n" } { printf "%s\x01", $0 } END { printf "\n" }' "$1" | sort
}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/observer-asm.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
# One copy of the crate, built twice in the same place (so that symbol
# hashes and paths are the same): with alg.rs as it is, and blanked.
mkdir -p "$work/ribbon" "$work/probe/src"
cp -r "$root/ribbon/src" "$work/ribbon/src"
cat > "$work/ribbon/Cargo.toml" <<TOML
[package]
name = "rocks-ribbon"
version = "0.1.0"
edition = "2021"
[lib]
name = "ribbon"
TOML
cp "$root/ribbon/src/alg.rs" "$work/observed-alg.rs"
# The same file without a single call into the observer (blanked, so that
# the line numbers in panic locations stay the same).
sed 's/^.*observer\..*$//' "$root/ribbon/src/alg.rs" > "$work/stripped-alg.rs"
if [ "$(grep -c 'observer\.' "$root/ribbon/src/alg.rs")" = 0 ]; then
  echo "no observer calls found in alg.rs" >&2; exit 1
fi
# A probe crate that bands, back-substitutes into the interleaved layout
# and into rows with each of the 24 standard configurations (what the
# standalone filter dispatches to), each in a function of its own.
probe_src='
use ribbon::alg::{simple_back_subst, Banding, Settings};
use ribbon::solution::InterleavedLayout;
use ribbon::standard::band_with_seeds;
macro_rules! probe {
    ($($name:ident: $c:ty, $f:literal, $s:literal, $h:literal;)*) => {$(
        pub mod $name {
            use super::*;
            type S = Settings<$c, $f, $s, $h>;
            #[inline(never)]
            pub fn band(keys: &mut [u64], slots: u32) -> Option<Banding<S>> {
                band_with_seeds::<S>(keys, slots, 0..4).map(|(_, b)| b)
            }
            #[inline(never)]
            pub fn icml(banding: &Banding<S>, out: &mut [u8]) {
                InterleavedLayout::<S>::for_num_slots(banding.num_slots(), out.len()).back_subst(banding, out);
            }
            #[inline(never)]
            pub fn simple(banding: &Banding<S>) -> Vec<u32> {
                simple_back_subst(banding, 7)
            }
        }
    )*};
}
probe! {
    a0: u32, false, false, false; a1: u32, false, false, true; a2: u32, false, true, false; a3: u32, false, true, true;
    a4: u32, true, false, false; a5: u32, true, false, true; a6: u32, true, true, false; a7: u32, true, true, true;
    b0: u64, false, false, false; b1: u64, false, false, true; b2: u64, false, true, false; b3: u64, false, true, true;
    b4: u64, true, false, false; b5: u64, true, false, true; b6: u64, true, true, false; b7: u64, true, true, true;
    c0: u128, false, false, false; c1: u128, false, false, true; c2: u128, false, true, false; c3: u128, false, true, true;
    c4: u128, true, false, false; c5: u128, true, false, true; c6: u128, true, true, false; c7: u128, true, true, true;
}
'
printf '%s' "$probe_src" > "$work/probe/src/lib.rs"
cat > "$work/probe/Cargo.toml" <<TOML
[package]
name = "probe"
version = "0.1.0"
edition = "2021"
[dependencies]
rocks-ribbon = { path = "../ribbon" }
[profile.release]
debug = false
incremental = false
TOML
for variant in observed stripped; do
  cp "$work/$variant-alg.rs" "$work/ribbon/src/alg.rs"
  rm -f "$work"/probe/target/release/deps/probe-*.s
  (cd "$work/probe" && CARGO_TARGET_DIR="$work/probe/target" \
    cargo rustc --quiet --release --lib -- --emit asm -C codegen-units=1 2>/dev/null)
  sed -E 's/17h[0-9a-f]{16}E/17hE/g; s/GCC_except_table[0-9]+/GCC_except_table/g; /^\s*\.(file|loc|ident|section|p2align|size|type|cfi_)/d; s/^\.L[A-Za-z0-9_$.]+:$/LABEL:/; s/\.L[A-Za-z0-9_$.]+/.L/g' \
    "$work"/probe/target/release/deps/probe-*.s > "$work/$variant-probe.s"
done
probe_lines=$(grep -c . "$work/observed-probe.s")
if cmp -s <(canonical "$work/observed-probe.s") <(canonical "$work/stripped-probe.s"); then
  echo "identical: $probe_lines lines of assembly for the 24 standard configurations with and without the observer calls"
else
  diff "$work/observed-probe.s" "$work/stripped-probe.s" | head -40
  echo "DIFFERENT: the no-op observer changes the generated code of the standard configurations" >&2
  exit 1
fi
