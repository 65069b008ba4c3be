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

/// The version of the RocksDB sources at `rocksdb` (the directory
/// [`rocksdb_source_dir`] returns), read from `include/rocksdb/version.h`:
/// `(major, minor, patch)`.
pub fn rocksdb_version(rocksdb: &std::path::Path) -> (u32, u32, u32) {
    let header = rocksdb.join("include/rocksdb/version.h");
    let text =
        std::fs::read_to_string(&header).unwrap_or_else(|e| panic!("cannot read {}: {e}", header.display()));
    let field = |name: &str| -> u32 {
        text.lines()
            .find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("#define") && words.next() == Some(name))
                    .then(|| words.next().and_then(|v| v.parse().ok()))
                    .flatten()
            })
            .unwrap_or_else(|| panic!("{} defines no numeric {name}", header.display()))
    };
    (
        field("ROCKSDB_MAJOR"),
        field("ROCKSDB_MINOR"),
        field("ROCKSDB_PATCH"),
    )
}

/// A `cc::Build` with the flags `librocksdb-sys` compiles RocksDB with on
/// Linux, so class layouts match: NDEBUG, the platform defines, RTTI left at
/// the compiler default (librocksdb-sys does not pass -fno-rtti), and the
/// C++ standard and defines of the `librocksdb-sys` that ships these sources:
/// 0.19 (RocksDB 11) compiles with C++20 and defines HAVE_ALIGNED_NEW,
/// HAVE_UINT128_EXTENSION and the AUXV/FALLOCATE/RANGESYNC probes; 0.17
/// (RocksDB 10) compiles with C++17 and defines ROCKSDB_SUPPORT_THREAD_LOCAL
/// instead (their build.rs files, side by side). `major` is the sources'
/// major version, as [`rocksdb_version`] reads it.
pub fn configure(build: &mut cc::Build, rocksdb: &std::path::Path, major: u32) {
    build
        .cpp(true)
        .include(rocksdb.join("include"))
        .include(rocksdb)
        .define("NDEBUG", Some("1"))
        .define("OS_LINUX", None)
        .define("ROCKSDB_PLATFORM_POSIX", None)
        .define("ROCKSDB_LIB_IO_POSIX", None)
        .define("ROCKSDB_SCHED_GETCPU_PRESENT", None)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-missing-field-initializers")
        .flag_if_supported("-Wno-unused-variable")
        .warnings(false);
    if major >= 11 {
        build
            .std("c++20")
            .define("HAVE_ALIGNED_NEW", None)
            .define("HAVE_UINT128_EXTENSION", None)
            .define("ROCKSDB_AUXV_GETAUXVAL_PRESENT", None)
            .define("ROCKSDB_FALLOCATE_PRESENT", None)
            .define("ROCKSDB_RANGESYNC_PRESENT", None);
    } else {
        build.std("c++17").define("ROCKSDB_SUPPORT_THREAD_LOCAL", None);
    }
}
