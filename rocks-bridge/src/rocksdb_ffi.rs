//! The C++ functions Rust calls (`cpp/rust_filter_policy.cc`): adding a
//! policy name to RocksDB's `ObjectLibrary`, and asking RocksDB which policy
//! an id creates. A bridge of its own, apart from [`crate::ffi`] (what C++
//! calls): the policy registry uses this one, and `ffi` uses the registry.

#[cxx::bridge(namespace = "rocks_bridge")]
pub(crate) mod bridge {
    unsafe extern "C++" {
        include!("rocks-bridge/cpp/rust_filter_policy.h");

        /// Adds `name` to RocksDB's `ObjectLibrary`: the ids `NAME` and
        /// `NAME:ARGS` then create the Rust policy registered under it.
        fn register_policy_name(name: &str);
        /// The id RocksDB writes to an OPTIONS file for the policy `id`, or
        /// `""` for the ids that mean "no policy"; an error when RocksDB
        /// creates no policy from `id`.
        fn policy_id(id: &str) -> Result<String>;
    }
}
