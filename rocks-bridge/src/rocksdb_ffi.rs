//! The C++ functions Rust calls (`cpp/rust_filter_policy.cc`): adding a
//! policy name to RocksDB's `ObjectLibrary`, asking RocksDB which policy an
//! id creates, and writing an OPTIONS file from options strings. A bridge of
//! its own, apart from [`crate::ffi`] (what C++ calls): the policy registry
//! uses this one, and `ffi` uses the registry.

// `policy_id` serves `set_filter_policy`, which rust-rocksdb 0.24 cannot have.
#[cfg_attr(not(feature = "rocksdb-0-25"), allow(dead_code))]
#[cxx::bridge(namespace = "rocks_bridge")]
pub(crate) mod bridge {
    // Shared types.

    /// One column family of an OPTIONS file: its name and its options
    /// string (RocksDB's `ColumnFamilyOptions` syntax).
    struct FamilyOptions {
        name: String,
        options: String,
    }

    unsafe extern "C++" {
        include!("rocks-bridge/cpp/rust_filter_policy.h");

        /// Adds `name` to RocksDB's `ObjectLibrary`: the ids `NAME` and
        /// `NAME:ARGS` then create the Rust policy registered under it.
        fn register_policy_name(name: &str);
        /// The id RocksDB writes to an OPTIONS file for the policy `id`, or
        /// `""` for the ids that mean "no policy"; an error when RocksDB
        /// creates no policy from `id`.
        fn policy_id(id: &str) -> Result<String>;
        /// Parses `db_options` and each family's options with RocksDB's own
        /// parser (unknown names refused, RocksDB's defaults for the rest)
        /// and writes them as the OPTIONS file `file`, which RocksDB reads
        /// back and compares with what it wrote; an error with RocksDB's
        /// message otherwise. The first family must be `default`.
        fn persist_options(file: &str, db_options: &str, families: &[FamilyOptions]) -> Result<()>;
    }
}
