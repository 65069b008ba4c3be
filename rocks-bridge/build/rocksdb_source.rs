// Shared by the build scripts of the root package and of rocks-bridge: how to
// compile C++ against the RocksDB that `librocksdb-sys` builds.
//
// Included with `#[path]` from each build.rs.

use std::path::PathBuf;
use std::process::Command;

/// The `rocksdb/` source directory inside the `librocksdb-sys` package that
/// this build links (never a fixed path): `librocksdb-sys` publishes its
/// package directory to direct dependents as `DEP_ROCKSDB_CARGO_MANIFEST_DIR`;
/// without it, `cargo metadata` finds the package.
pub fn rocksdb_source_dir() -> PathBuf {
    println!("cargo:rerun-if-env-changed=DEP_ROCKSDB_CARGO_MANIFEST_DIR");
    if let Some(dir) = std::env::var_os("DEP_ROCKSDB_CARGO_MANIFEST_DIR") {
        let src = PathBuf::from(dir).join("rocksdb");
        if src.join("include/rocksdb/filter_policy.h").exists() {
            return src;
        }
    }
    from_cargo_metadata()
}

fn from_cargo_metadata() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--manifest-path",
        ])
        .arg(manifest.join("Cargo.toml"))
        .output()
        .expect("failed to run `cargo metadata`");
    assert!(
        out.status.success(),
        "`cargo metadata` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("cargo metadata is UTF-8");
    // The JSON is large; find the librocksdb-sys package's manifest_path
    // without pulling a JSON parser into the build.
    let key = "\"manifest_path\":\"";
    for (i, _) in text.match_indices(key) {
        let rest = &text[i + key.len()..];
        let end = rest.find('"').expect("unterminated manifest_path");
        let path = &rest[..end];
        let dir = PathBuf::from(path);
        let name = dir
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with("librocksdb-sys-") {
            let src = dir.parent().unwrap().join("rocksdb");
            assert!(
                src.join("include/rocksdb/filter_policy.h").exists(),
                "librocksdb-sys at {} has no RocksDB sources",
                src.display()
            );
            return src;
        }
    }
    panic!("librocksdb-sys not found in `cargo metadata`; is it a dependency?");
}

/// A `cc::Build` with the flags `librocksdb-sys` compiles RocksDB with on
/// Linux, so class layouts match: C++20, NDEBUG, the platform defines, RTTI
/// left at the compiler default (librocksdb-sys does not pass -fno-rtti).
pub fn configure(build: &mut cc::Build, rocksdb: &std::path::Path) {
    build
        .cpp(true)
        .std("c++20")
        .include(rocksdb.join("include"))
        .include(rocksdb)
        .define("NDEBUG", Some("1"))
        .define("HAVE_ALIGNED_NEW", None)
        .define("HAVE_UINT128_EXTENSION", None)
        .define("OS_LINUX", None)
        .define("ROCKSDB_PLATFORM_POSIX", None)
        .define("ROCKSDB_LIB_IO_POSIX", None)
        .define("ROCKSDB_SCHED_GETCPU_PRESENT", None)
        .define("ROCKSDB_AUXV_GETAUXVAL_PRESENT", None)
        .define("ROCKSDB_FALLOCATE_PRESENT", None)
        .define("ROCKSDB_RANGESYNC_PRESENT", None)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-missing-field-initializers")
        .flag_if_supported("-Wno-unused-variable")
        .warnings(false);
}
