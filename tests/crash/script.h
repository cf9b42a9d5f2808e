/*
 * script.h — the streams of writes the power-loss test cuts the power
 * under. Each is a fixed list of steps through the public API (tool calls,
 * a logged batch with an image, config changes), deterministic given the
 * same starting directory: contents come from the step number and the
 * clock is set per step, so ids, times, backup names and file contents are
 * the same in every run. The driver runs a stream once in its own process
 * to learn the state after every step; the writer (writer.c) runs the same
 * stream under the shim and acknowledges each step that returned OK.
 */
#ifndef PL_SCRIPT_H
#define PL_SCRIPT_H

#include <stddef.h>

#include "zcor.h"

enum pl_script {
	PL_SCRIPT_BASE,  /* builds the directory the main stream starts from */
	PL_SCRIPT_MAIN,  /* a working memory: every kind of write, mirror on */
	PL_SCRIPT_FRESH, /* the first writes in an empty directory: media/, stickers/, backups/, mirror/ appear */
	PL_SCRIPT_REOPEN /* only a read: what opening and closing a recovered directory writes */
};

/* What the steps of one run pass on to later ones (ids zcor gave). */
struct pl_run {
	int script;
	int step;   /* the state number the clock shows: 1 + the step index */
	char ids[16][16];
	char media[4][80]; /* "media/<sha256>.png" of the images logged */
	char backup[2][128];
};

/* What the writer tells the driver on file descriptor 3, one record per
 * write(2) (smaller than PIPE_BUF, so never interleaved or torn). */
#define PL_ACK_FD 3
struct pl_ack {
	int kind; /* 'A': acknowledged (the open, then each step); 'E': a step failed; 'C': closed */
	int n;    /* acknowledgments so far, this one included */
	int rc;
	char msg[1000];
};

/* The number of steps of a stream. */
int pl_script_steps(int script);

/* Starts a run on z (sets its clock). */
void pl_run_init(struct pl_run *r, zcor *z, int script);

/* Runs step i (0-based); ZCOR_OK, or the code with what failed in msg. */
int pl_run_step(struct pl_run *r, zcor *z, int i, char *msg, size_t cap);

#endif
