/*
 * shrink-out.h - where `shrink` puts its three files (repro.cu, repro.bin,
 * repro.yaml), so that nothing the user has is made worse:
 *
 *   - the output folder is locked (flock) for the whole run: a second
 *     shrink into it is refused at once instead of mixing its files in;
 *   - the files are written into the work folder first and moved into
 *     place at the end, all three together;
 *   - a confirmed repro there is never replaced by a worse result
 *     (interrupted, or a repro.cu that does not reproduce), and files the
 *     user edited or that shrink did not write are never replaced: the new
 *     result goes beside them (repro-2.cu, ...) and shrink says so;
 *   - work folders of a shrink that died (SIGKILL, a crash) carry a marker
 *     and are removed by the next shrink into the folder.
 */
#ifndef GPUREDUCE_SHRINK_OUT_H
#define GPUREDUCE_SHRINK_OUT_H

#include <stddef.h>

struct strbuf;

/* The outcomes, best first, as repro.yaml's `outcome:` names them. */
#define SHRINK_CONFIRMED "confirmed"
#define SHRINK_UNCONFIRMED "unconfirmed"
#define SHRINK_NOT_REPRODUCED "not-reproduced"

/* Lock cu's folder for this run; *fd holds the lock (close it to
 * release).  0, or -1 with err when another shrink holds it. */
int shrink_out_lock(const char *cu, int *fd, struct strbuf *err);

/* Remove the work folders ("BIN.work-*") of earlier shrinks into this
 * folder that died without cleaning up (they hold the running marker). */
void shrink_out_sweep(const char *bin);

/* Mark workdir as in use (removed by shrink_out_done). */
void shrink_out_mark(const char *workdir);
void shrink_out_done(const char *workdir);

/* Where the result of this outcome goes: cu itself when it is free, ours
 * and no better than the result; else the first free "STEM-N.cu" beside
 * it.  dest gets the .cu path; why, when it is not cu, says why. */
void shrink_out_pick(const char *cu, const char *outcome, int force, struct strbuf *dest,
		     struct strbuf *why);

/* The hash repro.yaml records for repro.cu's bytes (text, 16 hex digits). */
void shrink_out_hash(const void *data, size_t len, char out[17]);

/* Move the staged files (src_*) to the destination (dst_*).  0, or -1
 * with err (what was not moved stays in the work folder, named in err). */
int shrink_out_move(const char *const src[3], const char *const dst[3], struct strbuf *err);

#endif
