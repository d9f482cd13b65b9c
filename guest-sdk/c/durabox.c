/*
 * durabox.c: the Durabox guest SDK for C, in one translation unit. Compile
 * this file with the module's own (README.md has the command); it includes
 * every file of src/, so that everything but the public dbx_ functions and
 * the ABI's exports is static.
 */
#include "src/internal.h"

#include "src/memory.c"

#include "src/wire.c"

#include "src/json.c"

#include "src/exports.c"

#include "src/orchestration.c"
