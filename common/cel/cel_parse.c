/* cel_parse.c - the CEL parser: recursive descent over the cel-spec grammar,
 * building the syntax tree in the compile pool and expanding the macros
 * (has, all, exists, exists_one, map, filter, cel.bind, the two-variable
 * comprehensions, optMap, optFlatMap) into comprehension nodes as cel-go
 * does. Recursion depth and node count are bounded. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "strbuf.h"
#include "utf8.h"

struct parser {
	struct cel_lexer lx;
	struct cel_token tok;          /* current token */
	struct cel_token next;         /* one token of lookahead */
	bool have_next;
	struct cel_arena *pool;
	const char *src;
	size_t len;
	int depth;
	uint32_t nodes;
	bool macros;
	bool failed;
	struct dt_err *err;
};

#define ACCU CEL_ACCU_VAR

int cel_report(struct dt_err *err, int code, const char *src, size_t len, uint32_t pos,
	       const char *fmt, ...)
{
	char msg[512];
	struct strbuf sb = STRBUF_INIT;
	size_t line_start = 0, line_end, col = 1;
	unsigned line = 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pos > len)
		pos = (uint32_t)len;
	for (size_t i = 0; i < pos; i++)
		if (src[i] == '\n') {
			line++;
			line_start = i + 1;
		}
	col += utf8_count(src + line_start, pos - line_start);
	line_end = line_start;
	while (line_end < len && src[line_end] != '\n')
		line_end++;
	sb_printf(&sb, "ERROR: <input>:%u:%zu: %s\n | ", line, col, msg);
	sb_append(&sb, src + line_start, line_end - line_start);
	sb_puts(&sb, "\n | ");
	for (size_t i = 1; i < col; i++)
		sb_putc(&sb, '.');
	sb_putc(&sb, '^');
	dt_err_set(err, code, "%s", sb_error(&sb) ? msg : sb_str(&sb));
	sb_free(&sb);
	return err ? err->code : (code > 0 ? -code : code);
}

