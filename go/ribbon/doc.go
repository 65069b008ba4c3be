// Package ribbon is the C library of rocks-ribbon (libribbon, capi/) from
// Go: RocksDB's filters built and read byte for byte, and the filters of
// SST files answered as RocksDB's Get asks them.
//
// It links the library statically. Build it first, at the repository root:
//
//	cargo build --release -p ribbon-capi      # target/release/libribbon.a and ribbon-static.pc
//
// and use this module through a replace directive in your go.mod:
//
//	require rocks-ribbon/go v0.0.0
//	replace rocks-ribbon/go => /path/to/rocks-ribbon/go
//
//	import "rocks-ribbon/go/ribbon"
//
// Where the library is: by default target/release/libribbon.a of the
// checkout this package is in (the header, capi/include/ribbon.h, always
// comes from the checkout). Elsewhere (CARGO_TARGET_DIR set, a debug build,
// an installed copy), build with one of
//
//	PKG_CONFIG_PATH=$CARGO_TARGET_DIR/release go build -tags ribbon_pkgconfig   # the ribbon-static.pc cargo wrote there
//	CGO_LDFLAGS="/path/to/libribbon.a -lm -ldl -lpthread" go build -tags ribbon_external
//
// Go's build cache does not notice a rebuilt libribbon.a: after
// rebuilding the library, build with -a (or go clean -cache).
//
// Errors are *Error values: the C function's code and ribbon_last_error()'s
// line, read on the same OS thread as the call. Keys are copied into C
// memory for each call (cgo's pointer rules); every handle is released by
// its Close, which may be called more than once. A handle may be used by
// one goroutine at a time for Close, by many for queries.
package ribbon
