/*
 * sampleinfo.c - reads one samples/NAME/sample.yaml and prints it as
 * shell-safe KEY='value' lines for the GPU test scripts in tests/gpu,
 * which `eval` the output.
 *
 * A standalone test tool, not part of gpureduce: it links only libyaml
 * (statically, because the GPU machine has no libyaml; see
 * tests/gpu/lib.sh) and uses none of the house library, so it builds with
 *   cc -O2 -o build/sampleinfo tests/gpu/sampleinfo.c \
 *      -Wl,-Bstatic -lyaml -Wl,-Bdynamic
 *
 * Output (always all thirteen keys, in this order):
 *   NAME  STORY  BUILD_CMD  RUN  EXPECT_ERRORS (space separated)
 *   EXPECT_KERNEL  FLAKY (0/1)  TIMEOUT (seconds)
 *   CAPTURE_ARGS (`capture_args:`, extra words for `gpureduce capture`, e.g.
 *   --tensors)  EXPECT_ROOT_KERNEL (`expect.root_kernel:`: the kernel that
 *   `shrink --root-cause`'s repro-root.cu must fault in; "" = no root-cause
 *   step)  PROCESSES (`processes:`, default 1: how many CUDA processes the
 *   job starts, e.g. torchrun ranks; above 1 the GPU scripts capture with
 *   -o DIR/ and take the trace that faulted first from DIR/index.yaml)
 *   EXPECT_HUNT_KERNEL (`expect.hunt_kernel:`: a bug that never
 *   faults natively; `gpureduce hunt` must find it first in that kernel and
 *   its repro.cu fault there; "" = the ordinary crash pipeline)  CLEAN_ENV
 *   (`clean_env:`, VAR=VALUE words that select the variant without the
 *   bug, which must hunt clean; "" = none)
 * Values are wrapped in single quotes with every ' written as '\''.
 *
 * The schema is strict so that a typo in a sample fails loudly instead of
 * silently testing nothing: unknown or duplicate keys, a missing name/run/
 * expect.errors, an error name that is not CUDA_ERROR_[A-Z0-9_]+, a name
 * that is not a plain file name, or a bad timeout are errors.  On any error
 * it prints one line "sampleinfo: FILE: what" to stderr and exits 1 (2 for
 * usage).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct sample {
	const char *name, *story, *build, *run, *kernel, *capture_args, *root_kernel, *hunt_kernel;
	const char *clean_env;
	char errors[1024];
	int flaky;
	long timeout;
	long processes;          /* CUDA processes the job starts (ranks) */
};

static const char *path;
static char errmsg[512];

