#!/usr/bin/env bash
# Builds Durabox modules from Rust with rustc alone, no cargo and no
# network: the durabox crate beside this script, then each module's crate
# root as a cdylib for WASI preview 1 linked against it.
#
#   guest-sdk/rust/build.sh SRC.rs OUT.wasm [SRC.rs OUT.wasm ...]
#
# The rustc is $DURABOX_RUSTC, else /usr/bin/rustc (Debian's, which CI
# installs with its wasm32-wasi standard library: apt-get install rustc
# libstd-rust-dev-wasm32), else the first on PATH. It needs the standard
# library for wasm32-wasip1 (Rust 1.78 on) or wasm32-wasi (before 1.84);
# without either, this exits 3 saying so, which make build and the tests
# take as "no Rust toolchain".
set -euo pipefail
if [ $# -eq 0 ] || [ $(($# % 2)) -ne 0 ]; then
	echo "usage: $0 SRC.rs OUT.wasm [SRC.rs OUT.wasm ...]" >&2
	exit 2
fi
sdk=$(cd "$(dirname "$0")" && pwd)
rustc=${DURABOX_RUSTC:-/usr/bin/rustc}
if [ ! -x "$rustc" ]; then
	rustc=$(command -v rustc || true)
fi
if [ -z "$rustc" ]; then
	echo "$0: no rustc (/usr/bin/rustc, \$DURABOX_RUSTC or on PATH): apt-get install rustc libstd-rust-dev-wasm32" >&2
	exit 3
fi
sysroot=$("$rustc" --print sysroot)
target=
for t in wasm32-wasip1 wasm32-wasi; do
	if ls "$sysroot/lib/rustlib/$t/lib"/libstd-*.rlib >/dev/null 2>&1; then
		target=$t
		break
	fi
done
if [ -z "$target" ]; then
	echo "$0: $rustc has no standard library for wasm32-wasip1 or wasm32-wasi: apt-get install libstd-rust-dev-wasm32 (Debian's rustc), or rustup target add wasm32-wasip1" >&2
	exit 3
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The checkout's path is left out of the module (as go build -trimpath
# does), so that the same sources build the same bytes anywhere.
flags=(--edition 2021 --target "$target" -O)
"$rustc" "${flags[@]}" --remap-path-prefix "$sdk=durabox" --crate-type rlib --crate-name durabox \
	"$sdk/src/lib.rs" -o "$tmp/libdurabox.rlib"
# A reactor's _initialize comes from wasi-libc's crt1-reactor.o, which
# rustc links into a cdylib by itself only from rust-lang/rust#161421 on
# (August 2026): an older one is given it, and a newer one, which then finds
# it twice, is not.
reactor=$sysroot/lib/rustlib/$target/lib/self-contained/crt1-reactor.o
while [ $# -gt 0 ]; do
	src=$1 out=$2
	shift 2
	name=$(basename "$out" .wasm | tr -c 'a-zA-Z0-9_\n' _)
	dir=$(cd "$(dirname "$src")" && pwd)
	module=("$rustc" "${flags[@]}" --remap-path-prefix "$dir=$name" --crate-type cdylib --crate-name "$name" -C strip=symbols
		--extern durabox="$tmp/libdurabox.rlib" "$src" -o "$out")
	if ! "${module[@]}" -C link-arg="$reactor" 2>"$tmp/err"; then
		if ! grep -q "duplicate symbol: _initialize" "$tmp/err"; then
			cat "$tmp/err" >&2
			exit 1
		fi
		"${module[@]}"
	else
		cat "$tmp/err" >&2
	fi
done
