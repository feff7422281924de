/*
 * side-repro.c - reduce a cut trace into a repro beside the main one
 * (side-repro.h): hunt's findings and shrink --root-cause share these
 * steps, so a change to how a repro is reduced, diagnosed and written
 * reaches both.
 */
#include <string.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../diagnose/diagnose.h"
#include "../../emit/emit.h"
#include "../../reducer/report_yaml.h"
#include "../../reducer/shrink.h"
#include "../../trace/trace.h"
#include "../cmds.h"
#include "repro.h"
#include "side-repro.h"

int side_repro_run(const struct side_repro *s, struct shrink_opts *o, struct shrink_report *rep,
		   struct strbuf *err)
{
	struct strbuf src = STRBUF_INIT, diag = STRBUF_INIT, tmp = STRBUF_INIT;
	struct repro_check rcheck = { s->bt, rep, s->trace_path, o->workdir, o->jobs,
				      0, 0, NULL };
	struct emit_info info;
	struct report_files rf;
	struct trace red;
	int have_red = 0, ret = EXIT_INTERNAL;

	if (o->check_repro)
		o->check_repro = repro_check_trace;
	o->check_arg = &rcheck;
	if (shrink_run(s->bt, o, s->bin, rep, err) < 0) {
		ret = rep->infra_failed || rep->write_failed ? EXIT_ENV : EXIT_FAULT;
		goto out;
	}
	if (trace_open(&red, s->bin, TRACE_OPEN_STRICT, err) < 0)
		goto out;
	have_red = 1;
	if (!s->no_diag && rep->final_sanitizer && diagnose_explain(rep->final_sanitizer, &red, &diag) == 0) {
	} else if (!s->no_diag && diagnose_trace(&red, s->bin, rep->guard, &diag, &tmp) < 0) {
		sb_reset(&diag);
	}
	info = (struct emit_info){ s->bt, rep, diag.len ? diag.buf : NULL, s->trace_path, rep->repro_guard };
	if (emit_repro(&red, &info, &src, err) < 0)
		goto out;
	if (s->label)
		s->label(s->arg, diag.len ? diag.buf : NULL, &src);
	if (write_file(s->cu, src.buf, src.len, err) < 0) {
		ret = EXIT_ENV;
		goto out;
	}
	memset(&rf, 0, sizeof(rf));
	rf.trace = s->trace_path;
	rf.repro_cu = s->cu;
	rf.repro_bin = s->bin;
	rf.command = s->command;
	rf.diagnosis = diag.len ? diag.buf : NULL;
	rf.repro_cu_bytes = (unsigned long)src.len;
	if (report_yaml_write(s->yml, rep, s->bt, &rf, err) < 0) {
		ret = EXIT_ENV;
		goto out;
	}
	ret = EXIT_OK;
out:
	o->check_arg = NULL;
	if (have_red)
		trace_release(&red);
	sb_release(&src);
	sb_release(&diag);
	sb_release(&tmp);
	return ret;
}

int side_repro_yaml_append(const char *yml, const char *text, struct strbuf *err)
{
	struct strbuf y = STRBUF_INIT;
	int ret = -1;

	if (read_file(yml, &y, err) < 0)
		goto out;
	while (y.len && (y.buf[y.len - 1] == '\n' || y.buf[y.len - 1] == '.'))
		sb_setlen(&y, y.len - 1);
	sb_addch(&y, '\n');
	sb_adds(&y, text);
	ret = write_file(yml, y.buf, y.len, err);
out:
	sb_release(&y);
	return ret;
}
