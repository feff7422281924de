/*
 * yamlflat.c - test helper: parse YAML with libyaml and print every scalar
 * as one "path: value" line, so shell tests can check YAML output with
 * grep -x without depending on python3-yaml.
 *
 *   usage: yamlflat [FILE]        (stdin when no FILE)
 *
 * Paths join mapping keys and 0-based sequence indexes with '/', e.g.
 *   header/truncated: false
 *   events/5/params/0/ptr: alloc#3+0x40 (device, 4000 bytes)
 * Values are printed as parsed (quotes removed, escapes decoded), newlines
 * as "\n".  An empty sequence or mapping prints "path: []" / "path: {}".
 * Several documents get a "---" line between them.  Exit 0, or 1 with
 * "yamlflat: line L column C: problem" when the input is not valid YAML.
 * Built by tests/tests.mk as $(BUILD)/yamlflat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAXDEPTH 256

struct level {
	int is_seq;
	long index;          /* sequences: next index; mappings: 0 = key next, 1 = value */
	long count;
	char *key;           /* mappings: current key */
};

static struct level st[MAXDEPTH];
static int depth;

static void print_path(void)
{
	for (int i = 0; i < depth; i++) {
		if (i)
			putchar('/');
		if (st[i].is_seq)
			printf("%ld", st[i].index);
		else
			fputs(st[i].key ? st[i].key : "", stdout);
	}
}

static void print_value(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '\n')
			fputs("\\n", stdout);
		else
			putchar(v[i]);
	}
}

/* A value (scalar or container start) was consumed at the current level. */
static void advance(void)
{
	if (!depth)
		return;
	if (st[depth - 1].is_seq) {
		st[depth - 1].index++;
	} else {
		st[depth - 1].index = 0;   /* next: key */
	}
	st[depth - 1].count++;
}

/* Is the next node at this level a mapping key? */
static int at_key(void)
{
	return depth && !st[depth - 1].is_seq && st[depth - 1].index == 0;
}

int main(int argc, char **argv)
{
	yaml_parser_t p;
	yaml_event_t ev;
	FILE *in = stdin;
	int ret = 1, docs = 0, done = 0;

	if (argc > 1 && !(in = fopen(argv[1], "rb"))) {
		perror(argv[1]);
		return 1;
	}
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, in);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			fprintf(stderr, "yamlflat: line %zu column %zu: %s\n",
				p.problem_mark.line + 1, p.problem_mark.column + 1,
				p.problem ? p.problem : "parse error");
			goto out;
		}
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (docs++)
				puts("---");
			break;
		case YAML_SCALAR_EVENT:
			if (at_key()) {
				free(st[depth - 1].key);
				st[depth - 1].key = strndup((char *)ev.data.scalar.value, ev.data.scalar.length);
				st[depth - 1].index = 1;
				break;
			}
			print_path();
			fputs(": ", stdout);
			print_value((char *)ev.data.scalar.value, ev.data.scalar.length);
			putchar('\n');
			advance();
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (at_key()) {
				fprintf(stderr, "yamlflat: line %zu: complex mapping keys are not supported\n",
					ev.start_mark.line + 1);
				yaml_event_delete(&ev);
				goto out;
			}
			if (depth == MAXDEPTH) {
				fprintf(stderr, "yamlflat: nesting deeper than %d\n", MAXDEPTH);
				yaml_event_delete(&ev);
				goto out;
			}
			st[depth].is_seq = ev.type == YAML_SEQUENCE_START_EVENT;
			st[depth].index = 0;
			st[depth].count = 0;
			st[depth].key = NULL;
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			if (!st[depth].count) {
				print_path();
				puts(st[depth].is_seq ? ": []" : ": {}");
			}
			free(st[depth].key);
			advance();
			break;
		case YAML_ALIAS_EVENT:
			print_path();
			printf(": *%s\n", ev.data.alias.anchor);
			advance();
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	ret = 0;
out:
	yaml_parser_delete(&p);
	if (in != stdin)
		fclose(in);
	return ret;
}
