//! Builds the C++ half of the bridge (cpp/rust_filter_policy.cc) against
//! the RocksDB sources that `librocksdb-sys` compiles. Everything it reads is
//! inside this crate, so the packaged crate builds on its own.

#[path = "build/rocksdb_source.rs"]
mod rocksdb_source;

fn main() {
    let rocksdb = rocksdb_source::rocksdb_source_dir();
    let mut build = cxx_build::bridges(["src/ffi.rs", "src/rocksdb_ffi.rs"]);
    build.file("cpp/rust_filter_policy.cc");
    rocksdb_source::configure(&mut build, &rocksdb);
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
