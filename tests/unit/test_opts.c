/* test_opts.c - the command-line grammar (common/opts): every form of every
 * kind of option, operands, --, bundles, the errors in their one wording,
 * the generated usage, the dump the grammar walk reads, dispatch. */
#include <stdlib.h>
#include <string.h>

#include "dt_test.h"
#include "opts.h"

struct args {
	bool verbose, quiet;
	const char *node;
	struct opts_list files;
	int format;
	uint64_t steps;
	int64_t interval;
	const char *let_name;
	struct opts_list operands;
};

static int set_let(void *dst, const char *v, struct dt_err *err)
{
	struct args *a = dst;

	if (!strchr(v, '='))
		return dt_err_set(err, -EINVAL, "wants NAME=EXPR, got \"%s\"", v);
	a->let_name = v;
	return 0;
}

static const struct opt table[] = {
	{ .name = "filename", .key = 'f', .type = OPT_LIST, .arg = "FILE", .flags = OPT_GREEDY,
	  .at = OPTS_AT(struct args, files), .help = "manifests\n(repeatable)" },
	{ .name = "node", .key = 'n', .type = OPT_STR, .arg = "NODE",
	  .at = OPTS_AT(struct args, node), .help = "the node" },
	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT",
	  .choices = "table|yaml|json", .at = OPTS_AT(struct args, format), .help = "format" },
	{ .name = "verbose", .key = 'v', .type = OPT_FLAG, .at = OPTS_AT(struct args, verbose),
	  .help = "more" },
	{ .name = "quiet", .key = 'q', .type = OPT_FLAG, .at = OPTS_AT(struct args, quiet),
	  .help = "less" },
	{ .name = "max-steps", .type = OPT_UINT, .arg = "N", .min = 1, .max = 1000,
	  .at = OPTS_AT(struct args, steps), .help = "budget" },
	{ .name = "interval", .type = OPT_DURATION, .arg = "D",
	  .at = OPTS_AT(struct args, interval), .help = "how often" },
	{ .name = "let", .type = OPT_FUNC, .arg = "NAME=EXPR", .set = set_let,
	  .help = "a variable" },
	{ 0 }
};

static const struct opts_cmd cmd = {
	.prog = "t cmd",
	.synopsis = "t cmd -f FILE... [-o FORMAT]",
	.about = "Test command.",
	.opts = table,
	.epilog = "Exit codes: 0.",
	.operands = OPTS_AT(struct args, operands),
	.max_operands = 2,
	.operand_hint = "two at most",
};

/* What one parse gave: its result, exit code and both streams. */
struct run {
	struct args a;
	bool stop;
	int code;
	char out[8192], err[8192];
};

static void parse_into(const struct opts_cmd *c, struct run *r, char **argv)
{
	char *ob = NULL, *eb = NULL;
	size_t ol = 0, el = 0;
	FILE *out = open_memstream(&ob, &ol), *err = open_memstream(&eb, &el);
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(r, 0, sizeof(*r));
	r->stop = opts_parse_to(c, argc, argv, &r->a, &r->code, out, err);
	fclose(out);
	fclose(err);
	snprintf(r->out, sizeof(r->out), "%s", ob);
	snprintf(r->err, sizeof(r->err), "%s", eb);
	free(ob);
	free(eb);
}

#define PARSE(r, ...)                                                           \
	do {                                                                    \
		const char *argv_[] = { "cmd", __VA_ARGS__, NULL };             \
		parse_into(&cmd, (r), (char **)argv_);                          \
	} while (0)

static void done(struct run *r)
{
	opts_free(&cmd, &r->a);
}

/* The first line of r's stderr. */
static const char *first_err_line(struct run *r)
{
	char *nl = strchr(r->err, '\n');

	if (nl)
		*nl = '\0';
	return r->err;
}

static void test_value_forms(void)
{
	static const char *const forms[][3] = {
		{ "--node=n1", NULL, NULL }, { "--node", "n1", NULL }, { "-nn1", NULL, NULL },
		{ "-n", "n1", NULL }, { "-n=n1", NULL, NULL },
	};
	struct run r;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *argv[] = { "cmd", forms[i][0], forms[i][1], NULL };

		parse_into(&cmd, &r, (char **)argv);
		CU_ASSERT_FALSE(r.stop);
		DT_ASSERT_STR(r.a.node, "n1");
		CU_ASSERT_STRING_EQUAL(r.err, "");
		done(&r);
	}
	/* A value that looks like an option is still the value. */
	PARSE(&r, "-n", "--output");
	CU_ASSERT_FALSE(r.stop);
	DT_ASSERT_STR(r.a.node, "--output");
	done(&r);
	PARSE(&r, "--node=");                       /* an empty value is a value */
	CU_ASSERT_FALSE(r.stop);
	DT_ASSERT_STR(r.a.node, "");
	done(&r);
	PARSE(&r, "--node=a=b");
	DT_ASSERT_STR(r.a.node, "a=b");
	done(&r);
	PARSE(&r, "-n", "a", "--node", "b");      /* the last one wins */
	DT_ASSERT_STR(r.a.node, "b");
	done(&r);
}

