//! SST files from Python: `SstFile`, its filter queries (whole keys and
//! prefixes) and its description.

use crate::errors::sst_error;
use crate::handle::{closable_pymethods, Handle};
use crate::keys::{answer_many, Answers};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ribbon_sst::{SstFile as RustSst, TableInfo};
use std::path::PathBuf;
use std::sync::Arc;

/// SstFile(path)
///
/// A block-based SST file opened as far as its filter: footer, metaindex,
/// properties and every filter block, checksum-verified. Queries answer as
/// RocksDB's ``Get`` asks the table's filter (full, partitioned, or the
/// block-based filter of RocksDB before 7.0; Ribbon, FastLocalBloom and
/// legacy Bloom), so ``False`` means RocksDB would not read a data block
/// for that key.
///
/// Raises ``IoError`` for a file that cannot be read, ``CorruptionError``
/// for bytes that are not a valid table, ``UnsupportedError`` for tables
/// this reader refuses (plain and cuckoo tables, unknown versions). Holds
/// the file open: use ``with SstFile(p) as sst:`` or ``close()``.
///
/// >>> with SstFile("000012.sst") as sst:          # doctest: +SKIP
/// ...     sst.may_match(b"key1"), sst.info()["filter_kind"]
/// (True, 'Standard128Ribbon')
#[pyclass(module = "rocks_ribbon", name = "SstFile", frozen)]
pub struct SstFile {
    handle: Handle<Arc<RustSst>>,
    path: Option<PathBuf>,
}

impl SstFile {
    /// An open table read from `path` (`None`: from bytes).
    fn open(sst: RustSst, path: Option<PathBuf>) -> Self {
        let name = Self::name_of(path.as_ref());
        Self {
            handle: Handle::new(Arc::new(sst), format!("{name}: the SST file is closed")),
            path,
        }
    }

    /// The open table; `ClosedError` after `close()`.
    fn get(&self) -> PyResult<Arc<RustSst>> {
        self.handle.get()
    }

    fn name_of(path: Option<&PathBuf>) -> String {
        path.map_or_else(|| "<bytes>".to_owned(), |p| p.display().to_string())
    }
}

closable_pymethods! {
/// close(): closes the file. Later queries raise ``ClosedError``;
/// closing twice is allowed.
impl SstFile {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let sst = py.detach(|| RustSst::open(&path)).map_err(sst_error)?;
        Ok(Self::open(sst, Some(path)))
    }

    /// SstFile.from_bytes(data) -> SstFile
    ///
    /// A table from the whole file's bytes (copied).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let owned = crate::keys::copy_bytes(data)?;
        let sst = py.detach(|| RustSst::from_bytes(owned)).map_err(sst_error)?;
        Ok(Self::open(sst, None))
    }

    /// The path given, or ``None`` for a table read from bytes.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// may_match(key) -> bool
    ///
    /// Whether the table's filter may hold user key ``key`` (``False``:
    /// RocksDB's ``Get`` skips the table's data blocks).
    fn may_match(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
        let sst = self.get()?;
        Ok(py.detach(|| sst.key_may_match(key)))
    }

    /// may_match_many(keys) -> numpy.ndarray[bool]
    ///
    /// ``may_match`` of each key of ``keys`` (a list of ``bytes`` or a NumPy
    /// ``S<n>`` array), in order, asked in one batch with the GIL released.
    fn may_match_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> Answers<'py> {
        let sst = self.get()?;
        answer_many(py, keys, |keys, out| {
            out.copy_from_slice(&sst.key_may_match_many(&keys.slices()?));
            Ok(())
        })
    }

    /// prefix_may_match(key) -> bool
    ///
    /// Whether a key with ``key``'s prefix may be in the table, as a prefix
    /// seek to ``key`` asks the filter (the table's prefix extractor gives
    /// the prefix; ``True`` when ``key`` is outside its domain). Raises
    /// ``UnsupportedError`` when the table has no prefix extractor this
    /// reader can reproduce.
    fn prefix_may_match(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
        let sst = self.get()?;
        py.detach(|| sst.prefix_may_match(key)).map_err(sst_error)
    }

    /// prefix_may_match_many(keys) -> numpy.ndarray[bool]
    ///
    /// ``prefix_may_match`` of each key, in order, with the GIL released.
    fn prefix_may_match_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> Answers<'py> {
        let sst = self.get()?;
        answer_many(py, keys, |keys, out| {
            let got = sst.prefix_may_match_many(&keys.slices()?).map_err(sst_error)?;
            out.copy_from_slice(&got);
            Ok(())
        })
    }

    /// info() -> dict
    ///
    /// The table and its filter: ``filter_layout`` (``none``, ``full``,
    /// ``partitioned``, ``block-based``, ...), ``filter_kind``
    /// (``Standard128Ribbon``, ``FastLocalBloom``, ...), ``policy_name``,
    /// ``filter_bytes``, ``num_entries``, ``expected_fp_rate``,
    /// ``prefix_extractor``, ``comparator``, ... (the ``ribbon sst info``
    /// fields; absent properties are ``None``).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sst = self.get()?;
        let i = TableInfo::new(&sst);
        let d = PyDict::new(py);
        d.set_item("path", self.path.clone())?;
        d.set_item("file_size", sst.file_len())?;
        d.set_item("format_version", i.format_version)?;
        d.set_item("checksum_type", i.checksum_type)?;
        d.set_item("filter_layout", i.filter_layout)?;
        d.set_item("filter_family", i.family())?;
        d.set_item("filter_kind", &i.filter_kind)?;
        d.set_item("policy_name", &i.policy_name)?;
        d.set_item("filter_block_name", &i.filter_block_name)?;
        d.set_item("filter_bytes", i.filter_bytes)?;
        d.set_item("filter_size_property", i.filter_size_property)?;
        d.set_item("partitions", i.partitions)?;
        d.set_item("block_filters", i.block_filters)?;
        d.set_item("num_entries", i.num_entries)?;
        d.set_item("num_filter_entries", i.num_filter_entries)?;
        d.set_item("bits_per_filter_entry", i.bits_per_filter_entry)?;
        d.set_item("bits_per_table_entry", i.bits_per_table_entry)?;
        d.set_item("seeds", &i.seeds)?;
        d.set_item("ribbon_blocks", i.ribbon_blocks)?;
        d.set_item("bloom_cache_lines", i.bloom_cache_lines)?;
        d.set_item("probes", &i.probes)?;
        d.set_item("expected_fp_rate", i.expected_fp_rate)?;
        d.set_item("whole_key_filtering", i.whole_key_filtering)?;
        d.set_item("prefix_extractor", &i.prefix_extractor)?;
        d.set_item("comparator", &i.comparator)?;
        d.set_item("index_type", &i.index_type)?;
        d.set_item("compression", &i.compression)?;
        d.set_item("compression_dict_bytes", i.compression_dict_bytes)?;
        d.set_item("data_size", i.data_size)?;
        d.set_item("num_data_blocks", i.num_data_blocks)?;
        d.set_item("column_family", &i.column_family)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "SstFile({:?}{})",
            Self::name_of(self.path.as_ref()),
            self.handle.repr_suffix()
        )
    }
}
}
