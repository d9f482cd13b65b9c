// The host↔guest contract: the standard library only. A module of its own
// so that a guest's build needs none of the host's modules (RATIONALE.md).
module github.com/durabox/durabox/abi

go 1.25.0
