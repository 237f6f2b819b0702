/* opts.c - the command-line parser, the usage generated from a command's
 * table, subcommand dispatch, and the messages every command words the same
 * way (opts.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "duration.h"
#include "opts.h"
#include "suggest.h"

/* The help column: options wider than this put their text on the next line. */
#define HELP_COL_MAX 30

/* One parse in progress. */
struct parse {
	const struct opts_cmd *c;
	char *dst;
	FILE *out, *err;
	bool dump;                      /* DRATOPO_OPTS_DUMP: record, check nothing */
	struct strbuf dumped;
	bool *given;                    /* one per row: for OPT_REQUIRED */
	const struct opt *greedy;       /* where operands go now, or NULL */
	int code;                       /* the exit code once the parse stops */
};

static size_t n_rows(const struct opt *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

/* ---- usage ---- */

static void synopsis(const struct opts_cmd *c, FILE *f)
{
	fprintf(f, "usage: %s\n", c->synopsis);
}

static void help_hint(const char *prog, FILE *f)
{
	fprintf(f, "Run '%s --help' for the options.\n", prog);
}

/* "  -o, --output FORMAT" without the help. */
static void row_left(const struct opt *o, struct strbuf *sb)
{
	sb_puts(sb, "  ");
	if (o->key) {
		sb_putc(sb, '-');
		sb_putc(sb, o->key);
		sb_puts(sb, ", ");
	} else {
		sb_puts(sb, "    ");
	}
	sb_puts(sb, "--");
	sb_puts(sb, o->name);
	if (o->type == OPT_BOOL) {
		sb_puts(sb, "[=BOOL]");
	} else if (o->type != OPT_FLAG) {
		sb_putc(sb, ' ');
		sb_puts(sb, o->arg ? o->arg : o->choices ? o->choices : "VALUE");
		if (o->flags & OPT_GREEDY)
			sb_puts(sb, "...");
	}
}

/* The help text at column col, each '\n' starting an aligned line. */
static void row_help(const char *help, size_t col, FILE *f)
{
	for (const char *p = help; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		fprintf(f, "%.*s\n", (int)len, p);
		if (!nl || !nl[1])
			break;
		p = nl + 1;
		fprintf(f, "%*s", (int)col, "");
	}
}

static void print_row(const char *left, size_t left_len, const char *help, size_t col, FILE *f)
{
	if (left_len + 2 > col)
		fprintf(f, "%s\n%*s", left, (int)col, "");
	else
		fprintf(f, "%s%*s", left, (int)(col - left_len), "");
	row_help(help && *help ? help : "", col, f);
}

static void print_para(const char *text, FILE *f)
{
	size_t n = strlen(text);

	fprintf(f, "\n%s%s", text, n && text[n - 1] != '\n' ? "\n" : "");
}

void opts_usage(const struct opts_cmd *c, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;
	size_t col = strlen("  -h, --help") + 2;

	synopsis(c, f);
	if (c->about)
		print_para(c->about, f);
	for (const struct opt *o = c->opts; o && o->name; o++) {
		sb_reset(&sb);
		row_left(o, &sb);
		if (sb.len + 2 > col && sb.len + 2 <= HELP_COL_MAX)
			col = sb.len + 2;
	}
	fprintf(f, "\noptions:\n");
	for (const struct opt *o = c->opts; o && o->name; o++) {
		sb_reset(&sb);
		row_left(o, &sb);
		print_row(sb_str(&sb), sb.len, o->help, col, f);
	}
	print_row("  -h, --help", strlen("  -h, --help"), "print this help", col, f);
	if (c->epilog)
		print_para(c->epilog, f);
	sb_free(&sb);
}

static int usage_verror(const struct opts_cmd *c, FILE *f, const char *fmt, va_list ap)
{
	fprintf(f, "%s: ", c->prog);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	synopsis(c, f);
	help_hint(c->prog, f);
	return OPTS_EXIT_USAGE;
}

int opts_usage_error(const struct opts_cmd *c, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = usage_verror(c, stderr, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- parsing ---- */

/* Stop the parse with a usage error; returns -1 for the caller's return. */
static int fail(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p->code = usage_verror(p->c, p->err, fmt, ap);
	va_end(ap);
	return -1;
}

static int out_of_memory(struct parse *p)
{
	fprintf(p->err, "%s: out of memory\n", p->c->prog);
	p->code = OPTS_EXIT_FAIL;
	return -1;
}

static int list_push(struct parse *p, struct opts_list *l, const char *v)
{
	if (DT_GROW(l->v, l->cap, l->n + 1))
		return out_of_memory(p);
	l->v[l->n++] = v;
	return 0;
}

static int set_choice(struct parse *p, const struct opt *o, const char *v, int *dst)
{
	size_t vlen = strlen(v);
	struct strbuf sb = STRBUF_INIT;
	int i = 0;

	for (const char *s = o->choices; *s; i++) {
		const char *bar = strchr(s, '|');
		size_t len = bar ? (size_t)(bar - s) : strlen(s);

		if (len == vlen && !memcmp(s, v, len)) {
			*dst = i;
			return 0;
		}
		s += len + (bar != NULL);
	}
	sb_join_list(&sb, o->choices, '|', "or");
	fail(p, "--%s: unknown value '%s' (%s)", o->name, v, sb_str(&sb));
	sb_free(&sb);
	return -1;
}

static int set_uint(struct parse *p, const struct opt *o, const char *v, uint64_t *dst)
{
	uint64_t max = o->max ? o->max : UINT64_MAX, n = 0;
	const char *s = v;

	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			break;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	if (s == v || *s || n < o->min || n > max)
		return fail(p, "--%s: '%s' is not a whole number from %" PRIu64 " to %" PRIu64,
			    o->name, v, o->min, max);
	*dst = n;
	return 0;
}

static void dump_option(struct parse *p, const struct opt *o, const char *v)
{
	sb_puts(&p->dumped, "--");
	sb_puts(&p->dumped, o->name);
	if (v) {
		sb_putc(&p->dumped, '=');
		sb_puts(&p->dumped, v);
	}
	sb_putc(&p->dumped, '\n');
}

/* Option o given, with value v (NULL for a flag). */
static int take(struct parse *p, const struct opt *o, const char *v)
{
	void *at = p->dst + o->at;
	struct dt_err e = { 0 };

	p->given[o - p->c->opts] = true;
	p->greedy = o->type == OPT_LIST && (o->flags & OPT_GREEDY) ? o : NULL;
	if (p->dump) {
		dump_option(p, o, v);
		return 0;
	}
	switch (o->type) {
	case OPT_FLAG:
		*(bool *)at = true;
		return 0;
	case OPT_BOOL:
		if (v && strcmp(v, "true") && strcmp(v, "false"))
			return fail(p, "--%s: '%s' is neither true nor false", o->name, v);
		*(int *)at = !v || !strcmp(v, "true");
		return 0;
	case OPT_STR:
		*(const char **)at = v;
		return 0;
	case OPT_LIST:
		return list_push(p, at, v);
	case OPT_CHOICE:
		return set_choice(p, o, v, at);
	case OPT_UINT:
		return set_uint(p, o, v, at);
	case OPT_DURATION:
		if (duration_parse(v, at, &e))
			return fail(p, "--%s: %s", o->name, e.msg);
		if (!*(int64_t *)at)
			return fail(p, "--%s: must not be 0", o->name);
		return 0;
	case OPT_FUNC:
		if (o->set(p->dst, v, &e) < 0) {
			if (e.code == -ENOMEM)
				return out_of_memory(p);
			return fail(p, "--%s: %s", o->name, e.msg[0] ? e.msg : "invalid value");
		}
		return 0;
	}
	return 0;
}

static int operand(struct parse *p, const char *a)
{
	struct opts_list *l = (struct opts_list *)(p->dst + p->c->operands);

	if (p->greedy)
		return take(p, p->greedy, a);
	if (p->c->max_operands && l->n < p->c->max_operands) {
		if (p->dump) {
			sb_puts(&p->dumped, "operand=");
			sb_puts(&p->dumped, a);
			sb_putc(&p->dumped, '\n');
			return 0;
		}
		return list_push(p, l, a);
	}
	if (p->c->operand_hint)
		return fail(p, "unexpected argument '%s' (%s)", a, p->c->operand_hint);
	return fail(p, "unexpected argument '%s'", a);
}

static const struct opt *find_long(const struct opt *o, const char *name, size_t len)
{
	for (; o && o->name; o++)
		if (strlen(o->name) == len && !memcmp(o->name, name, len))
			return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *o, char key)
{
	for (; o && o->name; o++)
		if (o->key && o->key == key)
			return o;
	return NULL;
}

static int help(struct parse *p)
{
	opts_usage(p->c, p->out);
	p->code = OPTS_EXIT_OK;
	return -1;
}

static int unknown_long(struct parse *p, const char *a, size_t len)
{
	const char *names[128];
	size_t n = 0;
	char name[72];
	const char *best;

	names[n++] = "help";
	for (const struct opt *o = p->c->opts; o && o->name && n < 128; o++)
		names[n++] = o->name;
	snprintf(name, sizeof(name), "%.*s", (int)(len < 64 ? len : 64), a + 2);
	best = len < 64 ? dt_suggest(name, names, n) : NULL;
	if (best)
		return fail(p, "unknown option '%.*s' (did you mean '--%s'?)", (int)len + 2, a, best);
	return fail(p, "unknown option '%.*s'", (int)len + 2, a);
}

/* "--name", "--name=value", "--name value"; *i advanced past a value. */
static int long_option(struct parse *p, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *eq = strchr(a + 2, '=');
	size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
	const struct opt *o = find_long(p->c->opts, a + 2, len);

	if (!o) {
		if (len == 4 && !memcmp(a + 2, "help", 4) && !eq)
			return help(p);
		return unknown_long(p, a, len);
	}
	if (o->type == OPT_FLAG) {
		if (eq)
			return fail(p, "option '--%s' takes no value", o->name);
		return take(p, o, NULL);
	}
	if (eq || o->type == OPT_BOOL)
		return take(p, o, eq ? eq + 1 : NULL);
	if (*i + 1 >= argc)
		return fail(p, "option '--%s' needs a value", o->name);
	return take(p, o, argv[++*i]);
}

/* "-x", "-xVALUE", "-x=VALUE", "-x VALUE", "-ab" (flags bundled). */
static int short_options(struct parse *p, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	const char *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a - 1) : strlen(a + 1);

	/* "-output json": a long name after one dash reads as -o utput */
	if (len > 1 && find_long(p->c->opts, a + 1, len))
		return fail(p, "unknown option '%.*s' (did you mean '-%.*s'?)", (int)len + 1, a,
			    (int)len + 1, a);
	for (const char *k = a + 1; *k; k++) {
		const struct opt *o = find_short(p->c->opts, *k);
		int rc;

		if (!o && *k == 'h')
			return help(p);
		if (!o && k == a + 1 && p->c->max_operands)
			return fail(p, "unknown option '-%c' (an operand that starts with '-' "
				    "goes after --)", *k);
		if (!o && k == a + 1)
			return fail(p, "unknown option '-%c'", *k);
		if (!o)
			return fail(p, "unknown option '-%c' (in '%s')", *k, a);
		if (o->type == OPT_BOOL && k[1] == '=')
			return take(p, o, k + 2);
		if (o->type == OPT_FLAG || o->type == OPT_BOOL) {
			if (k[1] == '=')
				return fail(p, "option '-%c' takes no value", *k);
			if ((rc = take(p, o, NULL)))
				return rc;
			continue;
		}
		if (k[1])
			return take(p, o, k[1] == '=' ? k + 2 : k + 1);
		if (*i + 1 >= argc)
			return fail(p, "option '-%c' needs a value", *k);
		return take(p, o, argv[++*i]);
	}
	return 0;
}

static bool is_option(const struct opts_cmd *c, const char *a)
{
	if (a[0] != '-' || !a[1])
		return false;
	if ((c->flags & OPTS_DASH_OPERANDS) && a[1] != '-' && !isalpha((unsigned char)a[1]))
		return false;
	return true;
}

static int check_required(struct parse *p)
{
	for (const struct opt *o = p->c->opts; o && o->name; o++) {
		const char *arg = o->arg ? o->arg : "VALUE";

		if (!(o->flags & OPT_REQUIRED) || p->given[o - p->c->opts])
			continue;
		if (o->key)
			return fail(p, "-%c %s is required", o->key, arg);
		return fail(p, "--%s %s is required", o->name, arg);
	}
	return 0;
}

static int parse_args(struct parse *p, int argc, char **argv)
{
	bool only_operands = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;

		if (only_operands || !is_option(p->c, a))
			rc = operand(p, a);
		else if (!strcmp(a, "--"))
			only_operands = true, rc = 0;
		else if (a[1] == '-')
			rc = long_option(p, argc, argv, &i);
		else
			rc = short_options(p, argc, argv, &i);
		if (rc)
			return rc;
	}
	return p->dump ? 0 : check_required(p);
}

bool opts_parse_to(const struct opts_cmd *c, int argc, char **argv, void *dst, int *code,
		   FILE *out, FILE *err)
{
	const char *dump = getenv("DRATOPO_OPTS_DUMP");
	struct parse p = { .c = c, .dst = dst, .out = out, .err = err,
			   .dump = dump && *dump && strcmp(dump, "0") };
	bool stop;

	p.given = calloc(n_rows(c->opts) + 1, sizeof(*p.given));
	if (!p.given) {
		out_of_memory(&p);
		*code = p.code;
		return true;
	}
	stop = parse_args(&p, argc, argv) != 0;
	if (!stop && p.dump) {
		if (sb_error(&p.dumped))
			out_of_memory(&p);
		else
			fputs(sb_str(&p.dumped), out), p.code = OPTS_EXIT_OK;
		stop = true;
	}
	sb_free(&p.dumped);
	free(p.given);
	*code = p.code;
	return stop;
}

bool opts_parse(const struct opts_cmd *c, int argc, char **argv, void *dst, int *code)
{
	return opts_parse_to(c, argc, argv, dst, code, stdout, stderr);
}

void opts_free(const struct opts_cmd *c, void *dst)
{
	char *base = dst;

	for (const struct opt *o = c->opts; o && o->name; o++)
		if (o->type == OPT_LIST) {
			free(((struct opts_list *)(base + o->at))->v);
			*(struct opts_list *)(base + o->at) = (struct opts_list){ 0 };
		}
	if (c->max_operands) {
		free(((struct opts_list *)(base + c->operands))->v);
		*(struct opts_list *)(base + c->operands) = (struct opts_list){ 0 };
	}
}

/* ---- programs of subcommands ---- */

void opts_prog_usage(const struct opts_prog *p, FILE *f)
{
	size_t w = 0;

	fprintf(f, "usage: %s COMMAND [options]\n", p->prog);
	if (p->about)
		print_para(p->about, f);
	fprintf(f, "\ncommands:\n");
	for (size_t i = 0; i < p->n_subs; i++)
		w = strlen(p->subs[i].name) > w ? strlen(p->subs[i].name) : w;
	for (size_t i = 0; i < p->n_subs; i++) {
		fprintf(f, "  %-*s  ", (int)w, p->subs[i].name);
		row_help(p->subs[i].summary, w + 4, f);
	}
	fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n", p->prog);
	if (p->epilog)
		fputs(p->epilog, f);
}

int opts_dispatch(const struct opts_prog *p, int argc, char **argv)
{
	const char *names[64], *name, *best;
	size_t n = 0;

	if (argc < 2) {
		fprintf(stderr, "%s: a command is needed\n\n", p->prog);
		opts_prog_usage(p, stderr);
		return OPTS_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		opts_prog_usage(p, stdout);
		return OPTS_EXIT_OK;
	}
	if (p->version && (!strcmp(name, "--version") || !strcmp(name, "version"))) {
		printf("%s %s\n", p->prog, p->version);
		return OPTS_EXIT_OK;
	}
	for (size_t i = 0; i < p->n_subs; i++) {
		if (!strcmp(name, p->subs[i].name))
			return p->subs[i].run(argc - 1, argv + 1);
		if (n < 64)
			names[n++] = p->subs[i].name;
	}
	best = dt_suggest(name, names, n);
	if (best)
		fprintf(stderr, "%s: unknown command '%s' (did you mean '%s'?)\n\n", p->prog, name,
			best);
	else
		fprintf(stderr, "%s: unknown command '%s'\n\n", p->prog, name);
	opts_prog_usage(p, stderr);
	return OPTS_EXIT_USAGE;
}

/* ---- shared messages ---- */

void opts_print_diags(FILE *f, const char *prog, const char *prefix, const char *what,
		      const struct dt_diags *d)
{
	size_t len = strlen(what);

	for (size_t i = 0; i < d->n; i++)
		fprintf(f, "%s%s\n", prefix, d->msgs[i]);
	/* "1 more error", "2 more errors" */
	if (d->dropped)
		fprintf(f, "%s: %zu more %.*s not shown\n", prog, d->dropped,
			(int)(d->dropped == 1 && len > 1 && what[len - 1] == 's' ? len - 1 : len),
			what);
}

int opts_write_out(const char *prog, const struct strbuf *sb)
{
	if (sb_error(sb)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return OPTS_EXIT_FAIL;
	}
	if (fwrite(sb_str(sb), 1, sb->len, stdout) != sb->len || fflush(stdout)) {
		fprintf(stderr, "%s: cannot write the output: %s\n", prog, strerror(errno));
		return OPTS_EXIT_FAIL;
	}
	return OPTS_EXIT_OK;
}
