//! Builds the C++ half of the bridge (cpp/rust_filter_policy.cc) against
//! the RocksDB sources that `librocksdb-sys` compiles. Everything it reads is
//! inside this crate, so the packaged crate builds on its own.
//!
//! It also tells the crate which RocksDB that is: the environment variable
//! `ROCKS_BRIDGE_ROCKSDB_VERSION` (`"11.8.1"`) and the cfg
//! `rocks_bridge_rocksdb_major` (`"11"`), which `src/lib.rs` checks against
//! the `rocksdb-0-24` / `rocksdb-0-25` feature.

#[path = "build/rocksdb_source.rs"]
mod rocksdb_source;

fn main() {
    let rocksdb = rocksdb_source::rocksdb_source_dir();
    let (major, minor, patch) = rocksdb_source::rocksdb_version(&rocksdb);
    println!("cargo:rustc-env=ROCKS_BRIDGE_ROCKSDB_VERSION={major}.{minor}.{patch}");
    println!("cargo:rustc-check-cfg=cfg(rocks_bridge_rocksdb_major, values(any()))");
    println!("cargo:rustc-cfg=rocks_bridge_rocksdb_major=\"{major}\"");

    let mut build = cxx_build::bridges(["src/ffi.rs", "src/rocksdb_ffi.rs"]);
    build.file("cpp/rust_filter_policy.cc");
    rocksdb_source::configure(&mut build, &rocksdb, major);
    build.compile("rocks_bridge_policy");
    for path in [
        "src/ffi.rs",
        "src/rocksdb_ffi.rs",
        "cpp/rust_filter_policy.cc",
        "cpp/rust_filter_policy.h",
        "build/rocksdb_source.rs",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
}
