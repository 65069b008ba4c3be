//! `ribbon_sst::db` against RocksDB 11.8.1 on the same database, in one
//! process (issue 48): the bench report's `dbreader` section.
//!
//! ```text
//! cargo run --release --bin db-reader-bench [-- --sizes 100000,1000000,5000000 --probes 100000 --work DIR]
//! ```
//!
//! For each size N, a database written by the workspace's RocksDB
//! (`bloomfilter:10`, automatic compactions off): 0.8 N keys flushed and
//! compacted to the last level, 0.2 N more flushed to L0; kept in `--work`
//! (default `/var/tmp/rocks-ribbon-db-reader-bench`) for later runs. Then,
//! on the same probes (`--probes` absent keys, as many present ones), the
//! two sides alternate within each of 3 rounds after an untimed one (each
//! figure its best round):
//!
//! * RocksDB's `Get` one key at a time and `MultiGet` (`DB::multi_get`)
//!   against `Db::get_paths` in one batch and one key at a time (each key's
//!   whole `Get` path: every file asked and its answer, whether found);
//! * every live key: RocksDB's iterator (keys only) against
//!   `Db::for_each_live_key`, each in a child process of its own (this
//!   binary with `--walk SIDE DIR`), with that process's peak RSS
//!   (`VmHWM`): memory independent of the key count is the target.
//!
//! Prints the section's markdown on standard output.

use clap::Parser;
use ribbon_compat::proc_status::status_kib;
use ribbon_sst::db::{get::FileCache, Db};
use rocksdb::{BlockBasedOptions, Options, ReadOptions, DB};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(about = "ribbon_sst::db against RocksDB on the same database (issue 48)")]
struct Args {
    /// Database sizes (keys), comma-separated.
    #[arg(long, default_value = "100000,1000000,5000000", value_delimiter = ',')]
    sizes: Vec<u64>,
    /// Absent keys probed (and as many present ones).
    #[arg(long, default_value_t = 100_000)]
    probes: u64,
    /// Where the databases are kept.
    #[arg(long, default_value = "/var/tmp/rocks-ribbon-db-reader-bench")]
    work: PathBuf,
    /// Internal: walk DIR's live keys as SIDE (`rocksdb` or `ribbon`) and
    /// print `KEYS SECONDS VMHWM_KIB`.
    #[arg(long, num_args = 2, value_names = ["SIDE", "DIR"])]
    walk: Option<Vec<String>>,
}

fn key(i: u64) -> Vec<u8> {
    format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes()
}

fn absent(i: u64) -> Vec<u8> {
    format!("{:016x}!", i.wrapping_mul(0xD1B5_4A32_D192_ED03)).into_bytes()
}

fn write_db(dir: &Path, n: u64) {
    if dir.join("DONE").exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_write_buffer_size(1 << 30);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir).expect("open for writing");
    let first = n * 8 / 10;
    for i in 0..n {
        db.put(key(i), format!("v{i}")).expect("put");
        if i + 1 == first {
            db.flush().expect("flush");
            db.compact_range::<&[u8], &[u8]>(None, None);
        }
    }
    db.flush().expect("flush");
    drop(db);
    std::fs::write(dir.join("DONE"), b"").expect("DONE");
}

fn walk(side: &str, dir: &Path) {
    let t = Instant::now();
    let mut n = 0u64;
    if side == "rocksdb" {
        let db = DB::open_for_read_only(&Options::default(), dir, false).expect("open read-only");
        let mut it = db.raw_iterator();
        it.seek_to_first();
        while it.valid() {
            std::hint::black_box(it.key());
            n += 1;
            it.next();
        }
    } else {
        let db = Db::open(dir).expect("ribbon_sst::db::Db::open");
        db.for_each_live_key(|k| {
            std::hint::black_box(k);
            n += 1;
        })
        .expect("live keys");
    }
    println!("{n} {} {}", t.elapsed().as_secs_f64(), status_kib("VmHWM:"));
}

/// (keys, seconds, peak RSS in MiB) of a child process walking `dir`.
fn walk_child(side: &str, dir: &Path) -> (u64, f64, f64) {
    let out = std::process::Command::new(std::env::current_exe().expect("this binary"))
        .arg("--walk")
        .arg(side)
        .arg(dir)
        .output()
        .expect("child walk");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.split_whitespace().collect();
    (
        f[0].parse().expect("keys"),
        f[1].parse().expect("seconds"),
        f[2].parse::<f64>().expect("VmHWM") / 1024.0,
    )
}