static void test_flags_and_bundles(void)
{
	struct run r;

	PARSE(&r, "-v");
	CU_ASSERT_TRUE(r.a.verbose);
	CU_ASSERT_FALSE(r.a.quiet);
	done(&r);
	PARSE(&r, "-vq");
	CU_ASSERT_TRUE(r.a.verbose && r.a.quiet);
	done(&r);
	PARSE(&r, "-qvojson");                      /* a value option ends a bundle */
	CU_ASSERT_TRUE(r.a.verbose && r.a.quiet);
	CU_ASSERT_EQUAL(r.a.format, 2);
	done(&r);
	PARSE(&r, "-vo", "yaml");
	CU_ASSERT_TRUE(r.a.verbose);
	CU_ASSERT_EQUAL(r.a.format, 1);
	done(&r);
	PARSE(&r, "--verbose", "--quiet");
	CU_ASSERT_TRUE(r.a.verbose && r.a.quiet);
	done(&r);
	PARSE(&r, "--verbose=yes");
	CU_ASSERT_TRUE(r.stop);
	CU_ASSERT_EQUAL(r.code, 2);
	DT_ASSERT_STR(first_err_line(&r), "t cmd: option '--verbose' takes no value");
	PARSE(&r, "-v=1");
	CU_ASSERT_EQUAL(r.code, 2);
	DT_ASSERT_STR(first_err_line(&r), "t cmd: option '-v' takes no value");
	PARSE(&r, "-vx");
	CU_ASSERT_EQUAL(r.code, 2);
	DT_ASSERT_STR(first_err_line(&r), "t cmd: unknown option '-x' (in '-vx')");
}

static void test_lists_and_operands(void)
{
	struct run r;

	PARSE(&r, "-f", "a", "b", "c", "--filename=d", "-fe", "x");
	CU_ASSERT_FALSE(r.stop);
	CU_ASSERT_EQUAL(r.a.files.n, 6);
	if (r.a.files.n == 6) {
		DT_ASSERT_STR(r.a.files.v[0], "a");
		DT_ASSERT_STR(r.a.files.v[2], "c");
		DT_ASSERT_STR(r.a.files.v[3], "d");
		DT_ASSERT_STR(r.a.files.v[4], "e");
		DT_ASSERT_STR(r.a.files.v[5], "x");     /* -fe is greedy too */
	}
	CU_ASSERT_EQUAL(r.a.operands.n, 0);
	done(&r);
	/* Another option ends the greedy run; then operands are operands. */
	PARSE(&r, "-f", "a", "-v", "op1", "-", "-f", "b");
	CU_ASSERT_FALSE(r.stop);
	CU_ASSERT_EQUAL(r.a.files.n, 2);
	CU_ASSERT_EQUAL(r.a.operands.n, 2);
	if (r.a.operands.n == 2) {
		DT_ASSERT_STR(r.a.operands.v[0], "op1");
		DT_ASSERT_STR(r.a.operands.v[1], "-");
	}
	done(&r);
	PARSE(&r, "x", "y", "z");
	CU_ASSERT_EQUAL(r.code, 2);
	DT_ASSERT_STR(first_err_line(&r), "t cmd: unexpected argument 'z' (two at most)");
	done(&r);
	/* -- ends the options; -f's run goes on through it. */
	PARSE(&r, "-v", "--", "-q", "--help");
	CU_ASSERT_FALSE(r.stop);
	CU_ASSERT_FALSE(r.a.quiet);
	CU_ASSERT_EQUAL(r.a.operands.n, 2);
	if (r.a.operands.n == 2) {
		DT_ASSERT_STR(r.a.operands.v[0], "-q");
		DT_ASSERT_STR(r.a.operands.v[1], "--help");
	}
	done(&r);
	PARSE(&r, "-f", "a", "--", "-b.yaml");
	CU_ASSERT_EQUAL(r.a.files.n, 2);
	done(&r);
}

