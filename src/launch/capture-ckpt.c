/*
 * capture-ckpt.c - the checkpoint side of `gpureduce capture`: parsing
 * --checkpoint-every / --max-trace-bytes into the environment the capture
 * library reads (capture/checkpoint.c), and the one-line progress status
 * shown on a terminal while the program runs.
 *
 * The status line is drawn by this (parent) process, never by the library
 * inside the program: at most once a second, on stderr, only when stderr is
 * a terminal, from the trace file's size and the small progress file the
 * library rewrites (GPUREDUCE_PROGRESS: "launches checkpoints last_launch
 * last_realtime_ns").  It is drawn as "\r\033[K<status>\r": the cursor
 * stays at column 0, so the program's own output writes over it (a line of
 * the program shorter than the status leaves the status's tail on screen
 * until the next redraw; nothing is added to the program's output), and it
 * is erased before capture prints its summary.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/child.h"
#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "capture-ckpt.h"

static int suffix_is(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcasecmp(s, *list))
			return 1;
	return 0;
}

/* *out = v * unit, or -1 when that does not fit in 64 bits. */
static int scaled(unsigned long long v, unsigned long long unit, uint64_t *out)
{
	if (v > UINT64_MAX / unit)
		return -1;
	*out = v * unit;
	return 0;
}

/* One term: "N", "Nlaunches", "Ns"/"Nm"/"Nh", "N[K|M|G][i][B]". */
static int parse_term(const char *t, size_t len, struct ckpt_opts *o, struct strbuf *err)
{
	static const char *const launches[] = { "", "l", "launch", "launches", NULL };
	static const char *const secs[] = { "s", "sec", "secs", "second", "seconds", NULL };
	static const char *const mins[] = { "m", "min", "mins", "minute", "minutes", NULL };
	static const char *const hours[] = { "h", "hour", "hours", NULL };
	static const char *const bytes[] = { "b", "byte", "bytes", NULL };
	static const char *const kib[] = { "k", "kb", "kib", NULL };
	static const char *const mib[] = { "mb", "mib", NULL };
	static const char *const gib[] = { "g", "gb", "gib", NULL };
	static const char *const tib[] = { "t", "tb", "tib", NULL };
	char buf[64], *end;
	unsigned long long v;
	int r = -1;   /* no suffix matched */

	if (len == 0 || len >= sizeof(buf))
		goto bad;
	memcpy(buf, t, len);
	buf[len] = 0;
	if (!isdigit((unsigned char)buf[0]))
		goto bad;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || !v)
		goto bad;
	if (!strcmp(end, "%")) {
		if (v > 100000)
			goto bad;
		o->percent = v;
		return 0;
	}
	if (!strcmp(end, "M"))            /* upper-case M: MiB; lower-case m: minutes */
		r = scaled(v, 1ull << 20, &o->bytes);
	else if (suffix_is(end, launches))
		r = scaled(v, 1, &o->launches);
	else if (suffix_is(end, secs))
		r = scaled(v, 1, &o->seconds);
	else if (suffix_is(end, mins))
		r = scaled(v, 60, &o->seconds);
	else if (suffix_is(end, hours))
		r = scaled(v, 3600, &o->seconds);
	else if (suffix_is(end, bytes))
		r = scaled(v, 1, &o->bytes);
	else if (suffix_is(end, kib))
		r = scaled(v, 1ull << 10, &o->bytes);
	else if (suffix_is(end, mib))
		r = scaled(v, 1ull << 20, &o->bytes);
	else if (suffix_is(end, gib))
		r = scaled(v, 1ull << 30, &o->bytes);
	else if (suffix_is(end, tib))
		r = scaled(v, 1ull << 40, &o->bytes);
	if (r < 0)
		goto bad;
	return 0;
bad:
	sb_addf(err, "--checkpoint-every: cannot read '%.*s': give a positive number of launches "
		"(10000 or 10000launches), bytes of trace (512M, 2G), a percentage of the last "
		"checkpoint (25%%) or seconds (90s, 10m, 1h), comma-separated", (int)len, t);
	return -1;
}

