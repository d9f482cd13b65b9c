package host

// TestCacheDir is where every host a test starts keeps its compiled
// modules, so that each module is compiled once per test run, as a
// restarted host does with its cache. TestMain sets it.
var TestCacheDir string
