# Sourced by the other scripts: installs what the build needs (once per
# machine) and points cargo at a target directory that outlives a checkout,
# so RocksDB (about 20 minutes of C++) compiles once per machine.
set -euo pipefail

# True when a libclang that bindgen (through clang-sys) can load is present:
# libclang.so, libclang.so.N or libclang-N.so[.M], in the directories clang-sys
# searches. libclang-cpp.so.N (the C++ interface, which the base image ships)
# matches a naive libclang*.so* glob but is not what clang-sys loads.
have_loadable_libclang() {
  local dirs=() dir f
  [ -n "${LIBCLANG_PATH:-}" ] && dirs+=("$LIBCLANG_PATH")
  command -v llvm-config >/dev/null 2>&1 && dirs+=("$(llvm-config --libdir 2>/dev/null)")
  dirs+=(/usr/lib/llvm-*/lib /usr/lib/*-linux-gnu /usr/lib /usr/lib64 /usr/local/lib)
  for dir in "${dirs[@]}"; do
    for f in "$dir"/libclang.so "$dir"/libclang.so.* "$dir"/libclang-*.so "$dir"/libclang-*.so.*; do
      [ -e "$f" ] || continue
      case "${f##*/}" in libclang-cpp*) continue ;; esac
      return 0
    done
  done
  return 1
}

need_pkgs=()
command -v c++ >/dev/null 2>&1 || need_pkgs+=(g++)
command -v make >/dev/null 2>&1 || need_pkgs+=(make)
# bindgen (librocksdb-sys) loads libclang at build time; libclang-dev brings it
# with clang's own headers (stddef.h and friends), which bindgen also needs.
have_loadable_libclang || need_pkgs+=(libclang-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "installing: ${need_pkgs[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
  if ! have_loadable_libclang; then
    echo "libclang-dev was installed but no loadable libclang was found; set LIBCLANG_PATH" >&2
    exit 1
  fi
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/rocks-ribbon-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