fn best(slot: &mut f64, f: impl FnOnce()) {
    let t = Instant::now();
    f();
    *slot = slot.min(t.elapsed().as_secs_f64());
}

fn main() {
    let a = Args::parse();
    if let Some(w) = &a.walk {
        walk(&w[0], Path::new(&w[1]));
        return;
    }
    std::fs::create_dir_all(&a.work).expect("work directory");
    println!("`cargo run --release --bin db-reader-bench`: `ribbon_sst::db::Db` against RocksDB 11.8.1 (rust-rocksdb) on the databases RocksDB wrote (bloomfilter:10; 0.8 N keys compacted to the last level, 0.2 N flushed to L0), best of 3 rounds after a warm one; the walks each in a process of its own. Ratio: ribbon-sst's time over RocksDB's best (`Get` or `MultiGet`).");
    println!();
    println!("| database | what | keys | RocksDB | ribbon-sst | ratio (batch / single) | peak RSS (RocksDB / ribbon-sst) |");
    println!("|---|---|---:|---|---|---:|---|");
    for &n in &a.sizes {
        let dir = a.work.join(format!("db{n}"));
        write_db(&dir, n);
        let q = a.probes.min(n);
        let rocks = DB::open_for_read_only(&Options::default(), &dir, false).expect("open read-only");
        let ours = Db::open(&dir).expect("ribbon_sst::db::Db::open");
        let mut cache = FileCache::new();
        for (what, keys) in [
            ("absent Gets", (0..q).map(absent).collect::<Vec<_>>()),
            ("present Gets", (0..q).map(|i| key(i * (n / q))).collect()),
        ] {
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let mut t = [f64::INFINITY; 4];
            for round in 0..4 {
                let mut r = [f64::INFINITY; 4];
                best(&mut r[0], || {
                    for k in &refs {
                        std::hint::black_box(rocks.get_pinned_opt(k, &ReadOptions::default()).expect("get"));
                    }
                });
                best(&mut r[1], || {
                    std::hint::black_box(rocks.multi_get(&refs));
                });
                best(&mut r[2], || {
                    std::hint::black_box(ours.get_paths(&refs, &mut cache).expect("get_paths"));
                });
                best(&mut r[3], || {
                    for k in &refs {
                        std::hint::black_box(ours.get_paths(&[k], &mut cache).expect("get_paths"));
                    }
                });
                if round > 0 {
                    for (b, v) in t.iter_mut().zip(r) {
                        *b = b.min(v);
                    }
                }
            }
            let found = ours
                .get_paths(&refs, &mut cache)
                .expect("get_paths")
                .iter()
                .filter(|p| p.found())
                .count();
            let want = rocks
                .multi_get(&refs)
                .iter()
                .filter(|r| matches!(r, Ok(Some(_))))
                .count();
            assert_eq!(
                found, want,
                "{what}: ribbon-sst and RocksDB disagree on the keys found"
            );
            let base = t[0].min(t[1]);
            println!(
                "| {n} keys | {what} | {q} | Get {:.3} s, MultiGet {:.3} s | get_paths {:.3} s, one key a call {:.3} s | {:.2} / {:.2} | |",
                t[0],
                t[1],
                t[2],
                t[3],
                t[2] / base,
                t[3] / base
            );
        }
        drop(rocks);
        drop(ours);
        let mut w = [(0, f64::INFINITY, 0.0); 2];
        for _ in 0..3 {
            for (slot, side) in w.iter_mut().zip(["rocksdb", "ribbon"]) {
                let r = walk_child(side, &dir);
                if r.1 < slot.1 {
                    *slot = r;
                }
            }
        }
        assert_eq!(
            w[0].0, w[1].0,
            "live keys: RocksDB's iterator and ribbon-sst disagree"
        );
        println!(
            "| {n} keys | live keys | {} | iterator {:.3} s | for_each_live_key {:.3} s | {:.2} | {:.0} / {:.0} MiB |",
            w[0].0,
            w[0].1,
            w[1].1,
            w[1].1 / w[0].1,
            w[0].2,
            w[1].2
        );
    }
}
