/* cel_ast.h - the CEL module's internals: arena, tokens, syntax tree,
 * checker types, compiled overloads, environments and programs. Shared by
 * common/cel_*.c only; nothing outside the module includes it. */
#ifndef DT_CEL_AST_H
#define DT_CEL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cel_env.h"
#include "cel_lib.h"
#include "cel_value.h"
#include "err.h"
#include "escape.h"

/* ---- arena (cel_value.c) ---- */

struct cel_arena_block;

/* Bump allocator. Starts in `first` (often a stack buffer), then chains heap
 * blocks; `limit` bounds the total so input cannot exhaust memory. */
struct cel_arena {
	char *cur, *end;
	char *first;
	size_t first_size;
	struct cel_arena_block *blocks;   /* heap blocks, newest first */
	size_t total;                     /* bytes handed out */
	size_t limit;
};

void cel_arena_init(struct cel_arena *a, void *first, size_t first_size, size_t limit);
void *cel_arena_alloc(struct cel_arena *a, size_t n);
char *cel_arena_strdup(struct cel_arena *a, const char *s, size_t len);
/* Free the heap blocks and start over in `first`. */
void cel_arena_reset(struct cel_arena *a);
void cel_arena_release(struct cel_arena *a);

/* ---- checker types (cel_check.c) ---- */

enum cel_tkind {
	CT_DYN, CT_NULL, CT_BOOL, CT_INT, CT_UINT, CT_DOUBLE, CT_STRING, CT_BYTES,
	CT_LIST, CT_MAP, CT_TYPE, CT_TIMESTAMP, CT_DURATION, CT_OPTIONAL, CT_OBJECT,
	CT_PARAM, CT_ERROR,
};

struct cel_ctype {
	uint8_t kind;
	const char *name;                        /* PARAM, OBJECT */
	const struct cel_ctype *p[2];            /* LIST, MAP, TYPE, OPTIONAL */
	const struct cel_object_type *obj;       /* OBJECT */
};

extern const struct cel_ctype cel_t_dyn, cel_t_null, cel_t_bool, cel_t_int, cel_t_uint,
	cel_t_double, cel_t_string, cel_t_bytes, cel_t_timestamp, cel_t_duration, cel_t_error;

/* ---- compiled overloads and environments (cel_env.c) ---- */

#define CEL_MAX_PARAMS 8
#define CEL_RT_ANY 0xff

struct cel_ovl {
	const struct cel_overload *decl;
	const struct cel_ctype *params[CEL_MAX_PARAMS];
	const struct cel_ctype *result;
	uint8_t nparams;
	uint8_t rt_kind[CEL_MAX_PARAMS];         /* runtime dispatch: kind or ANY */
	/* list(T) with a concrete T: the kind (or ANY) its first element must
	 * have, as cel-go's runtime check of list arguments reads it. */
	uint8_t rt_elem[CEL_MAX_PARAMS];
	const struct cel_object_type *rt_obj[CEL_MAX_PARAMS];
};

struct cel_fn_group {                      /* overloads sharing a name */
	const char *name;
	struct cel_ovl **ovls;                   /* each allocated in the env pool */
	size_t n, cap;
};

struct cel_var_decl {
	const char *name;
	const struct cel_ctype *type;
};

struct cel_env {
	enum cel_env_kind kind;
	struct cel_arena pool;                   /* types, overload tables */
	struct cel_fn_group *fns;                /* sorted by name */
	size_t n_fns, cap_fns;
	struct cel_var_decl *vars;
	size_t n_vars, cap_vars;
	const struct cel_library *libs[32];
	size_t n_libs;
	const struct cel_object_type *types[32];
	size_t n_types;
	const char *container;
	bool checking, macros, frozen;
	bool result_bool;                        /* result must be bool or dyn */
	bool homogeneous;                        /* aggregate literals of one type */
	bool literal_checks;                     /* duration/timestamp/matches literals */
};

const struct cel_fn_group *cel_env_find_fn(const struct cel_env *env, const char *name);
const struct cel_object_type *cel_env_find_type(const struct cel_env *env, const char *name);
/* Parse a type expression into env->pool (or the given pool). */
const struct cel_ctype *cel_type_parse(const struct cel_env *env, struct cel_arena *pool,
				       const char *s, struct dt_err *err);
void cel_type_print(struct strbuf *sb, const struct cel_ctype *t);

/* ---- tokens and syntax tree (cel_lex.c, cel_parse.c) ---- */

enum cel_tok {
	TK_EOF, TK_ERROR, TK_IDENT, TK_INT, TK_UINT, TK_DOUBLE, TK_STRING, TK_BYTES,
	TK_TRUE, TK_FALSE, TK_NULL, TK_IN, TK_RESERVED,
	TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LBRACE, TK_RBRACE,
	TK_DOT, TK_COMMA, TK_COLON, TK_QUESTION, TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH,
	TK_PERCENT, TK_NOT, TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_AND, TK_OR,
};

