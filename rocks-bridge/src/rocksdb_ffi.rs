//! The C++ functions Rust calls (`cpp/rust_filter_policy.cc`): adding a
//! policy name to RocksDB's `ObjectLibrary`, and the filter policy of an
//! `Options`' block-based table factory. A bridge of its own, apart from
//! [`crate::ffi`] (what C++ calls): the policy registry uses this one, and
//! `ffi` uses the registry.

#[cxx::bridge(namespace = "rocks_bridge")]
pub(crate) mod bridge {
    unsafe extern "C++" {
        include!("cpp/rust_filter_policy.h");

        /// Adds `name` to RocksDB's `ObjectLibrary`: the ids `NAME` and
        /// `NAME:ARGS` then create the Rust policy registered under it.
        fn register_policy_name(name: &str);
        /// Sets the filter policy of the block-based table factory of the
        /// `rocksdb_options_t` at `options_address` to the policy `id`.
        fn set_table_filter_policy(options_address: usize, id: &str) -> Result<()>;
        /// The id of that filter policy, or `""` when there is none.
        fn table_filter_policy_id(options_address: usize) -> String;
    }
}