/* Record the first error only; returns -1 for convenient `return fail(...)`. */
static int fail(const yaml_node_t *at, const char *fmt, const char *arg)
{
	if (errmsg[0])
		return -1;
	char what[384];
	snprintf(what, sizeof(what), fmt, arg ? arg : "");
	if (at)
		snprintf(errmsg, sizeof(errmsg), "%s (line %lu)", what,
			 (unsigned long)at->start_mark.line + 1);
	else
		snprintf(errmsg, sizeof(errmsg), "%s", what);
	return -1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar value of key `key`, or an error naming the key. */
static int get_str(const yaml_node_t *v, const char *key, const char **out)
{
	const char *s = scalar(v);
	if (!s)
		return fail(v, "key '%s' must be a plain string", key);
	*out = s;
	return 0;
}

static int valid_error_name(const char *s)
{
	if (strncmp(s, "CUDA_ERROR_", 11) != 0 || !s[11])
		return 0;
	for (const char *p = s; *p; p++)
		if (!(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			return 0;
	return 1;
}

static int valid_name(const char *s)
{
	if (!*s || *s == '.' || *s == '-')
		return 0;
	for (const char *p = s; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

static int add_error(struct sample *sm, const yaml_node_t *n)
{
	const char *s = scalar(n);
	if (!s || !valid_error_name(s))
		return fail(n, "expect.errors: '%s' is not a CUDA_ERROR_* name", s ? s : "(not a string)");
	size_t have = strlen(sm->errors), need = strlen(s) + 1;
	if (have + need + 1 > sizeof(sm->errors))
		return fail(n, "expect.errors: too many names%s", NULL);
	if (have)
		strcat(sm->errors, " ");
	strcat(sm->errors, s);
	return 0;
}

static int parse_bool(const yaml_node_t *v, const char *key, int *out)
{
	const char *s = scalar(v);
	if (s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "yes")))
		*out = 1;
	else if (s && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "no")))
		*out = 0;
	else
		return fail(v, "key '%s' must be true or false", key);
	return 0;
}

static int parse_expect(yaml_document_t *doc, const yaml_node_t *map, struct sample *sm)
{
	int seen_errors = 0, seen_kernel = 0, seen_flaky = 0, seen_root = 0, seen_hunt = 0;
	if (map->type != YAML_MAPPING_NODE)
		return fail(map, "'expect' must be a mapping (errors, kernel, flaky, root_kernel, hunt_kernel)%s", NULL);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		const yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (!k)
			return fail(v, "expect: keys must be strings%s", NULL);
		if (!strcmp(k, "errors")) {
			if (seen_errors++)
				return fail(v, "expect: duplicate key '%s'", k);
			if (v->type == YAML_SCALAR_NODE) {
				if (add_error(sm, v))
					return -1;
			} else if (v->type == YAML_SEQUENCE_NODE) {
				for (yaml_node_item_t *it = v->data.sequence.items.start;
				     it < v->data.sequence.items.top; it++)
					if (add_error(sm, yaml_document_get_node(doc, *it)))
						return -1;
			} else {
				return fail(v, "expect.errors must be a list of CUDA_ERROR_* names%s", NULL);
			}
		} else if (!strcmp(k, "kernel")) {
			if (seen_kernel++)
				return fail(v, "expect: duplicate key '%s'", k);
			if (get_str(v, "expect.kernel", &sm->kernel))
				return -1;
		} else if (!strcmp(k, "flaky")) {
			if (seen_flaky++)
				return fail(v, "expect: duplicate key '%s'", k);
			if (parse_bool(v, "expect.flaky", &sm->flaky))
				return -1;
		} else if (!strcmp(k, "root_kernel")) {
			if (seen_root++)
				return fail(v, "expect: duplicate key '%s'", k);
			if (get_str(v, "expect.root_kernel", &sm->root_kernel))
				return -1;
		} else if (!strcmp(k, "hunt_kernel")) {
			if (seen_hunt++)
				return fail(v, "expect: duplicate key '%s'", k);
			if (get_str(v, "expect.hunt_kernel", &sm->hunt_kernel))
				return -1;
		} else {
			return fail(v, "expect: unknown key '%s' (known: errors, kernel, flaky, root_kernel, hunt_kernel)", k);
		}
	}
	if (!sm->errors[0])
		return fail(map, "expect.errors is missing or empty%s", NULL);
	return 0;
}

static int parse_processes(const yaml_node_t *v, long *out)
{
	const char *s = scalar(v);
	char *end;
	long n;
	if (!s)
		return fail(v, "key 'processes' must be a number%s", NULL);
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 1 || n > 1024)
		return fail(v, "processes '%s' must be a whole number, 1..1024", s);
	*out = n;
	return 0;
}

static int parse_timeout(const yaml_node_t *v, long *out)
{
	const char *s = scalar(v);
	char *end;
	if (!s)
		return fail(v, "key 'timeout' must be a number of seconds%s", NULL);
	errno = 0;
	long t = strtol(s, &end, 10);
	if (errno || end == s || *end || t < 1 || t > 86400)
		return fail(v, "timeout '%s' must be a whole number of seconds, 1..86400", s);
	*out = t;
	return 0;
}

