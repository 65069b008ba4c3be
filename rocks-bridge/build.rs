//! Builds the C++ half of the bridge (../cpp/rust_filter_policy.cc) against
//! the RocksDB sources that `librocksdb-sys` compiles.

#[path = "../build/rocksdb_source.rs"]
mod rocksdb_source;

fn main() {
    let rocksdb = rocksdb_source::rocksdb_source_dir();
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut build = cxx_build::bridges(["src/ffi.rs", "src/rocksdb_ffi.rs"]);
    build
        .file(workspace.join("cpp/rust_filter_policy.cc"))
        .include(&workspace);
    rocksdb_source::configure(&mut build, &rocksdb);
    build.compile("rocks_bridge_policy");
    println!("cargo:rerun-if-changed=src/ffi.rs");
    println!("cargo:rerun-if-changed=src/rocksdb_ffi.rs");
    println!("cargo:rerun-if-changed=../cpp/rust_filter_policy.cc");
    println!("cargo:rerun-if-changed=../cpp/rust_filter_policy.h");
    println!("cargo:rerun-if-changed=../build/rocksdb_source.rs");
}
