# Sourced by the other scripts: installs what the build needs (once per
# machine) and points cargo at a target directory that outlives a checkout,
# so RocksDB (about 20 minutes of C++) compiles once per machine.
set -euo pipefail

need_pkgs=()
command -v c++ >/dev/null 2>&1 || need_pkgs+=(g++)
# bindgen (librocksdb-sys) needs libclang.
if ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && ! ls /usr/lib/*/libclang*.so* >/dev/null 2>&1; then
  need_pkgs+=(libclang-dev)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "installing: ${need_pkgs[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/rocks-ribbon-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
