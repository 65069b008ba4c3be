//! The Python extension module `rocks_ribbon._rocks_ribbon` (issue 34):
//! RocksDB's filters, SST files and database directories from Python,
//! through PyO3. The package `rocks_ribbon` (python/rocks_ribbon/)
//! re-exports everything here; its type stubs are
//! `rocks_ribbon/_rocks_ribbon.pyi`.
//!
//! Layout: [`keys`] (keys from Python: `bytes` lists and NumPy `S`
//! arrays, and the batch-query path), [`handle`] (`close()`, `closed` and
//! `with` blocks), [`errors`] (the exception hierarchy), then one module per
//! capability: [`filters`] (RocksDB-format filter blocks, standalone and
//! Balanced Ribbon), [`sst`] (SST files), [`db`] (database directories),
//! [`reconcile`] (sketches and differences), and `sharded` (issue 35).
//!
//! Contracts: no panic crosses into Python (errors are exceptions of the
//! `rocks_ribbon.Error` hierarchy, with the Rust error's one-line message);
//! batch queries take a list of `bytes` or a NumPy `S<n>` array and
//! return a NumPy bool array, with the GIL released while they run.
#![warn(missing_docs)]

use pyo3::prelude::*;

mod db;
mod errors;
mod filters;
mod handle;
mod keys;
mod reconcile;
mod sharded;
mod sst;

/// The extension module: classes, functions and exceptions.
#[pymodule]
fn _rocks_ribbon(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(filters::build_filter, m)?)?;
    m.add_function(wrap_pyfunction!(filters::_rust_build_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(filters::_rust_query_seconds, m)?)?;
    m.add_class::<filters::FilterReader>()?;
    m.add_class::<filters::Ribbon>()?;
    m.add_class::<sst::SstFile>()?;
    m.add_class::<db::Db>()?;
    m.add_class::<db::LiveKeys>()?;
    m.add_class::<reconcile::Sketch>()?;
    m.add_function(wrap_pyfunction!(reconcile::recommended_cells, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    sharded::register(m)?;
    Ok(())
}
