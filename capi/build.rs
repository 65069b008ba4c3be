//! Writes pkg-config files beside the libraries cargo builds (issue 48), so
//! that a C program compiles and runs with
//!
//! ```sh
//! cc app.c $(pkg-config --cflags --libs target/release/ribbon.pc)          # libribbon.so, found at run time (rpath)
//! cc app.c $(pkg-config --cflags --libs target/release/ribbon-static.pc)   # libribbon.a, nothing to find at run time
//! ```
//!
//! in a fresh shell: no `LD_LIBRARY_PATH`, no `CARGO_TARGET_DIR`.
//!
//! Both files go to the profile directory (`target/release`, `target/debug`,
//! `$CARGO_TARGET_DIR/release`, `target/<triple>/release` when
//! cross-compiling), where cargo puts `libribbon.so` and `libribbon.a`: the
//! third ancestor of `OUT_DIR` (`<profile>/build/ribbon-capi-<hash>/out`).
//! Their paths are absolute: the include directory of this checkout and the
//! profile directory (its real path, links resolved). A build script that cannot write them warns and goes
//! on (the library itself does not need them).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out_dir) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo:warning=OUT_DIR is not set: no ribbon.pc written");
        return;
    };
    // <profile>/build/ribbon-capi-<hash>/out
    let Some(libdir) = out_dir.ancestors().nth(3) else {
        println!(
            "cargo:warning={}: no profile directory above it: no ribbon.pc written",
            out_dir.display()
        );
        return;
    };
    // The real directory: the same file whichever link the target
    // directory was reached through (a `target` link to CARGO_TARGET_DIR),
    // since cargo need not rerun this script when only the link changes.
    let libdir = std::fs::canonicalize(libdir).unwrap_or_else(|_| libdir.to_path_buf());
    let libdir = libdir.as_path();
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let includedir = manifest.join("include");
    let version = env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // What a static link needs besides libribbon.a: the system libraries the
    // Rust standard library uses (rustc --print native-static-libs).
    let private = match os.as_str() {
        "macos" | "ios" => "-lSystem -lc -lm",
        "windows" => "",
        _ => "-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc",
    };
    let rpath = match os.as_str() {
        "windows" => String::new(),
        _ => " -Wl,-rpath,${libdir}".to_owned(),
    };
    let head = |libdir: &Path| {
        format!(
            "# Written by ribbon-capi's build script (capi/build.rs) for the libraries beside it.\n\
             libdir={}\n\
             includedir={}\n\n",
            libdir.display(),
            includedir.display()
        )
    };
    let shared = format!(
        "{}Name: ribbon\n\
         Description: RocksDB's filters, SST files and database directories (libribbon, ribbon.h)\n\
         Version: {version}\n\
         Cflags: -I${{includedir}}\n\
         Libs: -L${{libdir}}{rpath} -lribbon\n\
         Libs.private: {private}\n",
        head(libdir)
    );
    let static_ = format!(
        "{}Name: ribbon-static\n\
         Description: libribbon linked statically (libribbon.a): nothing to find at run time\n\
         Version: {version}\n\
         Cflags: -I${{includedir}}\n\
         Libs: ${{libdir}}/libribbon.a {private}\n",
        head(libdir)
    );
    for (name, text) in [("ribbon.pc", shared), ("ribbon-static.pc", static_)] {
        let path = libdir.join(name);
        // Unchanged files are left alone (their times too).
        if fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        if let Err(e) = fs::write(&path, text) {
            println!("cargo:warning={}: {e}: not written", path.display());
        }
    }
}