/* Fill sm from the document's root mapping.  0, or -1 with errmsg set. */
static int parse_sample(yaml_document_t *doc, struct sample *sm)
{
	const yaml_node_t *root = yaml_document_get_root_node(doc);
	unsigned seen = 0;
	static const char *keys[] = { "name", "story", "build", "run", "expect", "timeout", "capture_args",
				      "processes", "clean_env" };

	if (!root)
		return fail(NULL, "empty file: expected a mapping with name, run and expect%s", NULL);
	if (root->type != YAML_MAPPING_NODE)
		return fail(root, "top level must be a mapping (name, story, build, run, expect, timeout)%s", NULL);
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		const yaml_node_t *v = yaml_document_get_node(doc, p->value);
		unsigned i;
		if (!k)
			return fail(v, "keys must be strings%s", NULL);
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(k, keys[i]))
				break;
		if (i == sizeof(keys) / sizeof(keys[0]))
			return fail(v, "unknown key '%s' (known: name, story, build, run, expect, timeout, capture_args, "
				    "processes, clean_env)", k);
		if (seen & (1u << i))
			return fail(v, "duplicate key '%s'", k);
		seen |= 1u << i;
		int r = 0;
		switch (i) {
		case 0: r = get_str(v, k, &sm->name); break;
		case 1: r = get_str(v, k, &sm->story); break;
		case 2: r = get_str(v, k, &sm->build); break;
		case 3: r = get_str(v, k, &sm->run); break;
		case 4: r = parse_expect(doc, v, sm); break;
		case 5: r = parse_timeout(v, &sm->timeout); break;
		case 6: r = get_str(v, k, &sm->capture_args); break;
		case 7: r = parse_processes(v, &sm->processes); break;
		case 8: r = get_str(v, k, &sm->clean_env); break;
		}
		if (r)
			return -1;
	}
	if (!sm->name)
		return fail(root, "missing key 'name'%s", NULL);
	if (!valid_name(sm->name))
		return fail(root, "name '%s' must be a plain file name ([A-Za-z0-9._-], no leading . or -)", sm->name);
	if (!sm->run || !sm->run[0])
		return fail(root, "missing or empty key 'run'%s", NULL);
	if (!(seen & (1u << 4)))
		return fail(root, "missing key 'expect'%s", NULL);
	return 0;
}

/* Print KEY='value' with ' escaped as '\''; trailing newlines dropped. */
static void put(const char *key, const char *v)
{
	size_t n = strlen(v);
	while (n && (v[n - 1] == '\n' || v[n - 1] == '\r'))
		n--;
	printf("%s='", key);
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '\'')
			fputs("'\\''", stdout);
		else
			putchar(v[i]);
	}
	fputs("'\n", stdout);
}

int main(int argc, char **argv)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct sample sm = { .name = NULL, .story = "", .build = "", .run = NULL,
			     .kernel = "", .errors = "", .flaky = 0, .timeout = 120,
			     .capture_args = "", .root_kernel = "", .processes = 1, .hunt_kernel = "", .clean_env = "" };
	FILE *f = NULL;
	int ret = 1, have_parser = 0, have_doc = 0;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: sampleinfo samples/NAME/sample.yaml\n");
		return 2;
	}
	path = argv[1];
	f = fopen(path, "rb");
	if (!f) {
		fail(NULL, "cannot open: %s", strerror(errno));
		goto out;
	}
	if (!yaml_parser_initialize(&parser)) {
		fail(NULL, "cannot initialise the YAML parser%s", NULL);
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		char m[256];
		snprintf(m, sizeof(m), "YAML error: %s (line %lu)",
			 parser.problem ? parser.problem : "unknown",
			 (unsigned long)parser.problem_mark.line + 1);
		fail(NULL, "%s", m);
		goto out;
	}
	have_doc = 1;
	if (parse_sample(&doc, &sm))
		goto out;

	put("NAME", sm.name);
	put("STORY", sm.story);
	put("BUILD_CMD", sm.build);
	put("RUN", sm.run);
	put("EXPECT_ERRORS", sm.errors);
	put("EXPECT_KERNEL", sm.kernel);
	printf("FLAKY=%d\nTIMEOUT=%ld\n", sm.flaky, sm.timeout);
	put("CAPTURE_ARGS", sm.capture_args);
	put("EXPECT_ROOT_KERNEL", sm.root_kernel);
	printf("PROCESSES=%ld\n", sm.processes);
	put("EXPECT_HUNT_KERNEL", sm.hunt_kernel);
	put("CLEAN_ENV", sm.clean_env);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fail(NULL, "cannot write the output%s", NULL);
		goto out;
	}
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "sampleinfo: %s: %s\n", path ? path : "?", errmsg[0] ? errmsg : "failed");
	if (have_doc)
		yaml_document_delete(&doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	if (f)
		fclose(f);
	return ret;
}