static void perr(struct parser *p, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void perr(struct parser *p, uint32_t pos, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (p->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->failed = true;
	cel_report(p->err, -EINVAL, p->src, p->len, pos, "%s", msg);
}

struct cel_node *cel_node_new(struct cel_arena *pool, enum cel_nkind kind, uint32_t pos)
{
	struct cel_node *n = cel_arena_alloc(pool, sizeof(*n));

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->kind = (uint8_t)kind;
	n->pos = pos;
	n->type = &cel_t_dyn;
	return n;
}

static struct cel_node *node(struct parser *p, enum cel_nkind kind, uint32_t pos)
{
	struct cel_node *n;

	if (p->failed)
		return NULL;
	if (++p->nodes > CEL_MAX_NODES) {
		perr(p, pos, "expression too large: more than %d nodes", CEL_MAX_NODES);
		return NULL;
	}
	n = cel_node_new(p->pool, kind, pos);
	if (!n)
		perr(p, pos, "out of memory");
	return n;
}

static void advance(struct parser *p)
{
	if (p->have_next) {
		p->tok = p->next;
		p->have_next = false;
	} else {
		p->tok = cel_lex_next(&p->lx);
	}
	if (p->tok.kind == TK_ERROR)
		perr(p, p->lx.errpos, "%s", p->lx.errmsg);
}

static const char *tok_text(struct parser *p, const struct cel_token *t, char *buf, size_t n)
{
	if (t->kind == TK_EOF)
		return "<EOF>";
	snprintf(buf, n, "%.*s", (int)(t->len > 40 ? 40 : t->len), p->src + t->pos);
	return buf;
}

static void unexpected(struct parser *p, const char *what)
{
	char b[64];

	perr(p, p->tok.pos, "Syntax error: mismatched input '%s' expecting %s",
	     tok_text(p, &p->tok, b, sizeof(b)), what);
}

static bool expect(struct parser *p, enum cel_tok k, const char *what)
{
	if (p->failed)
		return false;
	if (p->tok.kind != k) {
		unexpected(p, what);
		return false;
	}
	advance(p);
	return !p->failed;
}

static struct cel_node *call_node(struct parser *p, uint32_t pos, const char *fn,
				  struct cel_node *target, uint32_t nargs, ...)
{
	struct cel_node *n = node(p, N_CALL, pos);
	va_list ap;

	if (!n)
		return NULL;
	n->u.call.fn = fn;
	n->u.call.target = target;
	n->u.call.nargs = nargs;
	n->u.call.args = cel_arena_alloc(p->pool, sizeof(struct cel_node *) * (nargs ? nargs : 1));
	if (!n->u.call.args) {
		perr(p, pos, "out of memory");
		return NULL;
	}
	va_start(ap, nargs);
	for (uint32_t i = 0; i < nargs; i++) {
		n->u.call.args[i] = va_arg(ap, struct cel_node *);
		if (!n->u.call.args[i])
			n = NULL;
	}
	va_end(ap);
	return n;
}

static struct cel_node *ident_node(struct parser *p, uint32_t pos, const char *name)
{
	struct cel_node *n = node(p, N_IDENT, pos);

	if (n)
		n->u.ident.name = name;
	return n;
}

static struct cel_node *const_node(struct parser *p, uint32_t pos, struct cel_value v)
{
	struct cel_node *n = node(p, N_CONST, pos);

	if (n)
		n->u.lit = v;
	return n;
}

static struct cel_node *empty_list(struct parser *p, uint32_t pos)
{
	return node(p, N_LIST, pos);
}

static struct cel_node *parse_expr(struct parser *p);

/* ---- macros ---- */

static const char *simple_name(struct parser *p, struct cel_node *arg)
{
	if (!arg)
		return NULL;
	if (arg->kind != N_IDENT) {
		perr(p, arg->pos, "argument must be a simple name");
		return NULL;
	}
	return arg->u.ident.name;
}

static struct cel_node *comprehension(struct parser *p, uint32_t pos, const char *iv,
				      const char *iv2, struct cel_node *range,
				      const char *accu, struct cel_node *init,
				      struct cel_node *cond, struct cel_node *step,
				      struct cel_node *result)
{
	struct cel_node *n;

	if (!range || !init || !cond || !step || !result)
		return NULL;
	n = node(p, N_COMP, pos);
	if (!n)
		return NULL;
	n->u.comp.iter_var = iv;
	n->u.comp.iter_var2 = iv2;
	n->u.comp.accu_var = accu;
	n->u.comp.range = range;
	n->u.comp.init = init;
	n->u.comp.cond = cond;
	n->u.comp.step = step;
	n->u.comp.result = result;
	return n;
}

static struct cel_node *accu_ref(struct parser *p, uint32_t pos)
{
	return ident_node(p, pos, ACCU);
}

/* all / exists / exists_one with one or two iteration variables. */
static struct cel_node *quantifier(struct parser *p, uint32_t pos, const char *kind,
				   struct cel_node *target, struct cel_node **a, uint32_t na)
{
	const char *iv = simple_name(p, a[0]);
	const char *iv2 = na == 3 ? simple_name(p, a[1]) : NULL;
	struct cel_node *pred = a[na - 1];
	struct cel_node *init, *cond, *step, *result;

	if (!iv || (na == 3 && !iv2))
		return NULL;
	if (iv2 && !strcmp(iv, iv2)) {
		perr(p, a[1]->pos, "duplicate variable name: %s", iv);
		return NULL;
	}
	if (!strcmp(iv, ACCU) || (iv2 && !strcmp(iv2, ACCU))) {
		perr(p, a[0]->pos, "iteration variable overwrites accumulator variable");
		return NULL;
	}
	if (!strcmp(kind, "all")) {
		init = const_node(p, pos, cel_bool(true));
		cond = call_node(p, pos, "@not_strictly_false", NULL, 1, accu_ref(p, pos));
		step = call_node(p, pos, "_&&_", NULL, 2, accu_ref(p, pos), pred);
		result = accu_ref(p, pos);
	} else if (!strcmp(kind, "exists")) {
		init = const_node(p, pos, cel_bool(false));
		cond = call_node(p, pos, "@not_strictly_false", NULL, 1,
				 call_node(p, pos, "!_", NULL, 1, accu_ref(p, pos)));
		step = call_node(p, pos, "_||_", NULL, 2, accu_ref(p, pos), pred);
		result = accu_ref(p, pos);
	} else {
		init = const_node(p, pos, cel_int(0));
		cond = const_node(p, pos, cel_bool(true));
		step = call_node(p, pos, "_?_:_", NULL, 3, pred,
				 call_node(p, pos, "_+_", NULL, 2, accu_ref(p, pos),
					   const_node(p, pos, cel_int(1))),
				 accu_ref(p, pos));
		result = call_node(p, pos, "_==_", NULL, 2, accu_ref(p, pos),
				   const_node(p, pos, cel_int(1)));
	}
	return comprehension(p, pos, iv, iv2, target, ACCU, init, cond, step, result);
}

/* map / filter / transformList / transformMap / transformMapEntry. */
static struct cel_node *transform(struct parser *p, uint32_t pos, const char *kind,
				  struct cel_node *target, struct cel_node **a, uint32_t na)
{
	bool two = strcmp(kind, "map") && strcmp(kind, "filter");
	const char *iv = simple_name(p, a[0]);
	const char *iv2 = two ? simple_name(p, a[1]) : NULL;
	uint32_t first = two ? 2 : 1;
	struct cel_node *filter = NULL, *val, *step, *init;

	if (!iv || (two && !iv2))
		return NULL;
	if (iv2 && !strcmp(iv, iv2)) {
		perr(p, a[1]->pos, "duplicate variable name: %s", iv);
		return NULL;
	}
	if (!strcmp(kind, "filter")) {
		filter = a[1];
		val = ident_node(p, a[0]->pos, iv);
	} else {
		if (na - first == 2)
			filter = a[first];
		val = a[na - 1];
	}
	if (!strcmp(kind, "transformMap") || !strcmp(kind, "transformMapEntry")) {
		init = node(p, N_MAP, pos);
		if (!strcmp(kind, "transformMap"))
			step = call_node(p, pos, "@map_insert", NULL, 3, accu_ref(p, pos),
					 ident_node(p, pos, iv), val);
		else
			step = call_node(p, pos, "@map_insert", NULL, 2, accu_ref(p, pos), val);
	} else {
		init = empty_list(p, pos);
		step = call_node(p, pos, "@append", NULL, 2, accu_ref(p, pos), val);
	}
	if (filter)
		step = call_node(p, pos, "_?_:_", NULL, 3, filter, step, accu_ref(p, pos));
	return comprehension(p, pos, iv, iv2, target, ACCU, init,
			     const_node(p, pos, cel_bool(true)), step, accu_ref(p, pos));
}

/* Expand a macro call if name/arity is one; *handled tells whether it was. */
static struct cel_node *expand_macro(struct parser *p, uint32_t pos, const char *name,
				     struct cel_node *target, struct cel_node **a, uint32_t na,
				     bool *handled)
{
	*handled = true;
	if (!target) {
		if (!strcmp(name, "has") && na == 1) {
			if (!a[0] || a[0]->kind != N_SELECT || a[0]->u.sel.optional) {
				perr(p, a[0] ? a[0]->pos : pos, "invalid argument to has() macro");
				return NULL;
			}
			a[0]->u.sel.test_only = true;
			return a[0];
		}
		*handled = false;
		return NULL;
	}
	if ((!strcmp(name, "all") || !strcmp(name, "exists") || !strcmp(name, "exists_one")) &&
	    (na == 2 || na == 3))
		return quantifier(p, pos, name, target, a, na);
	if (!strcmp(name, "existsOne") && (na == 2 || na == 3))
		return quantifier(p, pos, "exists_one", target, a, na);
	if (!strcmp(name, "map") && (na == 2 || na == 3))
		return transform(p, pos, "map", target, a, na);
	if (!strcmp(name, "filter") && na == 2)
		return transform(p, pos, "filter", target, a, na);
	if ((!strcmp(name, "transformList") || !strcmp(name, "transformMap") ||
	     !strcmp(name, "transformMapEntry")) && (na == 3 || na == 4))
		return transform(p, pos, name, target, a, na);
	if (!strcmp(name, "bind") && na == 3 && target->kind == N_IDENT &&
	    !strcmp(target->u.ident.name, "cel")) {
		const char *v = simple_name(p, a[0]);

		if (!v)
			return NULL;
		return comprehension(p, pos, "#unused", NULL, empty_list(p, pos), v, a[1],
				     const_node(p, pos, cel_bool(false)), ident_node(p, pos, v),
				     a[2]);
	}
	if (!strcmp(name, "sortBy") && na == 2) {
		/* ext.Lists: cel.bind(@in, target,
		 *   @in.@sortByAssociatedKeys(@in.map(v, key))); the lists
		 * library implements @sortByAssociatedKeys. */
		static const char in[] = "@__sortBy_input__";
		const char *v = simple_name(p, a[0]);
		struct cel_node *keys, *marg[2];

		if (!v)
			return NULL;
		marg[0] = a[0];
		marg[1] = a[1];
		keys = transform(p, pos, "map", ident_node(p, pos, in), marg, 2);
		return comprehension(p, pos, "#unused", NULL, empty_list(p, pos), in, target,
				     const_node(p, pos, cel_bool(false)), ident_node(p, pos, in),
				     call_node(p, pos, "@sortByAssociatedKeys",
					       ident_node(p, pos, in), 1, keys));
	}
	if ((!strcmp(name, "optMap") || !strcmp(name, "optFlatMap")) && na == 2) {
		const char *v = simple_name(p, a[0]);
		struct cel_node *bound, *some;

		if (!v)
			return NULL;
		bound = comprehension(p, pos, "#unused", NULL, empty_list(p, pos), v,
				      call_node(p, pos, "value", target, 0),
				      const_node(p, pos, cel_bool(false)), ident_node(p, pos, v),
				      a[1]);
		some = !strcmp(name, "optMap") ?
			call_node(p, pos, "optional.of", NULL, 1, bound) : bound;
		return call_node(p, pos, "_?_:_", NULL, 3, call_node(p, pos, "hasValue", target, 0),
				 some, call_node(p, pos, "optional.none", NULL, 0));
	}
	*handled = false;
	return NULL;
}

/* ---- grammar ---- */

/* Argument list after '(' up to and including ')'. */
static bool parse_args(struct parser *p, struct cel_node ***out, uint32_t *n)
{
	struct cel_node **a = NULL;
	uint32_t cnt = 0, cap = 0;

	advance(p);      /* ( */
	while (!p->failed && p->tok.kind != TK_RPAREN) {
		struct cel_node *e = parse_expr(p);

		if (!e)
			return false;
		if (cnt == cap) {
			struct cel_node **na;

			cap = cap ? cap * 2 : 4;
			na = cel_arena_alloc(p->pool, cap * sizeof(*na));
			if (!na) {
				perr(p, p->tok.pos, "out of memory");
				return false;
			}
			if (cnt)
				memcpy(na, a, cnt * sizeof(*na));
			a = na;
		}
		a[cnt++] = e;
		if (p->tok.kind == TK_COMMA) {
			advance(p);
			continue;
		}
		if (p->tok.kind != TK_RPAREN) {
			unexpected(p, "{')', ','}");
			return false;
		}
	}
	if (!expect(p, TK_RPAREN, "')'"))
		return false;
	*out = a;
	*n = cnt;
	return true;
}

static struct cel_node *make_call(struct parser *p, uint32_t pos, const char *name,
				  struct cel_node *target, struct cel_node **a, uint32_t na)
{
	struct cel_node *n;

	if (p->macros) {
		bool handled;

		n = expand_macro(p, pos, name, target, a, na, &handled);
		if (handled || p->failed)
			return n;
	}
	n = node(p, N_CALL, pos);
	if (!n)
		return NULL;
	n->u.call.fn = name;
	n->u.call.target = target;
	n->u.call.args = a;
	n->u.call.nargs = na;
	return n;
}

static bool grow(struct parser *p, void **arr, uint32_t cnt, uint32_t *cap, size_t elem)
{
	void *na;

	if (cnt < *cap)
		return true;
	*cap = *cap ? *cap * 2 : 4;
	na = cel_arena_alloc(p->pool, *cap * elem);
	if (!na) {
		perr(p, p->tok.pos, "out of memory");
		return false;
	}
	if (cnt)
		memcpy(na, *arr, cnt * elem);
	*arr = na;
	return true;
}

static struct cel_node *parse_list(struct parser *p)
{
	struct cel_node *n = node(p, N_LIST, p->tok.pos);
	uint32_t cap = 0, cap2 = 0;

	if (!n)
		return NULL;
	advance(p);
	while (!p->failed && p->tok.kind != TK_RBRACKET) {
		bool opt = false;
		struct cel_node *e;

		if (p->tok.kind == TK_QUESTION) {
			opt = true;
			advance(p);
		}
		e = parse_expr(p);
		if (!e)
			return NULL;
		if (!grow(p, (void **)&n->u.list.elems, n->u.list.n, &cap, sizeof(*n->u.list.elems)) ||
		    !grow(p, (void **)&n->u.list.optional, n->u.list.n, &cap2, sizeof(bool)))
			return NULL;
		n->u.list.optional[n->u.list.n] = opt;
		n->u.list.elems[n->u.list.n++] = e;
		if (p->tok.kind == TK_COMMA) {
			advance(p);
			continue;
		}
		if (p->tok.kind != TK_RBRACKET) {
			unexpected(p, "{']', ','}");
			return NULL;
		}
	}
	if (!expect(p, TK_RBRACKET, "']'"))
		return NULL;
	return n;
}

static struct cel_node *parse_map(struct parser *p)
{
	struct cel_node *n = node(p, N_MAP, p->tok.pos);
	uint32_t c1 = 0, c2 = 0, c3 = 0;

	if (!n)
		return NULL;
	advance(p);
	while (!p->failed && p->tok.kind != TK_RBRACE) {
		bool opt = false;
		struct cel_node *k, *v;

		if (p->tok.kind == TK_QUESTION) {
			opt = true;
			advance(p);
		}
		k = parse_expr(p);
		if (!k || !expect(p, TK_COLON, "':'"))
			return NULL;
		v = parse_expr(p);
		if (!v)
			return NULL;
		if (!grow(p, (void **)&n->u.map.keys, n->u.map.n, &c1, sizeof(void *)) ||
		    !grow(p, (void **)&n->u.map.vals, n->u.map.n, &c2, sizeof(void *)) ||
		    !grow(p, (void **)&n->u.map.optional, n->u.map.n, &c3, sizeof(bool)))
			return NULL;
		n->u.map.keys[n->u.map.n] = k;
		n->u.map.vals[n->u.map.n] = v;
		n->u.map.optional[n->u.map.n++] = opt;
		if (p->tok.kind == TK_COMMA) {
			advance(p);
			continue;
		}
		if (p->tok.kind != TK_RBRACE) {
			unexpected(p, "{'}', ','}");
			return NULL;
		}
	}
	if (!expect(p, TK_RBRACE, "'}'"))
		return NULL;
	return n;
}

/* Message construction: NAME{field: value, ...}. */
static struct cel_node *parse_struct(struct parser *p, const char *type_name, uint32_t pos)
{
	struct cel_node *n = node(p, N_STRUCT, pos);
	uint32_t c1 = 0, c2 = 0;

	if (!n)
		return NULL;
	n->u.strct.type_name = type_name;
	advance(p);      /* { */
	while (!p->failed && p->tok.kind != TK_RBRACE) {
		const char *f;
		struct cel_node *v;

		if (p->tok.kind == TK_QUESTION)
			advance(p);
		if (p->tok.kind != TK_IDENT) {
			unexpected(p, "IDENTIFIER");
			return NULL;
		}
		f = p->tok.v.str.s;
		advance(p);
		if (!expect(p, TK_COLON, "':'"))
			return NULL;
		v = parse_expr(p);
		if (!v)
			return NULL;
		if (!grow(p, (void **)&n->u.strct.fields, n->u.strct.n, &c1, sizeof(char *)) ||
		    !grow(p, (void **)&n->u.strct.vals, n->u.strct.n, &c2, sizeof(void *)))
			return NULL;
		n->u.strct.fields[n->u.strct.n] = f;
		n->u.strct.vals[n->u.strct.n++] = v;
		if (p->tok.kind == TK_COMMA) {
			advance(p);
			continue;
		}
		if (p->tok.kind != TK_RBRACE) {
			unexpected(p, "{'}', ','}");
			return NULL;
		}
	}
	if (!expect(p, TK_RBRACE, "'}'"))
		return NULL;
	return n;
}

/* The dotted name of an ident/select chain, or NULL. */
static const char *qualified_name(struct parser *p, const struct cel_node *n)
{
	struct strbuf sb = STRBUF_INIT;
	const struct cel_node *parts[64];
	int np = 0;
	char *out = NULL;

	while (n && n->kind == N_SELECT && !n->u.sel.optional && !n->u.sel.test_only && np < 63) {
		parts[np++] = n;
		n = n->u.sel.operand;
	}
	if (!n || n->kind != N_IDENT)
		return NULL;
	sb_puts(&sb, n->u.ident.name);
	while (np > 0) {
		sb_putc(&sb, '.');
		sb_puts(&sb, parts[--np]->u.sel.field);
	}
	if (!sb_error(&sb))
		out = cel_arena_strdup(p->pool, sb_str(&sb), sb.len);
	sb_free(&sb);
	return out;
}

static struct cel_node *parse_primary(struct parser *p)
{
	struct cel_token t = p->tok;

	switch (t.kind) {
	case TK_INT:
		if (t.v.u > (uint64_t)INT64_MAX) {
			perr(p, t.pos, "invalid int literal");
			return NULL;
		}
		advance(p);
		return const_node(p, t.pos, cel_int((int64_t)t.v.u));
	case TK_UINT:
		advance(p);
		return const_node(p, t.pos, cel_uint(t.v.u));
	case TK_DOUBLE:
		advance(p);
		return const_node(p, t.pos, cel_double(t.v.d));
	case TK_STRING:
		advance(p);
		return const_node(p, t.pos, cel_string(t.v.str.s, t.v.str.len));
	case TK_BYTES:
		advance(p);
		return const_node(p, t.pos, cel_bytes(t.v.str.s, t.v.str.len));
	case TK_TRUE:
	case TK_FALSE:
		advance(p);
		return const_node(p, t.pos, cel_bool(t.kind == TK_TRUE));
	case TK_NULL:
		advance(p);
		return const_node(p, t.pos, cel_null());
	case TK_LPAREN: {
		struct cel_node *e;

		advance(p);
		e = parse_expr(p);
		if (!e || !expect(p, TK_RPAREN, "')'"))
			return NULL;
		return e;
	}
	case TK_LBRACKET:
		return parse_list(p);
	case TK_LBRACE:
		return parse_map(p);
	case TK_RESERVED:
		perr(p, t.pos, "reserved identifier: %s", t.v.str.s);
		return NULL;
	case TK_DOT:
	case TK_IDENT: {
		bool leading_dot = t.kind == TK_DOT;
		const char *name;
		uint32_t pos = t.pos;

		if (leading_dot) {
			advance(p);
			if (p->tok.kind == TK_RESERVED) {
				perr(p, p->tok.pos, "reserved identifier: %s", p->tok.v.str.s);
				return NULL;
			}
			if (p->tok.kind != TK_IDENT || p->tok.quoted) {
				unexpected(p, "IDENTIFIER");
				return NULL;
			}
			t = p->tok;
		}
		if (t.quoted) {
			unexpected(p, "IDENTIFIER");
			return NULL;
		}
		name = t.v.str.s;
		if (leading_dot) {
			char *dn = cel_arena_alloc(p->pool, t.v.str.len + 2);

			if (!dn) {
				perr(p, pos, "out of memory");
				return NULL;
			}
			dn[0] = '.';
			memcpy(dn + 1, name, t.v.str.len + 1);
			name = dn;
		}
		advance(p);
		if (p->tok.kind == TK_LPAREN) {
			struct cel_node **a = NULL;
			uint32_t na = 0;
			uint32_t cpos = p->tok.pos;

			if (!parse_args(p, &a, &na))
				return NULL;
			(void)cpos;
			return make_call(p, pos, leading_dot ? name + 1 : name, NULL, a, na);
		}
		if (p->tok.kind == TK_LBRACE)
			return parse_struct(p, name, p->tok.pos);
		return ident_node(p, pos, name);
	}
	case TK_EOF:
	default:
		/* The set ANTLR lists in cel-go's message. */
		unexpected(p, "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
			   "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}");
		return NULL;
	}
}

static struct cel_node *parse_member(struct parser *p)
{
	struct cel_node *e = parse_primary(p);

	while (e && !p->failed) {
		uint32_t pos = p->tok.pos;

		if (p->tok.kind == TK_DOT) {
			bool opt = false;
			const char *field;

			advance(p);
			if (p->tok.kind == TK_QUESTION) {
				opt = true;
				advance(p);
			}
			/* Reserved words are fine as field and method names. */
			if (p->tok.kind == TK_RESERVED)
				p->tok.kind = TK_IDENT;
			if (p->tok.kind != TK_IDENT && p->tok.kind != TK_TRUE &&
			    p->tok.kind != TK_FALSE && p->tok.kind != TK_NULL &&
			    p->tok.kind != TK_IN) {
				unexpected(p, "IDENTIFIER");
				return NULL;
			}
			if (p->tok.kind != TK_IDENT) {
				perr(p, p->tok.pos, "reserved identifier: %.*s", (int)p->tok.len,
				     p->src + p->tok.pos);
				return NULL;
			}
			field = p->tok.v.str.s;
			bool quoted = p->tok.quoted;
			advance(p);
			if (p->tok.kind == TK_LPAREN && !opt && !quoted) {
				struct cel_node **a = NULL;
				uint32_t na = 0;
				uint32_t cpos = p->tok.pos;

				if (!parse_args(p, &a, &na))
					return NULL;
				e = make_call(p, cpos, field, e, a, na);
				continue;
			}
			if (p->tok.kind == TK_LBRACE && !opt && !quoted) {
				struct cel_node *s = node(p, N_SELECT, pos);
				const char *qn;

				if (!s)
					return NULL;
				s->u.sel.operand = e;
				s->u.sel.field = field;
				qn = qualified_name(p, s);
				if (!qn) {
					unexpected(p, "<EOF>");
					return NULL;
				}
				e = parse_struct(p, qn, p->tok.pos);
				continue;
			}
			if (opt) {
				e = call_node(p, pos, "_?._", NULL, 2, e,
					      const_node(p, pos, cel_string(field, strlen(field))));
				continue;
			}
			struct cel_node *s = node(p, N_SELECT, pos);

			if (!s)
				return NULL;
			s->u.sel.operand = e;
			s->u.sel.field = field;
			e = s;
		} else if (p->tok.kind == TK_LBRACKET) {
			bool opt = false;
			struct cel_node *idx;

			advance(p);
			if (p->tok.kind == TK_QUESTION) {
				opt = true;
				advance(p);
			}
			idx = parse_expr(p);
			if (!idx || !expect(p, TK_RBRACKET, "']'"))
				return NULL;
			e = call_node(p, pos, opt ? "_[?_]" : "_[_]", NULL, 2, e, idx);
		} else {
			break;
		}
	}
	return e;
}

static struct cel_node *parse_unary(struct parser *p)
{
	uint32_t pos = p->tok.pos;
	int count = 0;

	if (p->tok.kind == TK_NOT) {
		struct cel_node *e;

		while (p->tok.kind == TK_NOT) {
			count++;
			advance(p);
		}
		e = parse_member(p);
		if (count % 2 == 0 || !e)
			return e;
		return call_node(p, pos, "!_", NULL, 1, e);
	}
	if (p->tok.kind == TK_MINUS) {
		struct cel_node *e;

		while (p->tok.kind == TK_MINUS) {
			count++;
			advance(p);
		}
		if (count == 1 && (p->tok.kind == TK_INT || p->tok.kind == TK_DOUBLE)) {
			/* A negative literal: -9223372036854775808 is valid. */
			struct cel_token t = p->tok;
			struct cel_node *lit;

			if (t.kind == TK_INT && t.v.u > (uint64_t)INT64_MAX + 1) {
				perr(p, t.pos, "invalid int literal");
				return NULL;
			}
			advance(p);
			lit = t.kind == TK_INT ?
				const_node(p, pos, cel_int((int64_t)(0 - t.v.u))) :
				const_node(p, pos, cel_double(-t.v.d));
			/* Let member suffixes apply to the literal: -1.foo(). */
			if (!lit)
				return NULL;
			/* Re-enter the member loop with the literal as the operand. */
			while (!p->failed && (p->tok.kind == TK_DOT || p->tok.kind == TK_LBRACKET)) {
				uint32_t mpos = p->tok.pos;

				if (p->tok.kind == TK_LBRACKET) {
					struct cel_node *idx;

					advance(p);
					idx = parse_expr(p);
					if (!idx || !expect(p, TK_RBRACKET, "']'"))
						return NULL;
					lit = call_node(p, mpos, "_[_]", NULL, 2, lit, idx);
					continue;
				}
				advance(p);
				if (p->tok.kind != TK_IDENT) {
					unexpected(p, "IDENTIFIER");
					return NULL;
				}
				const char *f = p->tok.v.str.s;

				advance(p);
				if (p->tok.kind == TK_LPAREN) {
					struct cel_node **a = NULL;
					uint32_t na = 0, cpos = p->tok.pos;

					if (!parse_args(p, &a, &na))
						return NULL;
					lit = make_call(p, cpos, f, lit, a, na);
				} else {
					struct cel_node *s = node(p, N_SELECT, mpos);

					if (!s)
						return NULL;
					s->u.sel.operand = lit;
					s->u.sel.field = f;
					lit = s;
				}
			}
			return lit;
		}
		e = parse_member(p);
		if (count % 2 == 0 || !e)
			return e;
		return call_node(p, pos, "-_", NULL, 1, e);
	}
	return parse_member(p);
}

static const char *binop(enum cel_tok k, int *prec)
{
	switch (k) {
	case TK_STAR: *prec = 5; return "_*_";
	case TK_SLASH: *prec = 5; return "_/_";
	case TK_PERCENT: *prec = 5; return "_%_";
	case TK_PLUS: *prec = 4; return "_+_";
	case TK_MINUS: *prec = 4; return "_-_";
	case TK_EQ: *prec = 3; return "_==_";
	case TK_NE: *prec = 3; return "_!=_";
	case TK_LT: *prec = 3; return "_<_";
	case TK_LE: *prec = 3; return "_<=_";
	case TK_GT: *prec = 3; return "_>_";
	case TK_GE: *prec = 3; return "_>=_";
	case TK_IN: *prec = 3; return "@in";
	case TK_AND: *prec = 2; return "_&&_";
	case TK_OR: *prec = 1; return "_||_";
	default: *prec = 0; return NULL;
	}
}

/* Precedence climbing over the left-associative binary levels. */
static struct cel_node *parse_binary(struct parser *p, int min_prec)
{
	struct cel_node *lhs;

	if (++p->depth > CEL_MAX_DEPTH) {
		perr(p, p->tok.pos, "expression recursion limit exceeded: %d", CEL_MAX_DEPTH);
		return NULL;
	}
	lhs = parse_unary(p);
	while (lhs && !p->failed) {
		int prec;
		const char *op = binop(p->tok.kind, &prec);
		uint32_t pos = p->tok.pos;
		struct cel_node *rhs;

		if (!op || prec < min_prec)
			break;
		advance(p);
		rhs = parse_binary(p, prec + 1);
		if (!rhs)
			return NULL;
		lhs = call_node(p, pos, op, NULL, 2, lhs, rhs);
	}
	p->depth--;
	return lhs;
}

static struct cel_node *parse_expr(struct parser *p)
{
	struct cel_node *c, *a, *b;
	uint32_t pos;

	if (p->failed)
		return NULL;
	if (++p->depth > CEL_MAX_DEPTH) {
		perr(p, p->tok.pos, "expression recursion limit exceeded: %d", CEL_MAX_DEPTH);
		return NULL;
	}
	c = parse_binary(p, 1);
	if (c && p->tok.kind == TK_QUESTION) {
		pos = p->tok.pos;
		advance(p);
		a = parse_binary(p, 1);
		if (!a || !expect(p, TK_COLON, "':'"))
			return NULL;
		b = parse_expr(p);
		if (!b)
			return NULL;
		c = call_node(p, pos, "_?_:_", NULL, 3, c, a, b);
	}
	p->depth--;
	return c;
}

/* The children of n, for walking the tree without recursion. */
static uint32_t children(const struct cel_node *n, const struct cel_node **out, uint32_t cap)
{
	uint32_t k = 0;

#define PUSH(c) do { if ((c) && k < cap) out[k++] = (c); } while (0)
	switch (n->kind) {
	case N_SELECT:
		PUSH(n->u.sel.operand);
		break;
	case N_CALL:
		PUSH(n->u.call.target);
		for (uint32_t i = 0; i < n->u.call.nargs; i++)
			PUSH(n->u.call.args[i]);
		break;
	case N_LIST:
		for (uint32_t i = 0; i < n->u.list.n; i++)
			PUSH(n->u.list.elems[i]);
		break;
	case N_MAP:
		for (uint32_t i = 0; i < n->u.map.n; i++) {
			PUSH(n->u.map.keys[i]);
			PUSH(n->u.map.vals[i]);
		}
		break;
	case N_STRUCT:
		for (uint32_t i = 0; i < n->u.strct.n; i++)
			PUSH(n->u.strct.vals[i]);
		break;
	case N_COMP:
		PUSH(n->u.comp.range);
		PUSH(n->u.comp.init);
		PUSH(n->u.comp.cond);
		PUSH(n->u.comp.step);
		PUSH(n->u.comp.result);
		break;
	default:
		break;
	}
#undef PUSH
	return k;
}

/* Long left-associative chains (a.b.c..., 1 + 1 + ...) do not recurse in
 * the parser but make a deep tree; the checker and evaluator recurse over
 * it, so its height is bounded too. Returns the first node too deep.
 *
 * Macros share subtrees (optMap and optFlatMap use their target twice), so
 * the tree that the later passes walk can be exponentially larger than the
 * nodes allocated: a chain of 30 optMap calls is 2^30 nodes to walk. The
 * walk is bounded at CEL_MAX_WALK visits; past that *too_large is set and
 * the node reached is returned. */
#define CEL_MAX_WALK (4 * CEL_MAX_NODES)

static const struct cel_node *too_deep(const struct cel_node *root, uint32_t n_nodes,
				       bool *too_large)
{
	size_t visits = 0;

	struct item { const struct cel_node *n; uint32_t depth; } *stack;
	const struct cel_node *kids[64], *bad = NULL;
	size_t sp = 0, cap = 2 * (size_t)n_nodes + 16;   /* macros share a few nodes */

	stack = malloc(cap * sizeof(*stack));
	if (!stack)
		return root;
	stack[sp++] = (struct item){ root, 1 };
	while (sp && !bad) {
		struct item it = stack[--sp];
		uint32_t k;

		if (it.depth > CEL_MAX_TREE_DEPTH) {
			bad = it.n;
			break;
		}
		if (++visits > CEL_MAX_WALK) {
			*too_large = true;
			bad = it.n;
			break;
		}
		/* Wide nodes have more than 64 children: walk them in slices. */
		switch (it.n->kind) {
		case N_LIST:
		case N_MAP:
		case N_CALL:
		case N_STRUCT: {
			const struct cel_node *const *arr = NULL;
			uint32_t cnt = 0;

			if (it.n->kind == N_LIST) {
				arr = (const struct cel_node *const *)it.n->u.list.elems;
				cnt = it.n->u.list.n;
			} else if (it.n->kind == N_CALL) {
				arr = (const struct cel_node *const *)it.n->u.call.args;
				cnt = it.n->u.call.nargs;
				if (it.n->u.call.target && sp < cap)
					stack[sp++] = (struct item){ it.n->u.call.target, it.depth + 1 };
			} else if (it.n->kind == N_STRUCT) {
				arr = (const struct cel_node *const *)it.n->u.strct.vals;
				cnt = it.n->u.strct.n;
			} else {
				for (uint32_t i = 0; i < it.n->u.map.n && sp + 1 < cap; i++) {
					stack[sp++] = (struct item){ it.n->u.map.keys[i], it.depth + 1 };
					stack[sp++] = (struct item){ it.n->u.map.vals[i], it.depth + 1 };
				}
			}
			for (uint32_t i = 0; i < cnt && sp < cap; i++)
				stack[sp++] = (struct item){ arr[i], it.depth + 1 };
			continue;
		}
		default:
			break;
		}
		k = children(it.n, kids, 64);
		for (uint32_t i = 0; i < k && sp < cap; i++)
			stack[sp++] = (struct item){ kids[i], it.depth + 1 };
	}
	free(stack);
	return bad;
}

int cel_parse(const char *src, size_t len, bool macros, struct cel_arena *pool,
	      struct cel_ast *out, struct dt_err *err)
{
	struct parser p;
	struct cel_node *root;

	memset(&p, 0, sizeof(p));
	p.pool = pool;
	p.src = src;
	p.len = len;
	p.macros = macros;
	p.err = err;
	cel_lex_init(&p.lx, src, len, pool);
	advance(&p);
	root = parse_expr(&p);
	if (root && !p.failed && p.tok.kind != TK_EOF) {
		char b[64];

		perr(&p, p.tok.pos, "Syntax error: extraneous input '%s' expecting <EOF>",
		     tok_text(&p, &p.tok, b, sizeof(b)));
	}
	if (p.failed || !root) {
		if (!p.failed)
			cel_report(err, -EINVAL, src, len, p.tok.pos, "Syntax error");
		return -EINVAL;
	}
	{
		bool too_large = false;
		const struct cel_node *deep = too_deep(root, p.nodes, &too_large);

		if (deep && too_large)
			return cel_report(err, -EINVAL, src, len, deep->pos,
					  "expression too large: more than %d nodes once macros "
					  "are expanded", CEL_MAX_WALK);
		if (deep)
			return cel_report(err, -EINVAL, src, len, deep->pos,
					  "expression nested too deeply: more than %d levels",
					  CEL_MAX_TREE_DEPTH);
	}
	out->root = root;
	out->n_nodes = p.nodes;
	return 0;
}
