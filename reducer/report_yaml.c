/*
 * report_yaml.c - write repro.yaml (see report_yaml.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "../common/strbuf.h"
#include "../replay/place.h"
#include "../trace/trace.h"
#include "report_yaml.h"
#include "shrink.h"

struct ym {
	yaml_emitter_t e;
	int bad;
};

static void ev(struct ym *y, yaml_event_t *e)
{
	if (!y->bad && !yaml_emitter_emit(&y->e, e))
		y->bad = 1;
}

static void scalar(struct ym *y, const char *s)
{
	yaml_event_t e;
	yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
				     YAML_ANY_SCALAR_STYLE);
	ev(y, &e);
}

static void kv(struct ym *y, const char *k, const char *v)
{
	scalar(y, k);
	scalar(y, v ? v : "");
}

static void kvf(struct ym *y, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kvf(struct ym *y, const char *k, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	kv(y, k, buf);
}

static void map_start(struct ym *y)
{
	yaml_event_t e;
	yaml_mapping_start_event_initialize(&e, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
	ev(y, &e);
}

static void map_end(struct ym *y)
{
	yaml_event_t e;
	yaml_mapping_end_event_initialize(&e);
	ev(y, &e);
}

static void seq_start(struct ym *y)
{
	yaml_event_t e;
	yaml_sequence_start_event_initialize(&e, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
	ev(y, &e);
}

static void seq_end(struct ym *y)
{
	yaml_event_t e;
	yaml_sequence_end_event_initialize(&e);
	ev(y, &e);
}

int report_yaml_write(const char *path, const struct shrink_report *rep, const struct trace *orig,
		      const struct report_files *f, struct strbuf *err)
{
	FILE *fp = fopen(path, "w");
	struct ym y;
	yaml_event_t e;

	if (!fp) {
		sb_addf(err, "%s: cannot create", path);
		return -1;
	}
	memset(&y, 0, sizeof(y));
	yaml_emitter_initialize(&y.e);
	yaml_emitter_set_output_file(&y.e, fp);
	yaml_emitter_set_unicode(&y.e, 1);
	yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
	ev(&y, &e);
	yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 1);
	ev(&y, &e);
	map_start(&y);
	kv(&y, "tool", "gpureduce " GPUREDUCE_VERSION);
	kv(&y, "command", f->command);
	scalar(&y, "signature");
	map_start(&y);
	kv(&y, "error", rep->error);
	kvf(&y, "code", "%d", rep->code);
	kv(&y, "kernel", rep->kernel);
	kv(&y, "guard", place_guard_name(rep->guard));
	if (rep->site[0]) {
		kv(&y, "site", rep->site);
		kv(&y, "site_confirmed", rep->site_confirmed ? "true" : "false");
	}
	map_end(&y);
	scalar(&y, "reproduction");
	map_start(&y);
	kvf(&y, "original", "%d/%d", rep->orig_faults, rep->orig_runs);
	kvf(&y, "original_rate", "%.2f", rep->orig_runs ? (double)rep->orig_faults / rep->orig_runs : 0.0);
	kvf(&y, "reduced", "%d/%d", rep->final_faults, rep->final_runs);
	kvf(&y, "reduced_rate", "%.2f", rep->final_runs ? (double)rep->final_faults / rep->final_runs : 0.0);
	kv(&y, "flaky", rep->flaky ? "true" : "false");
	map_end(&y);
	scalar(&y, "original");
	map_start(&y);
	kv(&y, "trace", f->trace);
	kvf(&y, "launches", "%zu", rep->orig_launches);
	kvf(&y, "records", "%zu", rep->orig_records);
	kvf(&y, "h2d_bytes", "%llu", (unsigned long long)rep->orig_bytes);
	kvf(&y, "file_bytes", "%zu", orig ? orig->size : (size_t)0);
	map_end(&y);
	scalar(&y, "reduced");
	map_start(&y);
	kvf(&y, "launches", "%zu", rep->final_launches);
	kvf(&y, "buffers", "%zu", rep->final_buffers);
	kvf(&y, "buffer_bytes", "%llu", (unsigned long long)rep->final_bytes);
	kv(&y, "repro_cu", f->repro_cu);
	kvf(&y, "repro_cu_bytes", "%lu", f->repro_cu_bytes);
	kv(&y, "repro_bin", f->repro_bin);
	map_end(&y);
	kvf(&y, "candidates", "%ld", rep->candidates);
	kvf(&y, "cache_hits", "%ld", rep->cache_hits);
	kvf(&y, "slipped", "%ld", rep->slipped);
	kvf(&y, "workers_spawned", "%ld", rep->workers_spawned);
	kvf(&y, "seconds", "%.2f", rep->seconds);
	if (rep->one_launch_seconds > 0)
		kvf(&y, "one_launch_seconds", "%.2f", rep->one_launch_seconds);
	scalar(&y, "phases");
	seq_start(&y);
	for (int i = 0; i < rep->nphases; i++) {
		const struct shrink_phase *p = &rep->phase[i];
		map_start(&y);
		kv(&y, "name", p->name);
		kvf(&y, "launches", "%zu -> %zu", p->launches_before, p->launches_after);
		kvf(&y, "buffers", "%zu -> %zu", p->buffers_before, p->buffers_after);
		kvf(&y, "bytes", "%llu -> %llu", (unsigned long long)p->bytes_before,
		    (unsigned long long)p->bytes_after);
		kvf(&y, "candidates", "%ld", p->candidates);
		kvf(&y, "seconds", "%.2f", p->seconds);
		kv(&y, "outcome", p->outcome ? p->outcome : "");
		map_end(&y);
	}
	seq_end(&y);
	if (rep->note[0])
		kv(&y, "note", rep->note);
	if (f->diagnosis)
		kv(&y, "diagnosis", f->diagnosis);
	map_end(&y);
	yaml_document_end_event_initialize(&e, 1);
	ev(&y, &e);
	yaml_stream_end_event_initialize(&e);
	ev(&y, &e);
	yaml_emitter_delete(&y.e);
	if (fclose(fp) != 0 || y.bad) {
		sb_addf(err, "%s: could not write the YAML report", path);
		return -1;
	}
	return 0;
}