static void test_typed_values(void)
{
	struct run r;

	PARSE(&r, "--max-steps", "1000", "--interval=1m30s", "--let", "x=1", "-o", "table");
	CU_ASSERT_FALSE(r.stop);
	CU_ASSERT_EQUAL(r.a.steps, 1000);
	CU_ASSERT_EQUAL(r.a.interval, 90000000000LL);
	DT_ASSERT_STR(r.a.let_name, "x=1");
	CU_ASSERT_EQUAL(r.a.format, 0);
	done(&r);
	PARSE(&r, "-o", "xml");
	CU_ASSERT_EQUAL(r.code, 2);
	DT_ASSERT_STR(first_err_line(&r),
		      "t cmd: --output: unknown value 'xml' (table, yaml or json)");
	PARSE(&r, "--max-steps=0");
	DT_ASSERT_STR(first_err_line(&r),
		      "t cmd: --max-steps: '0' is not a whole number from 1 to 1000");
	PARSE(&r, "--max-steps=1001");
	CU_ASSERT_EQUAL(r.code, 2);
	PARSE(&r, "--max-steps=-1");
	CU_ASSERT_EQUAL(r.code, 2);
	PARSE(&r, "--max-steps=99999999999999999999999");
	CU_ASSERT_EQUAL(r.code, 2);
	PARSE(&r, "--max-steps=12x");
	CU_ASSERT_EQUAL(r.code, 2);
	PARSE(&r, "--interval=3x");
	CU_ASSERT_EQUAL(r.code, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(first_err_line(&r), "t cmd: --interval: duration '3x'"));
	PARSE(&r, "--interval=0s");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: --interval: must not be 0");
	/* QA-98: a fraction is named as such, not as a unit '.' */
	PARSE(&r, "--interval=1.5h");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: --interval: duration '1.5h': no fractions; "
		      "write whole units (1h30m, 1500ms)");
	PARSE(&r, "--let=x");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: --let: wants NAME=EXPR, got \"x\"");
}

static void test_errors(void)
{
	struct run r;

	PARSE(&r, "--bogus");
	CU_ASSERT_TRUE(r.stop);
	CU_ASSERT_EQUAL(r.code, 2);
	CU_ASSERT_STRING_EQUAL(r.out, "");
	/* the message, the synopsis, where the rest is */
	DT_ASSERT_STR(r.err, "t cmd: unknown option '--bogus'\n"
			     "usage: t cmd -f FILE... [-o FORMAT]\n"
			     "Run 't cmd --help' for the options.\n");
	PARSE(&r, "--outptu=json");
	DT_ASSERT_STR(first_err_line(&r),
		      "t cmd: unknown option '--outptu' (did you mean '--output'?)");
	PARSE(&r, "--hlep");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: unknown option '--hlep' (did you mean '--help'?)");
	PARSE(&r, "-z");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: unknown option '-z'"
		      " (an operand that starts with '-' goes after --)");
	PARSE(&r, "-output", "json");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: unknown option '-output' (did you mean '--output'?)");
	PARSE(&r, "-f", "a", "--node");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: option '--node' needs a value");
	done(&r);                       /* -f's list, made before the error */
	PARSE(&r, "-n");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: option '-n' needs a value");
	PARSE(&r, "-vn");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: option '-n' needs a value");
	/* An operand that looks like a negative number is an option here. */
	PARSE(&r, "-1");
	DT_ASSERT_STR(first_err_line(&r), "t cmd: unknown option '-1'"
		      " (an operand that starts with '-' goes after --)");
}

static void test_required_and_dash_operands(void)
{
	static const struct opt req[] = {
		{ .name = "node", .key = 'n', .type = OPT_STR, .arg = "NODE", .flags = OPT_REQUIRED,
		  .at = OPTS_AT(struct args, node), .help = "the node" },
		{ .name = "interval", .type = OPT_DURATION, .arg = "D", .flags = OPT_REQUIRED,
		  .at = OPTS_AT(struct args, interval), .help = "how often" },
		{ 0 }
	};
	struct opts_cmd c = { .prog = "r", .synopsis = "r -n NODE", .opts = req,
			      .operands = OPTS_AT(struct args, operands), .max_operands = 1,
			      .flags = OPTS_DASH_OPERANDS };
	struct run r;
	const char *a1[] = { "r", "--interval=1s", NULL }, *a2[] = { "r", "-n", "x", NULL };
	const char *a3[] = { "r", "-n", "x", "--interval", "2s", "-(1)", NULL };
	const char *a4[] = { "r", "-n", "x", "--interval", "2s", "-y", NULL };

	parse_into(&c, &r, (char **)a1);
	DT_ASSERT_STR(first_err_line(&r), "r: -n NODE is required");
	parse_into(&c, &r, (char **)a2);
	DT_ASSERT_STR(first_err_line(&r), "r: --interval D is required");
	parse_into(&c, &r, (char **)a3);
	CU_ASSERT_FALSE(r.stop);
	CU_ASSERT_EQUAL(r.a.operands.n, 1);
	if (r.a.operands.n)
		DT_ASSERT_STR(r.a.operands.v[0], "-(1)");
	opts_free(&c, &r.a);
	parse_into(&c, &r, (char **)a4);                     /* a letter after '-' is an option */
	DT_ASSERT_STR(first_err_line(&r), "r: unknown option '-y'"
		      " (an operand that starts with '-' goes after --)");
}