struct cel_token {
	enum cel_tok kind;
	uint32_t pos;                            /* byte offset */
	uint32_t len;
	union {
		int64_t i;                       /* INT (magnitude may be 2^63: see neg) */
		uint64_t u;
		double d;
		struct { char *s; size_t len; } str;
	} v;
	bool quoted;                             /* `quoted identifier` */
};

struct cel_lexer {
	const char *src;
	size_t len;
	size_t pos;
	struct cel_arena *pool;
	char errmsg[256];
	uint32_t errpos;
};

void cel_lex_init(struct cel_lexer *lx, const char *src, size_t len, struct cel_arena *pool);
/* The next token; TK_ERROR with lx->errmsg on a bad token. */
struct cel_token cel_lex_next(struct cel_lexer *lx);

enum cel_nkind {
	N_CONST, N_IDENT, N_SELECT, N_CALL, N_LIST, N_MAP, N_STRUCT, N_COMP,
	N_DEVICE_ITEM,      /* device.attributes["d"].id / device.capacity[...][...] */
	N_DEVICE_CMP,       /* a device item compared with a constant (cel_device_eval.c) */
};

/* The comparison of an N_DEVICE_CMP. */
enum cel_cmp_op { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };

/* Calls the evaluator treats specially (laziness, error absorption). */
enum cel_special {
	SP_NONE, SP_AND, SP_OR, SP_COND, SP_NOT_STRICTLY_FALSE, SP_INDEX, SP_OPT_INDEX,
	SP_OPT_SELECT, SP_OR_VALUE, SP_OPT_OR,
	SP_APPEND,          /* comprehension accumulator: list append in place */
	SP_MAP_INSERT,      /* comprehension accumulator: map insert in place */
	SP_DYN, SP_TYPE,
};

enum cel_scope { SCOPE_UNRESOLVED, SCOPE_GLOBAL, SCOPE_LOCAL, SCOPE_TYPE, SCOPE_FN_NAME };

struct cel_node {
	uint8_t kind;                            /* enum cel_nkind */
	uint32_t pos;                            /* byte offset of the token */
	const struct cel_ctype *type;            /* checked type (dyn when unchecked) */
	union {
		struct cel_value lit;                        /* N_CONST */
		struct {
			const char *name;
			int slot;
			uint8_t scope;
		} ident;
		struct {
			struct cel_node *operand;
			const char *field;
			bool test_only;                      /* has() */
			bool optional;                       /* .? */
		} sel;
		struct {
			const char *fn;
			struct cel_node *target;             /* member receiver */
			struct cel_node **args;
			uint32_t nargs;
			uint8_t special;
			const struct cel_ovl **cands;        /* after checking */
			uint32_t ncands;
			const struct cel_fn_group *group;    /* unchecked dispatch */
		} call;
		struct {
			struct cel_node **elems;
			bool *optional;                      /* ?elem */
			uint32_t n;
		} list;
		struct {
			struct cel_node **keys, **vals;
			bool *optional;
			uint32_t n;
		} map;
		struct {
			const char *type_name;
			const char **fields;
			struct cel_node **vals;
			uint32_t n;
		} strct;
		struct {                     /* N_DEVICE_ITEM (cel_device_eval.c) */
			int slot;                    /* the device variable */
			bool capacity;
			const char *domain, *id;
			/* cel_intern's copies (NULL: not interned), compared by
			 * pointer with an interned device's names */
			const char *idomain, *iid;
			/* Where the last device had it: devices built alike
			 * find it at once. Read and written with relaxed
			 * atomics, the one thing evaluation writes into a
			 * program (a stale hint costs a scan, nothing else). */
			uint32_t hint;
		} dev;
		struct {                     /* N_DEVICE_CMP (cel_device_eval.c) */
			/* ITEM op K, or ITEM.compareTo(K) op K2 (compare_to): */
			const struct cel_node *item;         /* an N_DEVICE_ITEM */
			const struct cel_node *call;         /* compareTo's call node */
			const struct cel_node *generic;      /* the tree as checked */
			struct cel_value k, k2;
			uint64_t kcost;                      /* ceil(0.1 x len) of a string K */
			uint8_t op;                          /* enum cel_cmp_op, ITEM on the left */
			bool compare_to;
		} dcmp;
		struct {
			const char *iter_var, *iter_var2, *accu_var;
			int iter_slot, iter2_slot, accu_slot;
			struct cel_node *range, *init, *cond, *step, *result;
		} comp;
	} u;
};

/* The accumulator of the macros' comprehensions (cel-go's). */
#define CEL_ACCU_VAR "@result"

/* Recursion and size guards. */
#define CEL_MAX_DEPTH 250
#define CEL_MAX_NODES 100000
#define CEL_MAX_TREE_DEPTH 1000                 /* height of the tree */

