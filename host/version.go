package host

import (
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
)

// runtimeModules are the Go modules of the WebAssembly runtimes, by the
// name Options.Runtime gives each; wasmtime-go's path ends in its major
// version.
var runtimeModules = map[string]string{RuntimeWazero: "github.com/tetratelabs/wazero", RuntimeWasmtime: "github.com/bytecodealliance/wasmtime-go/"}

// BuildVersion returns what the running binary was built from, as the
// Go toolchain recorded it (runtime/debug.ReadBuildInfo): the durabox
// module's version and commit, Go's, the runtimes', and the ABI's. The
// caller adds the stores' schema versions (Version.Schemas), which this
// package does not know. A test binary records no dependencies: its
// Runtimes are empty.
func BuildVersion() api.Version {
	v := api.Version{Durabox: "unknown", Go: runtime.Version(), ABI: abi.Version, Runtimes: map[string]string{}}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Durabox = info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, dep := range info.Deps {
		version := dep.Version
		if dep.Replace != nil {
			version = dep.Replace.Version
		}
		for name, path := range runtimeModules {
			if dep.Path == path || strings.HasSuffix(path, "/") && strings.HasPrefix(dep.Path, path) {
				v.Runtimes[name] = version
			}
		}
	}
	return v
}
