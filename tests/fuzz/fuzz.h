/*
 * fuzz.h — what zcor's fuzz targets share (tests/fuzz/fuzz_*.c): the
 * libFuzzer entry points, temporary directories on tmpfs, and setup calls
 * that must succeed.
 *
 * Each target is built twice: with libFuzzer for `make fuzz` (ZCOR_FUZZ,
 * clang), and with fuzz_main.c as a plain program that feeds every file of
 * its seed corpus once through the same LLVMFuzzerTestOneInput — a unit
 * test (unit/fuzz_<target>_corpus), so the targets keep compiling and the
 * corpus keeps passing in CI. A target reports a broken invariant with
 * fz_bug(), which aborts: libFuzzer saves the input, the unit test fails.
 */
#ifndef ZC_FUZZ_H
#define ZC_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "zcor.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A new directory $base/zcor-fuzz-<what>-XXXXXX, base /dev/shm when it is
 * writable (every tool call is a transaction), else $TMPDIR or /tmp.
 * Caller frees. Aborts when it cannot. */
char *fz_mkdtemp(const char *what);
/* Removes path and everything under it (symbolic links are not followed). */
void fz_rmtree(const char *path);
/* Opens the memory directory dir; aborts when it cannot. */
zcor *fz_open(const char *dir);
/* Calls a tool on the host plane (actor cli); aborts when it fails. */
void fz_must_call(zcor *z, const char *tool, const char *args);
/* Prints "fuzz_<target>: " + the message to stderr and aborts. */
void fz_bug(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
