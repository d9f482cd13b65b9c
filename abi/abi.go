package abi

// Version is the ABI version this package speaks. A guest reports its version
// through ExportVersion; the host refuses a module whose version differs.
const Version = 1

// The exports a guest module must provide. All take and return i32/i64 values
// only; bytes cross through the guest's linear memory (see ABI.md).
const (
	// ExportInitialize is the WASI reactor initializer (Go's runtime start-up
	// and package init functions). The host calls it once per instance.
	ExportInitialize = "_initialize"
	// ExportVersion takes nothing and returns the guest's ABI version (i32).
	ExportVersion = "durabox_abi_version"
	// ExportAlloc takes a size (i32) and returns the address (i32) of a guest
	// buffer of that many bytes, valid until the next call into the guest.
	ExportAlloc = "durabox_alloc"
	// ExportDescribe takes nothing and returns a packed region (i64) holding
	// an encoded Manifest.
	ExportDescribe = "durabox_describe"
	// ExportActivate takes the region (address i32, length i32) of an encoded
	// Activation and returns a packed region (i64) holding an encoded
	// ActivationResult.
	ExportActivate = "durabox_activate"
	// ExportActivity takes the region of an encoded ActivityRequest and
	// returns a packed region holding an encoded ActivityResult.
	ExportActivity = "durabox_activity"
	// ExportQuery takes the region of an encoded QueryRequest and returns a
	// packed region holding an encoded QueryResult. It is optional: a
	// module built before queries existed lacks it, and its instances
	// answer no query.
	ExportQuery = "durabox_query"
)

// RequiredExports lists every export a guest must provide, in the order the
// host checks them at deploy. ExportQuery is not among them: a guest may
// lack it.
var RequiredExports = []string{
	ExportInitialize, ExportVersion, ExportAlloc, ExportDescribe, ExportActivate, ExportActivity,
}

// PackRegion packs a guest memory region into the i64 that ExportDescribe,
// ExportActivate and ExportActivity return: address in the high 32 bits,
// length in the low 32 bits.
func PackRegion(addr, length uint32) uint64 { return uint64(addr)<<32 | uint64(length) }

// UnpackRegion is the inverse of PackRegion.
func UnpackRegion(packed uint64) (addr, length uint32) {
	return uint32(packed >> 32), uint32(packed)
}
