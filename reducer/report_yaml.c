/*
 * report_yaml.c - write repro.yaml (see report_yaml.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/yamlout.h"
#include "../addr/place.h"
#include "../trace/trace.h"
#include "report_yaml.h"
#include "shrink.h"

int report_yaml_write(const char *path, const struct shrink_report *rep, const struct trace *orig,
		      const struct report_files *f, struct strbuf *err)
{
	FILE *fp = fopen(path, "w");
	struct yout y;
	struct strbuf e = STRBUF_INIT;
	int ret = -1;

	if (!fp) {
		sb_addf(err, "%s: cannot create", path);
		return -1;
	}
	if (yo_open(&y, fp, &e) < 0) {
		yo_close(&y, &e);
		goto out;
	}
	yo_map_start(&y, 0);
	yo_kv_str(&y, "tool", "gpureduce " GPUREDUCE_VERSION);
	yo_kv_str(&y, "command", f->command);
	if (f->outcome)
		yo_kv_str(&y, "outcome", f->outcome);
	if (f->repro_cu_hash)
		yo_kv_str(&y, "repro_cu_hash", f->repro_cu_hash);
	yo_key(&y, "signature");
	yo_map_start(&y, 0);
	yo_kv_str(&y, "error", rep->error);
	yo_kv_i64(&y, "code", rep->code);
	yo_kv_str(&y, "kernel", rep->kernel);
	yo_kv_str(&y, "guard", place_guard_name(rep->guard));
	if (rep->site[0]) {
		yo_kv_str(&y, "site", rep->site);
		yo_kv_bool(&y, "site_confirmed", rep->site_confirmed);
	}
	if (rep->backed_off_to[0])
		yo_kv_str(&y, "backed_off_to", rep->backed_off_to);
	yo_map_end(&y);
	if (rep->interrupted)
		yo_kv_str(&y, "stopped", "interrupted: SIGINT, SIGTERM or SIGHUP ended the reduction; this is the best "
			  "state so far, not confirmed");
	else if (rep->time_limited)
		yo_kv_str(&y, "stopped", "time limit: the reduction ended early; this is the best result so far");
	yo_key(&y, "reproduction");
	yo_map_start(&y, 0);
	yo_key(&y, "original");
	yo_strf(&y, "%d/%d", rep->orig_faults, rep->orig_runs);
	yo_key(&y, "original_rate");
	yo_plainf(&y, "%.2f", rep->orig_runs ? (double)rep->orig_faults / rep->orig_runs : 0.0);
	yo_key(&y, "reduced");
	yo_strf(&y, "%d/%d", rep->final_faults, rep->final_runs);
	yo_key(&y, "reduced_rate");
	yo_plainf(&y, "%.2f", rep->final_runs ? (double)rep->final_faults / rep->final_runs : 0.0);
	yo_kv_bool(&y, "flaky", rep->flaky);
	/* the emitted program itself, built and run by shrink */
	yo_key(&y, "repro_cu");
	if (rep->repro_checked && !rep->repro_runs)
		yo_strf(&y, "does not build");
	else if (rep->repro_checked)
		yo_strf(&y, "%d/%d", rep->repro_faults, rep->repro_runs);
	else
		yo_strf(&y, "not built");
	yo_kv_bool(&y, "repro_cu_reproduces", rep->repro_checked && rep->repro_ok);
	yo_kv_str(&y, "placement", place_guard_name(rep->repro_guard));
	if (rep->repro_why[0])
		yo_kv_str(&y, "repro_cu_note", rep->repro_why);
	yo_map_end(&y);
	yo_key(&y, "original");
	yo_map_start(&y, 0);
	yo_kv_str(&y, "trace", f->trace);
	yo_kv_u64(&y, "launches", rep->orig_launches);
	yo_kv_u64(&y, "records", rep->orig_records);
	yo_kv_u64(&y, "h2d_bytes", rep->orig_bytes);
	yo_kv_u64(&y, "file_bytes", orig ? orig->size : 0);
	yo_map_end(&y);
	yo_key(&y, "reduced");
	yo_map_start(&y, 0);
	yo_kv_u64(&y, "launches", rep->final_launches);
	yo_kv_u64(&y, "buffers", rep->final_buffers);
	yo_kv_u64(&y, "buffer_bytes", rep->final_bytes);
	yo_kv_str(&y, "repro_cu", f->repro_cu);
	yo_kv_u64(&y, "repro_cu_bytes", f->repro_cu_bytes);
	yo_kv_str(&y, "repro_bin", f->repro_bin);
	if (rep->rel_have) {
		/* what replay relocated in the reduced trace, and what it could not */
		yo_key(&y, "relocation");
		yo_map_start(&y, 0);
		yo_kv_i64(&y, "pointer_words", rep->rel_ptr_words);
		yo_kv_i64(&y, "unmatched_address_words", rep->rel_stray_words);
		yo_kv_i64(&y, "tensor_maps_reencoded", rep->rel_tmaps_encoded);
		yo_kv_i64(&y, "tensor_maps_address_word_only", rep->rel_tmaps_word0);
		yo_map_end(&y);
	}
	yo_map_end(&y);
	yo_kv_i64(&y, "candidates", rep->candidates);
	yo_kv_i64(&y, "cache_hits", rep->cache_hits);
	yo_kv_i64(&y, "slipped", rep->slipped);
	{
		long faulted = 0;
		for (int i = 0; i < rep->nphases; i++)
			faulted += rep->phase[i].faulted_replays;
		yo_kv_i64(&y, "faulted_replays", faulted);
	}
	yo_kv_i64(&y, "workers_spawned", rep->workers_spawned);
	yo_kv_i64(&y, "gpus", rep->devices);
	yo_kv_i64(&y, "sanitizer_runs", rep->site_runs);
	yo_key(&y, "sanitizer_seconds");
	yo_plainf(&y, "%.2f", rep->site_seconds);
	if (rep->phase_failures)
		yo_kv_i64(&y, "phase_failures", rep->phase_failures);
	yo_kv_i64(&y, "worker_start_failures", rep->start_failures);
	if (rep->outage_seconds > 0) {
		yo_key(&y, "waited_for_workers_seconds");
		yo_plainf(&y, "%.2f", rep->outage_seconds);
	}
	yo_key(&y, "seconds");
	yo_plainf(&y, "%.2f", rep->seconds);
	yo_key(&y, "other_seconds");     /* in no phase: workers' start-up, states written */
	yo_plainf(&y, "%.2f", shrink_other_seconds(rep));
	if (rep->one_launch_seconds > 0) {
		yo_key(&y, "one_launch_seconds");
		yo_plainf(&y, "%.2f", rep->one_launch_seconds);
	}
	yo_key(&y, "phases");
	yo_seq_start(&y, 0);
	for (int i = 0; i < rep->nphases; i++) {
		const struct shrink_phase *p = &rep->phase[i];
		yo_map_start(&y, 0);
		yo_kv_str(&y, "name", p->name);
		yo_key(&y, "launches");
		yo_strf(&y, "%zu -> %zu", p->launches_before, p->launches_after);
		yo_key(&y, "buffers");
		yo_strf(&y, "%zu -> %zu", p->buffers_before, p->buffers_after);
		yo_key(&y, "bytes");
		yo_strf(&y, "%llu -> %llu", (unsigned long long)p->bytes_before,
			(unsigned long long)p->bytes_after);
		yo_kv_i64(&y, "candidates", p->candidates);
		yo_kv_i64(&y, "faulted_replays", p->faulted_replays);
		yo_key(&y, "seconds");
		yo_plainf(&y, "%.2f", p->seconds);
		yo_key(&y, "share");
		yo_plainf(&y, "%.3f", shrink_phase_share(rep, i));
		yo_kv_str(&y, "outcome", p->outcome ? p->outcome : "");
		yo_map_end(&y);
	}
	yo_seq_end(&y);
	if (rep->note[0])
		yo_kv_str(&y, "note", rep->note);
	if (f->diagnosis)
		yo_kv_str(&y, "diagnosis", f->diagnosis);
	yo_map_end(&y);
	if (yo_close(&y, &e) == 0)
		ret = 0;
out:
	if (fclose(fp) != 0)
		ret = -1;
	if (ret < 0)
		sb_addf(err, "%s: could not write the YAML report%s%s", path, e.len ? ": " : "", e.buf);
	sb_release(&e);
	return ret;
}
