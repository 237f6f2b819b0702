/* opts.h - the one command-line grammar of dratopo, dratopo-agent and
 * dratopo-coordinator: every command describes its options in one table
 * (struct opt rows), one parser reads argv against it, and the usage text,
 * the errors and their wording all come from that table.
 *
 * The grammar is GNU's (getopt_long's), with kubectl's -o=json:
 *
 *   --name=VALUE  --name VALUE       a long option's value
 *   -xVALUE  -x VALUE  -x=VALUE      a short option's value
 *   --flag  -x                       flags; short ones bundle (-ab is -a -b,
 *                                    and -abVALUE ends with b's value)
 *   --                               every argument after it is an operand
 *   -                                an operand (standard input, usually)
 *
 * Options and operands mix in any order. An option that takes a value takes
 * the next argument whatever it looks like (-f -o reads a file named -o).
 * Long names are never abbreviated (a script's --sys must not start meaning
 * another option once one is added); a misspelt name is answered with the
 * closest one. -h and --help print the usage on stdout and end the command
 * with exit 0. Every error is a usage error (exit OPTS_EXIT_USAGE, 2), said
 * in one wording and followed on stderr by the command's synopsis and where
 * to find the rest:
 *
 *   dratopo plan: unknown option '--outptu' (did you mean '--output'?)
 *   dratopo plan: option '--output' needs a value
 *   dratopo plan: option '--insecure' takes no value
 *   dratopo plan: --output: unknown value 'xml' (table, yaml or json)
 *   dratopo allocate: --max-steps: 'x' is not a whole number from 1 to 18446744073709551615
 *   dratopo allocate: --node NODE is required
 *   dratopo hwdb list: unexpected argument 'p5' [(hint)]
 *
 * A table is static and describes where each value goes by its offset in
 * the command's own options struct (OPTS_AT), so a command reads its options
 * as plain fields, and adding an option is adding a row:
 *
 *   struct plan_args { struct opts_list files; int format; bool compact; };
 *   static const struct opt plan_opts[] = {
 *	{ .name = "filename", .key = 'f', .type = OPT_LIST, .arg = "FILE",
 *	  .flags = OPT_GREEDY | OPT_REQUIRED, .at = OPTS_AT(struct plan_args, files),
 *	  .help = "manifests (repeatable; FILEs may follow one -f)" },
 *	{ .name = "output", .key = 'o', .type = OPT_CHOICE, .arg = "FORMAT",
 *	  .choices = "table|yaml|json", .at = OPTS_AT(struct plan_args, format),
 *	  .help = "table (default), yaml or json" },
 *	OPTS_COMPACT(struct plan_args, compact),
 *	{ 0 }
 *   };
 *
 * The options' JSON output is one printer's (doc_emit_json): kubectl's
 * four-space indentation everywhere, and every command that prints JSON
 * takes --compact (OPTS_COMPACT) for one line.
 *
 * DRATOPO_OPTS_DUMP=1 in the environment makes a successful parse print
 * what the grammar read, one `--name=VALUE` (or `--flag`) line per option
 * in argv order and one `operand=ARG` line per operand, and end the command
 * with exit 0 before values are checked or anything runs: the walk over
 * every command's option forms (tests/e2e/grammar.sh) reads it. */
#ifndef DT_OPTS_H
#define DT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "err.h"
#include "strbuf.h"

#define OPTS_EXIT_OK    0
#define OPTS_EXIT_FAIL  1
#define OPTS_EXIT_USAGE 2

#define OPTS_AT(type, field) offsetof(type, field)
/* A numeric macro's digits, for a help text: "(default " OPTS_STR(N) ")". */
#define OPTS_STR(x) OPTS_STR_(x)
#define OPTS_STR_(x) #x

enum opt_type {
	OPT_FLAG,       /* bool: set when given */
	OPT_BOOL,       /* int: 1 for --name or --name=true, 0 for --name=false
			 * (kubectl's and client-go's flags: never the next
			 * argument); the caller's default stays when not given */
	OPT_STR,        /* const char *: the value (the last one given wins) */
	OPT_LIST,       /* struct opts_list: every value given, in order */
	OPT_CHOICE,     /* int: the value's index in .choices ("table|yaml|json") */
	OPT_UINT,       /* uint64_t: a whole number from .min to .max (max 0: no bound) */
	OPT_DURATION,   /* int64_t nanoseconds: "30s", "2m", "1h30m" (duration.h), not 0 */
	OPT_FUNC,       /* .set(dst, value, err) converts and stores it */
};

enum opt_flags {
	OPT_REQUIRED = 1u << 0, /* the command cannot run without it */
	OPT_GREEDY   = 1u << 1, /* OPT_LIST: the operands that follow belong to it,
				 * up to the next option (-f a.yaml b.yaml) */
};

/* The values of an OPT_LIST option or a command's operands: pointers into
 * argv, v[0..n). Freed by opts_free. */
