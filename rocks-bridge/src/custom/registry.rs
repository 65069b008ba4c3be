//! The registered policies (the `rust.*` ones and users'): one factory per
//! name, and the rule for which names a user may take.

use super::Policy;
use crate::Error;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Makes a policy from the arguments after `NAME:` (`None` for a bare `NAME`).
pub(crate) type Factory = dyn Fn(Option<&str>) -> Result<Arc<dyn Policy>, String> + Send + Sync;

fn factories() -> &'static Mutex<HashMap<String, Arc<Factory>>> {
    static FACTORIES: OnceLock<Mutex<HashMap<String, Arc<Factory>>>> = OnceLock::new();
    FACTORIES.get_or_init(Default::default)
}

/// Names RocksDB or this crate already give a meaning: RocksDB's built-in
/// ids and families, the "no policy" ids, and the `rust.` policies.
fn reserved(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "bloomfilter" | "ribbonfilter" | "nullptr" | "null"
    ) || lower.starts_with("rocksdb.")
        || lower.starts_with("rust.")
}

/// Registers `factory` under `name`, so that RocksDB creates a policy for the
/// id `name` (the factory gets `None`) and `name:ARGS` (it gets
/// `Some(ARGS)`). Also registers the bridge's own policies ([`crate::register`]).
///
/// `name` is ASCII letters, digits, `.`, `_` and `-`, and is not taken:
/// RocksDB's ids (`bloomfilter`, `ribbonfilter`, `rocksdb.*`), `nullptr`,
/// the `rust.*` policies of this crate, or a name registered before in this
/// process (RocksDB's registry cannot forget a name). The factory's errors
/// become RocksDB's error for the id; see the [module](super) docs for the
/// rest of the contract.
pub fn register_policy<F>(name: &str, factory: F) -> Result<(), Error>
where
    F: Fn(Option<&str>) -> Result<Arc<dyn Policy>, String> + Send + Sync + 'static,
{
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !valid {
        return Err(Error(format!(
            "invalid filter policy name {name:?}: use ASCII letters, digits, '.', '_' and '-'"
        )));
    }
    if reserved(name) {
        return Err(Error(format!(
            "filter policy name {name:?} is reserved (RocksDB's own ids, nullptr and rust.* are taken)"
        )));
    }
    crate::register();
    insert(name, Arc::new(factory))
}

/// Registers one of this crate's own policies (a reserved name).
pub(crate) fn register_builtin(name: &str, factory: Arc<Factory>) -> Result<(), Error> {
    insert(name, factory)
}

/// Adds `factory` under `name`, in this registry and in RocksDB's.
fn insert(name: &str, factory: Arc<Factory>) -> Result<(), Error> {
    {
        let mut map = factories().lock().unwrap_or_else(PoisonError::into_inner);
        if map.contains_key(name) {
            return Err(Error(format!(
                "a filter policy named {name:?} is already registered"
            )));
        }
        map.insert(name.to_string(), factory);
    }
    crate::rocksdb_ffi::bridge::register_policy_name(name);
    Ok(())
}

/// Creates the policy an id names, checking that its own id names it again;
/// with the name it is registered under.
pub(crate) fn make_policy(id: &str) -> Result<(String, Arc<dyn Policy>), String> {
    let (name, args) = match id.split_once(':') {
        Some((name, args)) => (name, Some(args)),
        None => (id, None),
    };
    let factory = factories()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
        .cloned()
        .ok_or_else(|| format!("no Rust filter policy is registered as {name:?}"))?;
    let policy = catch_unwind(AssertUnwindSafe(|| factory(args)))
        .map_err(|_| format!("the factory of filter policy {name:?} panicked on {id:?}"))??;
    let own = catch_unwind(AssertUnwindSafe(|| policy.id()))
        .map_err(|_| format!("filter policy {name:?}: id() panicked"))?;
    let names_it = own == name || own.strip_prefix(name).is_some_and(|rest| rest.starts_with(':'));
    if !names_it {
        return Err(format!(
            "filter policy {id:?} gives its id as {own:?}, which does not start with {name:?}: RocksDB could not recreate it from an OPTIONS file"
        ));
    }
    Ok((name.to_string(), policy))
}
