//go:build ribbon_pkgconfig && !ribbon_external

package ribbon

// -tags ribbon_pkgconfig: the ribbon-static.pc that ribbon-capi's build
// script writes beside the libraries, found through PKG_CONFIG_PATH (for
// example PKG_CONFIG_PATH=$CARGO_TARGET_DIR/release).

/*
#cgo pkg-config: ribbon-static
*/
import "C"