static void test_help(void)
{
	struct run r;

	PARSE(&r, "-f", "a", "--help", "--bogus");
	CU_ASSERT_TRUE(r.stop);
	CU_ASSERT_EQUAL(r.code, 0);
	CU_ASSERT_STRING_EQUAL(r.err, "");
	DT_ASSERT_STR(r.out,
		      "usage: t cmd -f FILE... [-o FORMAT]\n"
		      "\n"
		      "Test command.\n"
		      "\n"
		      "options:\n"
		      "  -f, --filename FILE...  manifests\n"
		      "                          (repeatable)\n"
		      "  -n, --node NODE         the node\n"
		      "  -o, --output FORMAT     format\n"
		      "  -v, --verbose           more\n"
		      "  -q, --quiet             less\n"
		      "      --max-steps N       budget\n"
		      "      --interval D        how often\n"
		      "      --let NAME=EXPR     a variable\n"
		      "  -h, --help              print this help\n"
		      "\n"
		      "Exit codes: 0.\n");
	done(&r);
	PARSE(&r, "-vh");
	CU_ASSERT_EQUAL(r.code, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "usage: t cmd"));
	done(&r);
	PARSE(&r, "--bogus", "--help");            /* what comes first decides */
	CU_ASSERT_EQUAL(r.code, 2);
	PARSE(&r, "--help=x");
	CU_ASSERT_EQUAL(r.code, 2);
}

static void test_dump(void)
{
	struct run r;

	setenv("DRATOPO_OPTS_DUMP", "1", 1);
	/* Values are not checked, required options not asked for. */
	PARSE(&r, "-f", "a", "b", "-vqoxml", "--max-steps=0", "op", "--", "-x");
	unsetenv("DRATOPO_OPTS_DUMP");
	CU_ASSERT_TRUE(r.stop);
	CU_ASSERT_EQUAL(r.code, 0);
	DT_ASSERT_STR(r.out, "--filename=a\n--filename=b\n--verbose\n--quiet\n--output=xml\n"
			     "--max-steps=0\noperand=op\noperand=-x\n");
	CU_ASSERT_EQUAL(r.a.files.n, 0);            /* nothing stored */
	CU_ASSERT_FALSE(r.a.verbose);
	done(&r);
	setenv("DRATOPO_OPTS_DUMP", "1", 1);
	PARSE(&r, "--nope");                        /* grammar errors still are errors */
	unsetenv("DRATOPO_OPTS_DUMP");
	CU_ASSERT_EQUAL(r.code, 2);
}

static void test_long_help_column(void)
{
	static const struct opt wide[] = {
		{ .name = "consumable-capacity-mode", .type = OPT_STR, .arg = "MODE",
		  .at = OPTS_AT(struct args, node), .help = "long one\nsecond line" },
		{ .name = "x", .type = OPT_FLAG, .at = OPTS_AT(struct args, verbose), .help = "x" },
		{ 0 }
	};
	struct opts_cmd c = { .prog = "w", .synopsis = "w", .opts = wide };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *argv[] = { "w", "-z", NULL };
	struct run r;

	/* no operands: an unknown short option is only that */
	parse_into(&c, &r, (char **)argv);
	DT_ASSERT_STR(first_err_line(&r), "w: unknown option '-z'");
	opts_usage(&c, f);
	fclose(f);
	DT_ASSERT_STR(buf, "usage: w\n\noptions:\n"
			   "      --consumable-capacity-mode MODE\n"
			   "              long one\n"
			   "              second line\n"
			   "      --x     x\n"
			   "  -h, --help  print this help\n");
	free(buf);
}

