//go:build !ribbon_pkgconfig && !ribbon_external

package ribbon

// The default: the static library of `cargo build --release -p ribbon-capi`
// run at the repository root (target/release/libribbon.a), linked into the
// Go binary, so nothing is looked up at run time. Build with
// -tags ribbon_pkgconfig or -tags ribbon_external to link another one
// (see doc.go).

/*
#cgo LDFLAGS: ${SRCDIR}/../../target/release/libribbon.a -lm -ldl -lpthread
*/
import "C"
