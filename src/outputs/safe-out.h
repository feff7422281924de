/*
 * safe-out.h - nothing a user made is destroyed by an output of ours.
 *
 * Every command that writes a file over an existing one asks here first:
 * a file is replaced only when it is one of ours (a gpureduce trace, or a
 * file `shrink` wrote and the user has not edited since) or the user said
 * --force.  `capture` writes into a private folder beside its -o file and
 * moves the results into place only once something was captured
 * (safe_stage_*), so a program that never starts, makes no CUDA calls or
 * dies early leaves the old file as it was.
 */
#ifndef GPUREDUCE_SAFE_OUT_H
#define GPUREDUCE_SAFE_OUT_H

#include <stddef.h>

struct strbuf;
struct trace;

/* Does path start with the trace magic?  1 or 0 (0 for a missing file). */
int safe_is_trace(const char *path);

/* Is path the same file as other (same device and inode, through links)? */
int safe_same_file(const char *path, const char *other);

/* May `what` be written to path?  0 when path does not exist, or it is a
 * trace (and trace_ok), or force; else -1 with one line in err saying what
 * the file is and that --force would replace it; -2 when path is a folder. */
int safe_may_replace(const char *path, const char *what, int trace_ok, int force, struct strbuf *err);

/* A fresh private folder beside final ("DIR/.gpureduce-capture-XXXXXX");
 * *staged is "FOLDER/BASENAME" for the writer.  0, or -1 with err. */
int safe_stage_open(const char *final, struct strbuf *folder, struct strbuf *staged, struct strbuf *err);

/* Move every file of folder into final's folder: "FOLDER/NAME" becomes
 * "DIR/NAME" (the main trace and its PATH.PID siblings alike), then remove
 * the folder.  Returns the number of files moved, or -1 with err (the
 * files not moved stay in folder, which is then named in err). */
int safe_stage_publish(const char *folder, const char *final, struct strbuf *err);

/* trace_open for a trace the user names (show, replay, shrink, hunt,
 * diagnose): when path does not exist and a capture that never finished
 * (its gpureduce process killed) left a trace of that name in a staging
 * folder beside it, err also names that one ("; ...").  Nothing is moved. */
int safe_trace_open(struct trace *t, const char *path, unsigned flags, struct strbuf *err);

/* Remove folder and what is in it (nothing was captured). */
void safe_stage_drop(const char *folder);

/* path with the staging folder's prefix replaced by final's folder (for
 * the names the capture library reported); into out. */
void safe_stage_rename(const char *path, const char *folder, const char *final, struct strbuf *out);

#endif
