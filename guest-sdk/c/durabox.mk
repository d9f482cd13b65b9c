# durabox.mk: how a Durabox module is built from C, for a Makefile to
# include (this repository's does; so may an author's). It needs clang,
# lld and wasi-libc: on Debian, apt-get install clang lld wasi-libc
# libclang-rt-14-dev-wasm32 (the last holds the compiler's wasm32 builtins,
# which clang links into every module).
#
#   include path/to/guest-sdk/c/durabox.mk
#   orders.wasm: orders.c $(DURABOX_C_DEPS)
#   	$(DURABOX_CC) $(DURABOX_CFLAGS) -o $@ $(DURABOX_C_SDK) orders.c
#
# A WASI reactor (-mexec-model=reactor): it exports _initialize, which runs
# dbx_main, instead of _start. The SDK exports the ABI's functions itself
# and wasm-ld exports the memory, as abi/ABI.md requires.

DURABOX_C_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
DURABOX_CC ?= clang
DURABOX_CFLAGS ?= --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 -Wall -Wextra -Werror \
	-I$(DURABOX_C_DIR) -Wl,--strip-debug
DURABOX_C_SDK := $(DURABOX_C_DIR)/durabox.c
DURABOX_C_DEPS := $(wildcard $(DURABOX_C_DIR)/*.c $(DURABOX_C_DIR)/*.h $(DURABOX_C_DIR)/src/*)

# durabox_c_missing is empty when the toolchain is here, else what is
# missing, for a rule to print before it skips.
durabox_c_missing = $(shell $(DURABOX_CC) --version >/dev/null 2>&1 || echo "$(DURABOX_CC)"; \
	test -f /usr/include/wasm32-wasi/stdio.h || echo "wasi-libc"; \
	echo 'int main(void){return 0;}' | $(DURABOX_CC) --target=wasm32-wasi --sysroot=/usr -x c -o /dev/null - >/dev/null 2>&1 || echo "a clang that links for wasm32-wasi (lld, libclang-rt-14-dev-wasm32)")

# durabox-module builds the module OUT from the sources SRC with the flags
# EXTRA (such as -DVERSION=2) added: what this repository's tests run.
durabox-module:
	$(DURABOX_CC) $(DURABOX_CFLAGS) $(EXTRA) -o $(OUT) $(DURABOX_C_SDK) $(SRC)

# durabox-c-missing prints what of the toolchain is missing, nothing when
# nothing is.
durabox-c-missing:
	@echo '$(strip $(durabox_c_missing))'



# durabox-fuzz builds the SDK's fuzz target (fuzz/fuzz.c) natively, with
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer, as OUT.
durabox-fuzz:
	$(DURABOX_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Wno-unknown-attributes -Wno-ignored-attributes -o $(OUT) $(DURABOX_C_DIR)/fuzz/fuzz.c
.PHONY: durabox-module durabox-c-missing durabox-fuzz
