//! The Python extension module `rocks_ribbon._rocks_ribbon`: work in progress (issue 34).
use pyo3::prelude::*;

mod sharded;

#[pymodule]
fn _rocks_ribbon(m: &Bound<'_, PyModule>) -> PyResult<()> {
    sharded::register(m)?;
    Ok(())
}
