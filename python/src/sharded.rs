//! Sharded (billion-key) containers from Python, for `rocks_ribbon.spark` (issue 35): work in progress.
use pyo3::prelude::*;

/// Adds this module's functions and classes to the extension module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
