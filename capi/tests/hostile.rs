//! Issue 44, the C library: non-regular files refused at once, batches too
//! large for memory an error code (never an abort), the one range of
//! format_version, and a sketch left as it was by a failed database fill.

use ribbon::db::*;
use ribbon::filter::*;
use ribbon::reconcile::*;
use ribbon::sst::*;
use ribbon::standalone::*;
use ribbon::*;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::mpsc;
use std::time::Duration;

mod support;
use support::{cpath, last_error, root};

fn mkfifo(path: &Path) {
    let c = cpath(path);
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs `open` on another thread and returns its code and message, or
/// fails the test when it does not return within 20 seconds (an open that
/// blocks on the FIFO: the thread is left behind).
fn promptly(what: &str, open: impl FnOnce() -> (i32, String) + Send + 'static) -> (i32, String) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(open());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what}: blocked on a FIFO"))
}

#[test]
fn every_open_path_refuses_a_fifo_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("filter.fifo");
    mkfifo(&fifo);
    type Open = fn(&CStr) -> i32;
    let opens: [(&str, Open); 3] = [
        ("ribbon_standalone_open_path", |p| {
            let mut h = null_mut();
            // SAFETY: a valid path and out-pointer.
            unsafe { ribbon_standalone_open_path(p.as_ptr(), &mut h) }
        }),
        ("ribbon_sharded_open_path", |p| {
            let mut h = null_mut();
            // SAFETY: a valid path and out-pointer.
            unsafe { ribbon_sharded_open_path(p.as_ptr(), &mut h) }
        }),
        ("ribbon_sst_open", |p| {
            let mut h = null_mut();
            // SAFETY: a valid path and out-pointer.
            unsafe { ribbon_sst_open(p.as_ptr(), &mut h) }
        }),
    ];
    for (name, open) in opens {
        let path = cpath(&fifo);
        let (rc, msg) = promptly(name, move || (open(&path), last_error()));
        assert_eq!(rc, RIBBON_ERR_IO, "{name}: {msg}");
        assert!(
            msg.contains("not a regular file") && msg.contains("filter.fifo"),
            "{name}: {msg}"
        );
    }
}

/// The child half of `batch_allocation_failure_is_an_error_code`: runs only
/// when that test starts it (under a memory limit of its own).
#[test]
fn alloc_child() {
    if std::env::var_os("RIBBON_CAPI_ALLOC_CHILD").is_none() {
        return;
    }
    // 2^25 keys, each NULL with length 0 (valid empty keys): one read-only
    // mapping of zero pages serves as both arrays.
    let n: usize = 1 << 25;
    let bytes = n * 8;
    // SAFETY: a fresh anonymous read-only mapping; checked below.
    let map = unsafe {
        libc::mmap(
            null_mut(),
            bytes,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(map, libc::MAP_FAILED);
    // Address space for 128 MiB more: the key hashes (256 MiB) do not fit.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let limit = vm_kib * 1024 + (128 << 20);
    let rl = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: a valid rlimit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) }, 0);
    let keys = map as *const *const u8;
    let lens = map as *const usize;
    let policy = CString::new("ribbonfilter:10").unwrap();
    let (mut out, mut len) = (null_mut(), 0usize);
    // SAFETY: arrays of `n` readable elements; valid out-pointers.
    let rc = unsafe { ribbon_filter_build(policy.as_ptr(), 7, keys, lens, n, &mut out, &mut len) };
    assert_eq!(rc, RIBBON_ERR_MEMORY, "ribbon_filter_build: {}", last_error());
    assert!(last_error().contains("cannot allocate"), "{}", last_error());
    let mut h = null_mut();
    // SAFETY: as above.
    let rc = unsafe { ribbon_standalone_build(null(), keys, lens, n, &mut h) };
    assert_eq!(rc, RIBBON_ERR_MEMORY, "ribbon_standalone_build: {}", last_error());
    assert!(h.is_null());
    // Bytes too large to copy: the open functions that copy them.
    let data = map as *const u8;
    let mut sst = null_mut();
    // SAFETY: `bytes` readable bytes; a valid out-pointer.
    let rc = unsafe { ribbon_sst_open_bytes(data, bytes, &mut sst) };
    assert_eq!(rc, RIBBON_ERR_MEMORY, "ribbon_sst_open_bytes: {}", last_error());
    let mut f = null_mut();
    // SAFETY: as above.
    let rc = unsafe { ribbon_standalone_open_bytes(data, bytes, &mut f) };
    assert_eq!(
        rc,
        RIBBON_ERR_MEMORY,
        "ribbon_standalone_open_bytes: {}",
        last_error()
    );
    let mut sh = null_mut();
    // SAFETY: as above.
    let rc = unsafe { ribbon_sharded_open_bytes(data, bytes, &mut sh) };
    assert_eq!(
        rc,
        RIBBON_ERR_MEMORY,
        "ribbon_sharded_open_bytes: {}",
        last_error()
    );
    // Still alive, and a small batch still builds.
    // SAFETY: as above, 1000 keys.
    let rc = unsafe { ribbon_standalone_build(null(), keys, lens, 1000, &mut h) };
    assert_eq!(rc, RIBBON_OK, "{}", last_error());
    // SAFETY: a live handle, closed once.
    unsafe { ribbon_standalone_close(h) };
    println!("alive after RIBBON_ERR_MEMORY");
}