struct opts_list {
	const char **v;
	size_t n, cap;
};

struct opt {
	const char *name;       /* long name without "--"; NULL ends the table */
	char key;               /* short letter, 0: none */
	enum opt_type type;
	size_t at;              /* the value's offset in the options struct (OPTS_AT) */
	const char *arg;        /* the value's name in the usage ("FILE"); flags: NULL */
	const char *help;       /* usage text; each '\n' starts an aligned line */
	const char *choices;    /* OPT_CHOICE: the values, '|'-separated */
	uint64_t min, max;      /* OPT_UINT */
	unsigned flags;         /* enum opt_flags */
	/* OPT_FUNC: store value into the options struct; 0, or a negative
	 * code with err saying why (reported as "PROG: --name: MESSAGE"). */
	int (*set)(void *dst, const char *value, struct dt_err *err);
};

/* --compact, the same row in every command that prints JSON. */
#define OPTS_COMPACT(T, f)                                                      \
	{ .name = "compact", .type = OPT_FLAG, .at = OPTS_AT(T, f),             \
	  .help = "print JSON on one line (with JSON output)" }

enum opts_cmd_flags {
	/* An argument that starts with '-' and then neither a letter nor
	 * another '-' is an operand, not an option: cel eval's -1, -(x). */
	OPTS_DASH_OPERANDS = 1u << 0,
};

struct opts_cmd {
	const char *prog;       /* "dratopo plan": every message's prefix */
	/* What follows "usage: "; lines after the first start with spaces
	 * of their own. */
	const char *synopsis;
	const char *about;      /* the paragraph(s) under the synopsis, or NULL */
	const struct opt *opts; /* the table, ended by a row without a name */
	const char *epilog;     /* after the options (notes, exit codes), or NULL */
	/* Operands: at most max_operands (0: none accepted) into the
	 * struct opts_list at offset operands; operand_hint ends the
	 * message about one too many ("manifests follow -f"). */
	size_t operands;
	size_t max_operands;
	const char *operand_hint;
	unsigned flags;         /* enum opts_cmd_flags */
};

/* Parse argv[1..argc) (argv[0] is the command's name) into dst, the
 * command's options struct, which the caller zeroed or filled with
 * defaults. Returns false when the command should go on, true when it must
 * end now with exit code *code: after --help (0, the usage on stdout), the
 * DRATOPO_OPTS_DUMP dump (0), or a usage error (2, said on stderr). Either
 * way release dst's lists with opts_free. Out of memory is exit 1. */
bool opts_parse(const struct opts_cmd *c, int argc, char **argv, void *dst, int *code);
/* The same, writing to out and err instead of stdout and stderr. */
bool opts_parse_to(const struct opts_cmd *c, int argc, char **argv, void *dst, int *code,
		   FILE *out, FILE *err);
/* Free the lists (OPT_LIST rows and the operands) opts_parse filled. */
void opts_free(const struct opts_cmd *c, void *dst);

/* The whole usage (synopsis, about, options, epilog). */
void opts_usage(const struct opts_cmd *c, FILE *f);
/* A usage error found after parsing: "PROG: MESSAGE", the synopsis and
 * the pointer to --help, on stderr. Returns OPTS_EXIT_USAGE. */
int opts_usage_error(const struct opts_cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- programs of subcommands ---- */

struct opts_sub {
	const char *name;
	int (*run)(int argc, char **argv);      /* argv[0] is the name */
	const char *summary;                    /* one line for the list */
};

struct opts_prog {
	const char *prog;       /* "dratopo", "dratopo hwdb" */
	const char *about;      /* the line(s) under the synopsis */
	const struct opts_sub *subs;
	size_t n_subs;
	const char *version;    /* --version prints "PROG VERSION"; NULL: none */
	const char *epilog;     /* after the list, or NULL */
};

/* Run the subcommand argv[1] names with argv + 1. No argument, or an
 * unknown one ("PROG: unknown command 'x' (did you mean 'y'?)"): the
 * list on stderr, exit 2; -h, --help, help: the list on stdout, exit 0. */
int opts_dispatch(const struct opts_prog *p, int argc, char **argv);
void opts_prog_usage(const struct opts_prog *p, FILE *f);

/* ---- what every command says the same way ---- */

/* Each message of d on its own line on f, after prefix ("", "warning: "),
 * then, when some were not kept, "PROG: N more WHAT not shown (the first
 * DT_DIAG_MAX are)". what is the plural noun: "errors", "warnings". */
void opts_print_diags(FILE *f, const char *prog, const char *prefix, const char *what,
		      const struct dt_diags *d);
/* sb on stdout. OPTS_EXIT_OK, or OPTS_EXIT_FAIL after "PROG: out of
 * memory" (sb lost an append) or "PROG: cannot write the output: ..."
 * on stderr. */
int opts_write_out(const char *prog, const struct strbuf *sb);

#endif
