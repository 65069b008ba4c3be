#!/usr/bin/env bash
# The outside example (examples/outside: a user's project) built and run
# against rocks-bridge and rocks-ribbon as crates.io would serve them: the
# `.crate` files `cargo package` makes, unpacked into an empty directory, with
# nothing of the workspace around them. Proves the packaged rocks-bridge
# builds from its packaged files alone (its C++ included).
source "$(dirname "$0")/env.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/rocks-ribbon-outside.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A target directory of its own for packaging (see test.sh); --no-verify: the
# build below is the verification, with RocksDB from the shared target
# directory rather than a debug build of it.
cargo package --quiet --no-verify --allow-dirty --target-dir "$work/package" -p rocks-ribbon -p rocks-bridge
mkdir "$work/crates"
for crate in "$work"/package/package/*.crate; do
  tar xzf "$crate" -C "$work/crates"
done
bridge=$(ls -d "$work"/crates/rocks-bridge-*)
ribbon=$(ls -d "$work"/crates/rocks-ribbon-*)
if [ -e "$bridge/../../../rocks-bridge" ] || grep -q '\.\./' "$bridge/Cargo.toml"; then
  echo "the packaged rocks-bridge refers outside itself" >&2
  exit 1
fi

# The user's project: the example's sources and lock file, its rocks-bridge
# dependency by version (as the README shows), served from the unpacked crates.
cp -r examples/outside "$work/outside"
sed -i 's|^rocks-bridge = .*|rocks-bridge = "0.1"|' "$work/outside/Cargo.toml"
cat >> "$work/outside/Cargo.toml" <<TOML

[patch.crates-io]
rocks-bridge = { path = "$bridge" }
rocks-ribbon = { path = "$ribbon" }
TOML
cargo run --release --manifest-path "$work/outside/Cargo.toml"
