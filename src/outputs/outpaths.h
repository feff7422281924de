/*
 * outpaths.h - checks on the files a command is about to write, made before
 * any work starts: none of them may be the input (a capture can take hours
 * to make), and each one's folder must exist and be writable.  Used by
 * `shrink` (repro.cu, repro.bin, repro.yaml, --log).
 */
#ifndef GPUREDUCE_OUTPATHS_H
#define GPUREDUCE_OUTPATHS_H

struct strbuf;

/* Is path the same file as input (same device and inode)?  A path that
 * does not exist is not.  1 or 0. */
int outpath_is(const char *path, const char *input);

/* Check one output: `what` names it in messages ("the repro", "--log").
 * Returns 0; 2 (usage: it is the input, or a folder) or 3 (its folder is
 * missing or not writable, or the file is not writable) with one line in
 * err. */
int outpath_check(const char *path, const char *what, const char *input, struct strbuf *err);

/* mkdir -p of path's folder.  0, or -1 with err. */
int outpath_make_dir(const char *path, struct strbuf *err);

#endif
