/*
 * report_yaml.h - repro.yaml: the facts of a reduction (signature,
 * reproduction rates, phases, sizes, command line), written with libyaml's
 * emitter so that tools can read it back.
 */
#ifndef GPUREDUCE_REPORT_YAML_H
#define GPUREDUCE_REPORT_YAML_H

struct shrink_report;
struct strbuf;
struct trace;

struct report_files {
	const char *trace;       /* the original trace */
	const char *repro_cu;
	const char *repro_bin;
	const char *command;     /* the shrink command line */
	const char *diagnosis;   /* may be NULL */
	unsigned long repro_cu_bytes;
	const char *outcome;         /* confirmed / unconfirmed / not-reproduced (src/outputs/shrink-out.c) */
	const char *repro_cu_hash;   /* of repro.cu as written: an edit shows (src/outputs/shrink-out.c) */
};

int report_yaml_write(const char *path, const struct shrink_report *rep, const struct trace *orig,
		      const struct report_files *f, struct strbuf *err);

#endif
