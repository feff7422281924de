/*
 * shrink-phases.c - the phase table's rows (see shrink-phases.h) and the
 * parsing of --phases/--skip-phases against them.  shrink.c runs the
 * rows; the phases and the report take their names from here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "phase.h"
#include "shrink-phases.h"

const struct phase_def phase_defs[PH__COUNT] = {
#define PHASE_ROW_(id, nm, f, fl, hp) [PH_##id] = { nm, f, fl, hp },
	SHRINK_PHASES(PHASE_ROW_)
#undef PHASE_ROW_
};

const char *phase_name(enum phase_id id)
{
	return (unsigned)id < PH__COUNT ? phase_defs[id].name : "?";
}

int phase_lookup(const char *name)
{
	for (int k = 0; k < PH__COUNT; k++)
		if (!(phase_defs[k].flags & PHASE_STEP) && !strcmp(phase_defs[k].name, name))
			return k;
	return -1;
}

void phase_names(struct strbuf *sb)
{
	int first = 1;
	for (int k = 0; k < PH__COUNT; k++) {
		if (phase_defs[k].flags & PHASE_STEP)
			continue;
		sb_addf(sb, "%s%s", first ? "" : ",", phase_defs[k].name);
		first = 0;
	}
}

int phase_select(const char *list, int skip, unsigned char *sel, struct strbuf *err)
{
	unsigned char named[PH__COUNT] = { 0 };
	const char *p = list;

	if (!list || !*list) {
		sb_addf(err, "--%sphases needs a list of phase names; valid: ", skip ? "skip-" : "");
		phase_names(err);
		return -1;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		char word[64];
		int k;
		if (n >= sizeof(word) || (snprintf(word, sizeof(word), "%.*s", (int)n, p),
					   (k = phase_lookup(word)) < 0)) {
			sb_addf(err, "--%sphases: unknown phase '%.*s'; valid: ", skip ? "skip-" : "",
				n > 60 ? 60 : (int)n, p);
			phase_names(err);
			return -1;
		}
		named[k] = 1;
		p += n;
		if (*p == ',')
			p++;
	}
	for (int k = 0; k < PH__COUNT; k++) {
		if (phase_defs[k].flags & PHASE_STEP)
			continue;
		if (skip) {
			if (named[k])
				sel[k] = PHASE_SEL_OFF;
		} else {
			sel[k] = named[k] ? PHASE_SEL_ON : PHASE_SEL_OFF;
		}
	}
	return 0;
}

int phase_wanted(const unsigned char *sel, enum phase_id id, int cut_buffers)
{
	if (phase_defs[id].flags & PHASE_STEP)
		return 1;
	if (sel[id] == PHASE_SEL_OFF)
		return 0;
	if ((phase_defs[id].flags & PHASE_CUT_BUFFERS) && !cut_buffers)
		return sel[id] == PHASE_SEL_ON;
	return 1;
}

int phase_serial(void)
{
	const char *e = getenv("GPUREDUCE_SHRINK_SERIAL");
	return e && !strcmp(e, "1");
}