static void test_print_diags(void)
{
	struct dt_diags d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	dt_diags_init(&d);
	dt_diags_add(&d, "a: bad");
	dt_diags_add(&d, "b: bad");
	d.dropped = 7;
	opts_print_diags(f, "dratopo validate", "", "errors", &d);
	opts_print_diags(f, "dratopo plan", "warning: ", "warnings", &d);
	fclose(f);
	DT_ASSERT_STR(buf, "a: bad\nb: bad\ndratopo validate: 7 more errors not shown\n"
			   "warning: a: bad\nwarning: b: bad\ndratopo plan: 7 more warnings not shown\n");
	free(buf);
	/* one: singular */
	buf = NULL;
	f = open_memstream(&buf, &len);
	d.dropped = 1;
	opts_print_diags(f, "dratopo allocate", "", "errors", &d);
	fclose(f);
	DT_ASSERT_STR(buf, "a: bad\nb: bad\ndratopo allocate: 1 more error not shown\n");
	free(buf);
	dt_diags_free(&d);
}

/* OPT_BOOL, client-go's booleans: bare is true, =true and =false, the
 * value never the next argument, the caller's default kept when absent. */
struct bool_args {
	int elect;
	struct opts_list operands;
};

static const struct opt bool_table[] = {
	{ .name = "leader-elect", .key = 'e', .type = OPT_BOOL,
	  .at = OPTS_AT(struct bool_args, elect), .help = "elect" },
	{ 0 }
};

static const struct opts_cmd bool_cmd = {
	.prog = "t bool", .synopsis = "t bool [--leader-elect[=BOOL]]", .opts = bool_table,
	.operands = OPTS_AT(struct bool_args, operands), .max_operands = 1,
};

/* Parse argv into *a (elect preset to -1); the exit code when it stops,
 * else -1. The first line of stderr in err. */
static int parse_bool_args(struct bool_args *a, char **argv, char *err, size_t size)
{
	char *ob = NULL, *eb = NULL;
	size_t ol = 0, el = 0;
	FILE *out = open_memstream(&ob, &ol), *ef = open_memstream(&eb, &el);
	int argc = 0, code = 0;
	bool stop;

	while (argv[argc])
		argc++;
	*a = (struct bool_args){ .elect = -1 };
	stop = opts_parse_to(&bool_cmd, argc, argv, a, &code, out, ef);
	fclose(out);
	fclose(ef);
	snprintf(err, size, "%.*s", (int)strcspn(eb, "\n"), eb);
	if (!strncmp(ob, "usage:", 6) && strstr(ob, "--leader-elect[=BOOL]"))
		snprintf(err, size, "usage shows [=BOOL]");
	free(ob);
	free(eb);
	opts_free(&bool_cmd, a);
	return stop ? code : -1;
}

static void test_booleans(void)
{
	static const struct { const char *argv[4]; int rc, elect; const char *err; } cases[] = {
		{ { "cmd", NULL }, -1, -1, "" },
		{ { "cmd", "--leader-elect" }, -1, 1, "" },
		{ { "cmd", "--leader-elect=true" }, -1, 1, "" },
		{ { "cmd", "--leader-elect=false" }, -1, 0, "" },
		{ { "cmd", "-e" }, -1, 1, "" },
		{ { "cmd", "-e=false" }, -1, 0, "" },
		/* never the next argument: "false" is an operand */
		{ { "cmd", "--leader-elect", "false" }, -1, 1, "" },
		{ { "cmd", "--leader-elect=yes" }, 2, -1,
		  "t bool: --leader-elect: 'yes' is neither true nor false" },
		{ { "cmd", "--leader-elect=" }, 2, -1,
		  "t bool: --leader-elect: '' is neither true nor false" },
		{ { "cmd", "--help" }, 0, -1, "usage shows [=BOOL]" },
	};
	struct bool_args a;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse_bool_args(&a, (char **)cases[i].argv, err, sizeof(err));

		CU_ASSERT_EQUAL(rc, cases[i].rc);
		if (rc < 0)
			CU_ASSERT_EQUAL(a.elect, cases[i].elect);
		DT_ASSERT_STR(err, cases[i].err);
	}
}

DT_SUITE_MAIN("opts",
	      DT_TEST(test_value_forms),
	      DT_TEST(test_flags_and_bundles),
	      DT_TEST(test_lists_and_operands),
	      DT_TEST(test_typed_values),
	      DT_TEST(test_errors),
	      DT_TEST(test_required_and_dash_operands),
	      DT_TEST(test_help),
	      DT_TEST(test_dump),
	      DT_TEST(test_long_help_column),
	      DT_TEST(test_print_diags),
	      DT_TEST(test_booleans))