/// Runs this test binary's test `name` alone in a child process, with the
/// variable `env` set (the child tests do their work only then): whether
/// it exited 0, and its standard output and error.
fn run_child(name: &str, env: &str) -> (bool, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(env, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn batch_allocation_failure_is_an_error_code() {
    let (ok, text) = run_child("alloc_child", "RIBBON_CAPI_ALLOC_CHILD");
    assert!(ok, "the child failed or aborted: {text}");
    assert!(text.contains("alive after RIBBON_ERR_MEMORY"), "{text}");
}

fn build(fv: i32) -> (i32, String) {
    let policy = CString::new("ribbonfilter:10").unwrap();
    let key = b"k";
    let (p, l) = ([key.as_ptr()], [1usize]);
    let (mut out, mut len) = (null_mut(), 0usize);
    // SAFETY: valid arrays and out-pointers.
    let rc =
        unsafe { ribbon_filter_build(policy.as_ptr(), fv, p.as_ptr(), l.as_ptr(), 1, &mut out, &mut len) };
    // SAFETY: as returned (NULL is a no-op).
    unsafe { ribbon_bytes_free(out, len) };
    (rc, last_error())
}

#[test]
fn format_version_is_the_one_range_rocksdb_accepts() {
    for fv in 0..=7 {
        assert_eq!(build(fv).0, RIBBON_OK, "{fv}: {}", build(fv).1);
    }
    for fv in [-5, -1, 8, 1000] {
        let (rc, msg) = build(fv);
        assert_eq!(rc, RIBBON_ERR_ARGUMENT, "{fv}");
        assert_eq!(
            msg,
            rocks_ribbon::check_format_version(fv.into())
                .unwrap_err()
                .to_string()
        );
    }
}

fn serialize(s: *const RibbonSketch) -> Vec<u8> {
    let (mut out, mut len) = (null_mut(), 0usize);
    // SAFETY: a live sketch, valid out-pointers.
    let rc = unsafe { ribbon_sketch_serialize(s, &mut out, &mut len) };
    assert_eq!(rc, RIBBON_OK);
    // SAFETY: the library's buffer of `len` bytes, freed once.
    let v = unsafe { std::slice::from_raw_parts(out, len) }.to_vec();
    // SAFETY: as returned.
    unsafe { ribbon_bytes_free(out, len) };
    v
}

#[test]
fn a_failed_database_fill_leaves_the_sketch_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let src = root().join("sst/tests/fixtures-db/l0_only/db");
    let dst = tmp.path().join("db");
    std::fs::create_dir(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    let mut db = null_mut();
    // SAFETY: valid path and out-pointer.
    let rc = unsafe { ribbon_db_open(cpath(&dst).as_ptr(), null(), &mut db) };
    assert_eq!(rc, RIBBON_OK, "{}", last_error());
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { ribbon_sketch_new(1, 100, &mut s) }, RIBBON_OK);
    let key = b"already";
    // SAFETY: one live key.
    let rc = unsafe { ribbon_sketch_insert_many(s, [key.as_ptr()].as_ptr(), [key.len()].as_ptr(), 1) };
    assert_eq!(rc, RIBBON_OK);
    let before = serialize(s);
    // A data block of the largest table, damaged after the database was
    // opened: read (and refused) only part-way through the walk of the
    // live keys, after other keys were read.
    let mut ssts: Vec<PathBuf> = std::fs::read_dir(&dst)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    ssts.sort_by_key(|p| std::fs::metadata(p).unwrap().len());
    let victim = ssts.last().unwrap();
    let mut bytes = std::fs::read(victim).unwrap();
    let at = bytes.len() / 3;
    for b in &mut bytes[at..at + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(victim, bytes).unwrap();
    // SAFETY: live handles.
    let rc = unsafe { ribbon_sketch_insert_db(s, db) };
    assert_ne!(rc, RIBBON_OK);
    assert_eq!(serialize(s), before, "the failed fill changed the sketch");
    // SAFETY: live handles, freed once.
    unsafe {
        ribbon_sketch_free(s);
        ribbon_db_close(db);
    }
}

/// `ribbon_db_get_paths_json` of `keys`, its code.
fn get_paths(db: *const RibbonDb, keys: &[Vec<u8>]) -> i32 {
    let p: Vec<*const u8> = keys.iter().map(|k| k.as_ptr()).collect();
    let l: Vec<usize> = keys.iter().map(Vec::len).collect();
    let mut json = null_mut();
    // SAFETY: a live handle, arrays over live keys, a valid out-pointer.
    let rc = unsafe { ribbon_db_get_paths_json(db, p.as_ptr(), l.as_ptr(), keys.len(), &mut json) };
    // SAFETY: as returned (NULL is a no-op).
    unsafe { ribbon_string_free(json) };
    rc
}

/// A database handle shared with a thread, as a `Send` address.
struct Shared(*mut RibbonDb);
// SAFETY: a RibbonDb may be queried from any thread (the header says so).
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// The child half of `a_forked_child_never_waits_on_the_parents_lock`:
/// runs only when that test starts it (it forks, so in a process of its
/// own).
#[test]
fn fork_child() {
    if std::env::var_os("RIBBON_CAPI_FORK_CHILD").is_none() {
        return;
    }
    let dir = root().join("sst/tests/fixtures-db/l0_only/db");
    let mut db = null_mut();
    // SAFETY: valid path and out-pointer.
    let rc = unsafe { ribbon_db_open(cpath(&dir).as_ptr(), null(), &mut db) };
    assert_eq!(rc, RIBBON_OK);
    let shared = std::sync::Arc::new(Shared(db));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let batch: Vec<Vec<u8>> = (0..50_000u32).map(|i| format!("probe{i}").into_bytes()).collect();
    let busy = {
        let (shared, stop) = (shared.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(get_paths(shared.0, &batch), RIBBON_OK);
            }
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    for round in 0..20 {
        // SAFETY: fork; the child only queries and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let rc = get_paths(shared.0, &[b"k".to_vec()]);
            // SAFETY: ends the child at once (no destructors, no atexit).
            unsafe { libc::_exit(if rc == RIBBON_OK { 0 } else { 1 }) };
        }
        assert!(pid > 0);
        let start = std::time::Instant::now();
        let mut status = 0;
        loop {
            // SAFETY: our child; a valid status pointer.
            let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if done == pid {
                break;
            }
            if start.elapsed() > Duration::from_secs(20) {
                // SAFETY: our child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                panic!("round {round}: the forked child hung on the parent's lock");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "round {round}"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    busy.join().unwrap();
    // SAFETY: a live handle, closed once, no other user.
    unsafe { ribbon_db_close(db) };
    println!("forked children answered");
}

#[test]
fn a_forked_child_never_waits_on_the_parents_lock() {
    let (ok, text) = run_child("fork_child", "RIBBON_CAPI_FORK_CHILD");
    assert!(ok, "{text}");
    assert!(text.contains("forked children answered"), "{text}");
}