struct cel_ast {
	struct cel_node *root;
	uint32_t n_nodes;
	int n_locals;                            /* comprehension slots */
};

/* Parse into pool. On error fills err with the cel-go style message. */
int cel_parse(const char *src, size_t len, bool macros, struct cel_arena *pool,
	      struct cel_ast *out, struct dt_err *err);

/* Format "ERROR: <input>:L:C: msg\n | line\n | ...^" into err. */
int cel_report(struct dt_err *err, int code, const char *src, size_t len, uint32_t pos,
	       const char *fmt, ...) __attribute__((format(printf, 6, 7)));

struct cel_node *cel_node_new(struct cel_arena *pool, enum cel_nkind kind, uint32_t pos);

/* ---- checker (cel_check.c) ---- */

int cel_check(const struct cel_env *env, const char *src, size_t len,
	      struct cel_arena *pool, struct cel_ast *ast, struct dt_err *err);

/* ---- programs and evaluation (cel_eval.c, cel_cost.c) ---- */

struct cel_program {
	const struct cel_env *env;
	struct cel_arena pool;                   /* owns the tree and its strings */
	struct cel_ast ast;
	size_t n_vars;
	uint64_t est_cost;
	bool result_bool;
	char *src;
	size_t src_len;
};

#define CEL_EVAL_ARENA_LIMIT (64u << 20)        /* size guard on intermediates */
#define CEL_MAX_STRING (16u << 20)
#define CEL_MAX_LIST (1u << 20)

struct cel_ctx {
	struct cel_arena *arena;
	const struct cel_program *prog;
	const struct cel_value *vars;
	size_t n_vars;
	struct cel_value *locals;
	uint64_t cost, cost_limit;
	bool cancelled;                          /* cost limit hit */
	bool oom;
};

struct cel_value cel_eval_node(struct cel_ctx *ctx, const struct cel_node *n);

/* Charge n cost units; false once the limit is passed. */
static inline bool cel_charge(struct cel_ctx *ctx, uint64_t n)
{
	ctx->cost += n;
	if (ctx->cost > ctx->cost_limit)
		ctx->cancelled = true;
	return !ctx->cancelled;
}

/* Device selector shapes resolved at compile time (cel_device_eval.c):
 * rewrite n in place when it is one, evaluate the rewritten nodes. */
void cel_match_device_item(struct cel_node *n);
void cel_match_device_cmp(struct cel_arena *pool, struct cel_node *n);
struct cel_value cel_eval_device_item(struct cel_ctx *ctx, const struct cel_node *n);
/* An attribute of the device view as a CEL value (lists: of the element type). */
struct cel_value cel_device_attr_value(const struct cel_device_attr *a);
struct cel_value cel_eval_device_cmp(struct cel_ctx *ctx, const struct cel_node *n);
/* The overload of a call's candidates that takes args at run time, or NULL. */
const struct cel_ovl *cel_find_ovl(const struct cel_node *call, const struct cel_value *args,
				   size_t nargs);
/* Call o, charging its cost. */
struct cel_value cel_call_ovl(struct cel_ctx *ctx, const struct cel_ovl *o,
			      const struct cel_value *args, size_t nargs);
/* Call an overload chosen at run time among the candidates. */
struct cel_value cel_dispatch(struct cel_ctx *ctx, const struct cel_node *call,
			      const struct cel_value *args, size_t nargs);

uint64_t cel_value_size(const struct cel_value *v);
/* Replace constant subtrees by their values (after checking). */
void cel_fold_constants(struct cel_program *p);
uint64_t cel_estimate_cost(const struct cel_program *p);

/* Time helpers (cel_time.c). */
struct cel_value cel_timestamp_parse(struct cel_ctx *ctx, const char *s, size_t len);
struct cel_value cel_duration_parse(struct cel_ctx *ctx, const char *s, size_t len);
void cel_timestamp_format(struct strbuf *sb, int64_t sec, int32_t nsec);
void cel_duration_format(struct strbuf *sb, int64_t sec, int32_t nsec);

/* Printing a double the shortest way that reads back (cel_print.c). */
void cel_print_double(struct strbuf *sb, double d);
/* A string or bytes literal as CEL writes it: b"..." for bytes, \n \r \t
 * by name, other controls and DEL (and, in bytes, everything past ASCII)
 * as \xHH. Inline, so that values (cel_value.c) quote without linking the
 * printer, which prints them. */
static inline void cel_print_string(struct strbuf *sb, const char *s, size_t len, bool bytes)
{
	if (bytes)
		sb_putc(sb, 'b');
	sb_quote(sb, s, len, SB_QUOTE_NAMED | SB_QUOTE_DEL | (bytes ? SB_QUOTE_ASCII : 0));
}

#endif
