/*
 * test_opts.c - the subcommands' option parser (common/opts.h): both
 * spellings of a value, typed numbers and their range checks, and the
 * messages that name the option.
 */
#include <string.h>

#include "../../common/opts.h"
#include "../../common/strbuf.h"
#include "unit.h"

/* Parse argv (NULL-terminated, argv[0] the command) the way a command
 * does; returns failed, err gets the message. */
static int parse(char **argv, int *j, double *t, const char **log, const char **path, int *quiet,
		 struct strbuf *err)
{
	struct opts p;
	int argc = 0;
	while (argv[argc])
		argc++;
	opts_init(&p, argc, argv, err);
	while (opts_next(&p)) {
		if (opts_int(&p, "-j|--jobs", j, 1, 64)) ;
		else if (opts_double(&p, "--time-limit", t, 0, 1e9)) ;
		else if (opts_str(&p, "--log", log)) ;
		else if (opts_flag(&p, "-q|--quiet")) *quiet = 1;
		else if (opts_unknown(&p)) ;
		else *path = p.arg;
	}
	return p.failed;
}

UNIT_TEST(opts_both_spellings_and_operands)
{
	char *a1[] = { "shrink", "-j", "4", "--time-limit=2.5", "--log", "x.log", "-q", "t.bin", NULL };
	char *a2[] = { "shrink", "-j4", "--jobs=5", "--time-limit", "7", "--log=y.log", "t2.bin", NULL };
	struct strbuf err = STRBUF_INIT;
	int j = 0, q = 0;
	double t = 0;
	const char *log = NULL, *path = NULL;

	CHECK(parse(a1, &j, &t, &log, &path, &q, &err) == 0);
	CHECK(j == 4 && t == 2.5 && q == 1);
	CHECK_STR(log, "x.log");
	CHECK_STR(path, "t.bin");
	q = 0;
	CHECK(parse(a2, &j, &t, &log, &path, &q, &err) == 0);
	CHECK(j == 5 && t == 7 && q == 0);
	CHECK_STR(log, "y.log");
	CHECK_STR(path, "t2.bin");
	CHECK(err.len == 0);
	sb_release(&err);
}

UNIT_TEST(opts_bad_values_name_the_option)
{
	static const struct { const char *a, *b, *msg; } cases[] = {
		{ "--time-limit=1O", NULL, "--time-limit: '1O' is not a number (0 to 1e+09)" },
		{ "--time-limit", "1O", "--time-limit: '1O' is not a number (0 to 1e+09)" },
		{ "--time-limit=-1", NULL, "--time-limit: -1 is out of range (0 to 1e+09)" },
		{ "--time-limit=nan", NULL, "--time-limit: 'nan' is not a number (0 to 1e+09)" },
		{ "-j", "65", "-j: 65 is out of range (1 to 64)" },
		{ "-j2.5", NULL, "-j: '2.5' is not a whole number (1 to 64)" },
		{ "--jobs=", NULL, "--jobs: '' is not a whole number (1 to 64)" },
		{ "--log=", NULL, "--log needs a value (it is empty)" },
		{ "--log", NULL, "--log needs a value" },
		{ "--frob", NULL, "unknown option '--frob'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[4] = { "shrink", (char *)cases[i].a, (char *)cases[i].b, NULL };
		struct strbuf err = STRBUF_INIT;
		int j = 1, q = 0;
		double t = 0;
		const char *log = NULL, *path = NULL;
		CHECK(parse(argv, &j, &t, &log, &path, &q, &err) == 1);
		CHECK_STR(err.buf, cases[i].msg);
		CHECK(j == 1 && t == 0);
		sb_release(&err);
	}
}
