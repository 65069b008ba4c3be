//! Builds the native reference harness (cpp/harness.cc) and the
//! construction probes (cpp/construction.cc) against the RocksDB sources
//! that `librocksdb-sys` compiles.

#[path = "rocks-bridge/build/rocksdb_source.rs"]
mod rocksdb_source;

fn main() {
    let rocksdb = rocksdb_source::rocksdb_source_dir();
    let (major, _, _) = rocksdb_source::rocksdb_version(&rocksdb);
    let mut build = cxx_build::bridges(["src/harness.rs", "src/construction.rs"]);
    build.file("cpp/harness.cc").file("cpp/construction.cc");
    rocksdb_source::configure(&mut build, &rocksdb, major);
    build.compile("ribbon_compat_harness");
    println!("cargo:rerun-if-changed=src/harness.rs");
    println!("cargo:rerun-if-changed=cpp/harness.cc");
    println!("cargo:rerun-if-changed=cpp/harness.h");
    println!("cargo:rerun-if-changed=src/construction.rs");
    println!("cargo:rerun-if-changed=cpp/construction.cc");
    println!("cargo:rerun-if-changed=cpp/construction.h");
    println!("cargo:rerun-if-changed=rocks-bridge/build/rocksdb_source.rs");
}