int ckpt_parse_every(const char *spec, struct ckpt_opts *o, struct strbuf *err)
{
	const char *p = spec;
	o->launches = o->bytes = o->seconds = o->percent = 0;
	if (!strcmp(spec, "auto"))
		return 0;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (parse_term(p, n, o, err) < 0)
			return -1;
		if (!c)
			return 0;
		p = c + 1;
	}
}

int ckpt_parse_bytes(const char *opt, const char *s, uint64_t *out, struct strbuf *err)
{
	struct ckpt_opts o = { 0, 0, 0, 0, 0, 0 };
	struct strbuf e = STRBUF_INIT;
	size_t n = strlen(s);
	int ret = -1;

	if (parse_term(s, n, &o, &e) < 0 || (!o.bytes && !o.launches)) {
		sb_addf(err, "%s: cannot read '%s': give a size in bytes (e.g. 4G, 512M)", opt, s);
		goto out;
	}
	if (!o.bytes)
		o.bytes = o.launches;   /* a plain number is bytes here */
	if (o.bytes < 4096) {
		sb_addf(err, "%s: %s is below the smallest useful trace (4K): give a size like 512M or 4G", opt, s);
		goto out;
	}
	*out = o.bytes;
	ret = 0;
out:
	sb_release(&e);
	return ret;
}

void ckpt_env(const struct ckpt_opts *o, struct strbuf env[6])
{
	sb_addf(&env[5], "GPUREDUCE_CKPT_PERCENT=%llu", (unsigned long long)o->percent);
	sb_addf(&env[0], "GPUREDUCE_CKPT=%d", o->off ? 0 : 1);
	sb_addf(&env[1], "GPUREDUCE_CKPT_LAUNCHES=%llu", (unsigned long long)o->launches);
	sb_addf(&env[2], "GPUREDUCE_CKPT_BYTES=%llu", (unsigned long long)o->bytes);
	sb_addf(&env[3], "GPUREDUCE_CKPT_SECONDS=%llu", (unsigned long long)o->seconds);
	sb_addf(&env[4], "GPUREDUCE_MAX_TRACE_BYTES=%llu", (unsigned long long)o->max_bytes);
}

/* ---- progress ---- */

static void draw(const char *trace, const char *progress, double t0)
{
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT, line = STRBUF_INIT;
	unsigned long long launches = 0, count = 0, last = 0, last_ns = 0;
	struct stat st;
	char b1[32];
	struct timespec ts;

	if (read_file(progress, &sb, &err) == 0)
		sscanf(sb.buf, "%llu %llu %llu %llu", &launches, &count, &last, &last_ns);
	sb_addf(&line, "gpureduce: %.0f s, %llu launch%s, trace %s", now_sec() - t0, launches,
		launches == 1 ? "" : "es", stat(trace, &st) == 0 ? fmt_bytes((uint64_t)st.st_size, b1) : "-");
	if (count) {
		clock_gettime(CLOCK_REALTIME, &ts);
		double ago = ((double)ts.tv_sec * 1e9 + (double)ts.tv_nsec - (double)last_ns) / 1e9;
		sb_addf(&line, ", checkpoint %llu at launch #%llu (%.0f s ago)", count, last,
			ago < 0 ? 0 : ago);
	} else {
		sb_adds(&line, ", no checkpoint yet");
	}
	fprintf(stderr, "\r\033[K%s\r", line.buf);
	fflush(stderr);
	sb_release(&sb);
	sb_release(&err);
	sb_release(&line);
}

int ckpt_wait(struct child *c, const char *trace, const char *progress)
{
	int tty = isatty(2) && !getenv("GPUREDUCE_NO_PROGRESS");
	double t0 = now_sec(), last = t0;
	int status = -1, r, drawn = 0;

	if (!tty)
		return child_wait(c);
	while ((r = child_poll(c, &status)) == 0) {
		usleep(50000);
		if (now_sec() - last >= 1.0) {
			last = now_sec();
			draw(trace, progress, t0);
			drawn = 1;
		}
	}
	if (drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	return r > 0 ? status : -1;
}

int ckpt_clean_next(const char *trace)
{
	struct strbuf next = STRBUF_INIT;
	struct stat st;
	int ret = 0;

	sb_addf(&next, "%s.next", trace);
	if (lstat(next.buf, &st) == 0 && S_ISREG(st.st_mode) && unlink(next.buf) == 0)
		ret = 1;
	sb_release(&next);
	return ret;
}
