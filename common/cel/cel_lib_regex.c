/* cel_lib_regex.c - regular expressions with RE2 rules, on libpcre2.
 *
 * matches (global and member), and the Kubernetes regex library's find and
 * findAll(re[, limit]). CEL specifies RE2 syntax, which Go's regexp
 * implements; PCRE2 accepts a superset, so every pattern is first checked
 * against RE2's grammar and what RE2 rejects (back-references, lookaround,
 * atomic groups, possessive and nested quantifiers, recursion, conditionals,
 * escapes RE2 lacks, repeat counts over 1000) is an error worded as Go's
 * regexp/syntax words it. PCRE2 then runs with Go's defaults: UTF-8, ASCII
 * \d \w \s \b, `$` only at the end without (?m), and a match limit in place
 * of RE2's linear-time guarantee.
 *
 * Compiled patterns are cached per thread (a compiled CEL program stays
 * immutable and shareable); the cache is small, replaced round-robin, and
 * freed when its thread exits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cel_lib.h"
#include "cel_value.h"
#include "utf8.h"

#define RE_MAX_REPEAT 1000              /* RE2's and Go's repeat count limit */
#define RE_MATCH_LIMIT 1000000          /* backtracking steps per match call */
#define RE_CACHE_SLOTS 16
#define RE_DFA_WORKSPACE 4096             /* ints of DFA state for the fallback */
#define RE_CACHE_MAX_PATTERN 512        /* longer patterns are not cached */

/* ---- RE2 grammar check ---- */

/* Go's regexp error: "error parsing regexp: CODE: `ARG`". */
static struct cel_value re_error(struct cel_ctx *ctx, const char *code, const char *arg,
				 size_t arg_len)
{
	return cel_errorf(ctx, "error parsing regexp: %s: `%.*s`", code, (int)arg_len, arg);
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* Check the escape at p[0] == '\\'; *adv gets its length. in_class: inside
 * [...] where the assertions \b \B \A \z are not allowed. */
static bool check_escape(const char *p, const char *end, bool in_class, size_t *adv)
{
	char c;

	if (p + 1 >= end) {
		*adv = 1;
		return false;   /* trailing backslash */
	}
	c = p[1];
	*adv = 2;
	if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
		return (unsigned char)c < 0x80;    /* escaped punctuation is literal */
	switch (c) {
	case 'a': case 'f': case 't': case 'n': case 'r': case 'v':
	case 'd': case 'D': case 's': case 'S': case 'w': case 'W':
		return true;
	case 'b': case 'B': case 'A': case 'z':
		return !in_class;
	case 'p': case 'P':
		if (p + 2 < end && p[2] == '{') {
			const char *q = memchr(p + 3, '}', (size_t)(end - p - 3));

			if (!q)
				return false;
			*adv = (size_t)(q - p) + 1;
		} else if (p + 2 < end) {
			*adv = 3;
		} else {
			return false;
		}
		return true;
	case 'x':
		if (p + 2 < end && p[2] == '{') {
			const char *q = memchr(p + 3, '}', (size_t)(end - p - 3));

			if (!q)
				return false;
			*adv = (size_t)(q - p) + 1;
			return true;
		}
		*adv = 4;
		return p + 3 < end && strchr("0123456789abcdefABCDEF", p[2]) &&
		       strchr("0123456789abcdefABCDEF", p[3]) && p[2] && p[3];
	case '0':
		break;
	case '1': case '2': case '3': case '4': case '5': case '6': case '7':
		/* A single non-zero digit is a back-reference. */
		if (p + 2 >= end || !is_octal(p[2]))
			return false;
		break;
	default:
		return false;
	}
	/* Octal: up to two more digits. */
	while (*adv < 4 && p + *adv < end && is_octal(p[*adv]))
		(*adv)++;
	return true;
}

/* Parse a {n}, {n,} or {n,m} repeat at p; false when it is not one (then it
 * is a literal brace, as in Go). *bad is set for counts over the limit. */
static bool parse_repeat(const char *p, const char *end, size_t *adv, bool *bad)
{
	const char *q = p + 1;
	long lo = 0, hi = -1;
	int digits = 0;

	*bad = false;
	while (q < end && *q >= '0' && *q <= '9' && digits < 8) {
		lo = lo * 10 + (*q++ - '0');
		digits++;
	}
	if (!digits)
		return false;
	if (q < end && *q == ',') {
		q++;
		if (q < end && *q >= '0' && *q <= '9') {
			hi = 0;
			for (digits = 0; q < end && *q >= '0' && *q <= '9' && digits < 8; digits++)
				hi = hi * 10 + (*q++ - '0');
		}
	} else {
		hi = lo;
	}
	if (q >= end || *q != '}')
		return false;
	*adv = (size_t)(q - p) + 1;
	*bad = lo > RE_MAX_REPEAT || hi > RE_MAX_REPEAT || (hi >= 0 && hi < lo);
	return true;
}

/* Check "(?..." at p; *adv: bytes consumed. */
static bool check_group(const char *p, const char *end, size_t *adv)
{
	const char *q = p + 2;

	*adv = 2;
	if (q >= end)
		return false;
	if (*q == 'P' || *q == '<') {
		/* (?P<name> or (?<name>: named capture; not (?<= (?<! (?P= (?P> */
		if (*q == 'P')
			q++;
		if (q >= end || *q != '<' || q + 1 >= end || q[1] == '=' || q[1] == '!')
			return false;
		for (q++; q < end && *q != '>'; q++)
			if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
			      (*q >= '0' && *q <= '9') || *q == '_'))
				return false;
		if (q >= end || q == p + 2)
			return false;
		*adv = (size_t)(q - p) + 1;
		return true;
	}
	/* Flags: [imsU]* optionally -[imsU]*, then ':' or ')'. */
	for (bool neg = false; q < end; q++) {
		if (strchr("imsU", *q) && *q) {
			continue;
		} else if (*q == '-' && !neg) {
			neg = true;
		} else if (*q == ':' || *q == ')') {
			*adv = (size_t)(q - p) + 1;
			return q[-1] != '-' && (*q == ':' || q > p + 2);
		} else {
			return false;
		}
	}
	return false;
}

/* Reject what RE2 does not accept. Returns true with *err set otherwise. */
static bool re2_check(struct cel_ctx *ctx, const char *re, size_t len, struct cel_value *err)
{
	const char *p = re, *end = re + len;
	bool can_repeat = false;        /* the previous item may take a quantifier */
	bool was_repeat = false;        /* the previous item was a quantifier */
	const char *prev_op = NULL;     /* where that quantifier starts */
	int depth = 0;                  /* open groups */
	size_t adv;

	while (p < end) {
		char c = *p;
		bool bad;

		if (c == '\\') {
			if (p + 1 < end && p[1] == 'Q') {
				/* \Q...\E literal text */
				const char *e = p + 2;

				while (e + 1 < end && !(e[0] == '\\' && e[1] == 'E'))
					e++;
				p = e + 1 < end ? e + 2 : end;
				can_repeat = true;
				was_repeat = false;
				continue;
			}
			if (!check_escape(p, end, false, &adv)) {
				if (adv == 1) {
					*err = re_error(ctx, "trailing backslash at end of expression",
							"", 0);
					return false;
				}
				*err = re_error(ctx, "invalid escape sequence", p, adv);
				return false;
			}
			p += adv;
			can_repeat = true;
			was_repeat = false;
		} else if (c == '[') {
			const char *q = p + 1;

			if (q < end && *q == '^')
				q++;
			if (q < end && *q == ']')
				q++;
			while (q < end && *q != ']') {
				if (*q == '\\') {
					if (!check_escape(q, end, true, &adv)) {
						*err = re_error(ctx, "invalid escape sequence", q,
								adv);
						return false;
					}
					q += adv;
				} else if (*q == '[' && q + 1 < end && q[1] == ':') {
					/* [:alpha:] */
					const char *e = q + 2;

					while (e + 1 < end && !(e[0] == ':' && e[1] == ']'))
						e++;
					q = e + 1 < end ? e + 2 : q + 1;
				} else {
					q++;
				}
			}
			if (q >= end) {
				*err = re_error(ctx, "missing closing ]", p, (size_t)(end - p));
				return false;
			}
			p = q + 1;
			can_repeat = true;
			was_repeat = false;
		} else if (c == '(') {
			if (p + 1 < end && p[1] == '?') {
				if (!check_group(p, end, &adv)) {
					size_t show = p + 3 <= end ? 3 : (size_t)(end - p);

					if (p + 3 < end && p[2] == '<' &&
					    (p[3] == '=' || p[3] == '!'))
						show = 4;
					*err = re_error(ctx, "invalid or unsupported Perl syntax", p,
							show);
					return false;
				}
				/* (?i) sets flags and opens nothing. */
				depth += p[adv - 1] == ':' || p[adv - 1] == '>';
				p += adv;
			} else {
				depth++;
				p++;
			}
			can_repeat = false;
			was_repeat = false;
		} else if (c == ')') {
			if (depth-- == 0) {
				*err = re_error(ctx, "unexpected )", re, len);
				return false;
			}
			p++;
			can_repeat = true;
			was_repeat = false;
		} else if (c == '*' || c == '+' || c == '?' ||
			   (c == '{' && parse_repeat(p, end, &adv, &bad))) {
			size_t oplen = c == '{' ? adv : 1;

			if (c == '{' && bad) {
				*err = re_error(ctx, "invalid repeat count", p, oplen);
				return false;
			}
			if (was_repeat) {
				/* (a lazy '?' after a quantifier was consumed with it) */
				*err = re_error(ctx, "invalid nested repetition operator", prev_op,
						(size_t)(p - prev_op) + oplen);
				return false;
			}
			if (!can_repeat) {
				*err = re_error(ctx, "missing argument to repetition operator", p,
						oplen);
				return false;
			}
			prev_op = p;
			p += oplen;
			if (p < end && *p == '?')
				p++;
			was_repeat = true;
			can_repeat = false;
		} else {
			/* Go accepts ^* and $* (empty-width operands). */
			can_repeat = c != '|';
			was_repeat = false;
			p++;
		}
	}
	if (depth > 0) {
		*err = re_error(ctx, "missing closing )", re, len);
		return false;
	}
	return true;
}

/* ---- compiled pattern cache ---- */

struct re_slot {
	char pattern[RE_CACHE_MAX_PATTERN];
	size_t len;
	pcre2_code *code;
	pcre2_match_data *md;
};

struct re_cache {
	struct re_slot slots[RE_CACHE_SLOTS];
	pcre2_match_context *mctx;
	unsigned next;
	struct re_slot scratch;         /* uncacheable patterns */
};

/* One cache per thread, freed when the thread exits. */
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_key_ok;

static void slot_clear(struct re_slot *s)
{
	pcre2_match_data_free(s->md);
	pcre2_code_free(s->code);
	s->md = NULL;
	s->code = NULL;
	s->len = 0;
}

static void cache_free(void *p)
{
	struct re_cache *c = p;

	for (unsigned i = 0; i < RE_CACHE_SLOTS; i++)
		slot_clear(&c->slots[i]);
	slot_clear(&c->scratch);
	pcre2_match_context_free(c->mctx);
	free(c);
}

static void cache_key_init(void)
{
	cache_key_ok = pthread_key_create(&cache_key, cache_free) == 0;
}

static struct re_cache *cache_get(void)
{
	struct re_cache *c;

	pthread_once(&cache_once, cache_key_init);
	if (!cache_key_ok)
		return NULL;
	c = pthread_getspecific(cache_key);
	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->mctx = pcre2_match_context_create(NULL);
	if (!c->mctx || pthread_setspecific(cache_key, c) != 0) {
		pcre2_match_context_free(c->mctx);
		free(c);
		return NULL;
	}
	pcre2_set_match_limit(c->mctx, RE_MATCH_LIMIT);
	pcre2_set_depth_limit(c->mctx, RE_MATCH_LIMIT / 10);
	return c;
}

/* The compiled form of pattern re, or an error value in *err. */
static struct re_slot *compile_re(struct cel_ctx *ctx, const struct cel_value *pat,
				  struct re_cache **cp, struct cel_value *err)
{
	const char *re = pat->v.str.s;
	size_t len = pat->v.str.len;
	struct re_cache *c = cache_get();
	struct re_slot *s;
	int code;
	PCRE2_SIZE off;

	*cp = c;
	if (!c) {
		*err = cel_error_oom(ctx);
		return NULL;
	}
	for (unsigned i = 0; i < RE_CACHE_SLOTS; i++) {
		s = &c->slots[i];
		if (s->code && s->len == len && !memcmp(s->pattern, re, len))
			return s;
	}
	if (!re2_check(ctx, re, len, err))
		return NULL;
	if (len < RE_CACHE_MAX_PATTERN) {
		s = &c->slots[c->next];
		c->next = (c->next + 1) % RE_CACHE_SLOTS;
	} else {
		s = &c->scratch;
	}
	slot_clear(s);
	s->code = pcre2_compile((PCRE2_SPTR)re, len,
				PCRE2_UTF | PCRE2_NO_UTF_CHECK | PCRE2_DOLLAR_ENDONLY, &code, &off,
				NULL);
	if (!s->code) {
		PCRE2_UCHAR msg[160];

		pcre2_get_error_message(code, msg, sizeof(msg));
		*err = cel_errorf(ctx, "error parsing regexp: %s: `%.*s`", (const char *)msg,
				  (int)len, re);
		return NULL;
	}
	/* JIT when the platform has it; pcre2_match falls back otherwise. */
	(void)pcre2_jit_compile(s->code, PCRE2_JIT_COMPLETE);
	s->md = pcre2_match_data_create_from_pattern(s->code, NULL);
	if (!s->md) {
		slot_clear(s);
		*err = cel_error_oom(ctx);
		return NULL;
	}
	if (len < RE_CACHE_MAX_PATTERN) {
		memcpy(s->pattern, re, len);
		s->len = len;
	}
	return s;
}

/* One match of s at or after start: 1 with [*b, *e), 0 none, or < 0 with
 * *err set. */
static int match_at(struct cel_ctx *ctx, struct re_cache *c, struct re_slot *s,
		    const struct cel_value *str, size_t start, size_t *b, size_t *e,
		    struct cel_value *err)
{
	int r = pcre2_match(s->code, (PCRE2_SPTR)str->v.str.s, str->v.str.len, start,
			    PCRE2_NO_UTF_CHECK, s->md, c->mctx);
	PCRE2_SIZE *ov;

	if (r == PCRE2_ERROR_NOMATCH)
		return 0;
	if (r < 0) {
		*err = cel_errorf(ctx, "regular expression match exceeded its limits");
		return -1;
	}
	ov = pcre2_get_ovector_pointer(s->md);
	*b = ov[0];
	*e = ov[1];
	return 1;
}

#define FN(name) static struct cel_value name(struct cel_ctx *ctx, const struct cel_value *a, \
					      size_t n)

/* Whether the pattern matches at all. When backtracking runs out of its
 * budget, the DFA matcher (no backtracking, polynomial like RE2) answers. */
FN(matches)
{
	struct cel_value err;
	struct re_cache *c;
	struct re_slot *s = compile_re(ctx, &a[1], &c, &err);
	size_t b, e;
	int r;

	(void)n;
	if (!s)
		return err;
	r = match_at(ctx, c, s, &a[0], 0, &b, &e, &err);
	if (r < 0) {
		int ws[RE_DFA_WORKSPACE];

		r = pcre2_dfa_match(s->code, (PCRE2_SPTR)a[0].v.str.s, a[0].v.str.len, 0,
				    PCRE2_NO_UTF_CHECK, s->md, c->mctx, ws, RE_DFA_WORKSPACE);
		if (r == PCRE2_ERROR_NOMATCH)
			return cel_bool(false);
		if (r < 0)
			return err;
		return cel_bool(true);
	}
	return cel_bool(r > 0);
}

FN(find)
{
	struct cel_value err;
	struct re_cache *c;
	struct re_slot *s = compile_re(ctx, &a[1], &c, &err);
	size_t b, e;
	int r;

	(void)n;
	if (!s)
		return err;
	r = match_at(ctx, c, s, &a[0], 0, &b, &e, &err);
	if (r < 0)
		return err;
	return r ? cel_string(a[0].v.str.s + b, e - b) : cel_string("", 0);
}

/* Go's FindAllString: after an empty match step one code point; an empty
 * match right where the previous match ended is dropped. Two passes (count,
 * fill) so the list is allocated once. */
static struct cel_value find_all_pass(struct cel_ctx *ctx, struct re_cache *c,
				      struct re_slot *s, const struct cel_value *str,
				      int64_t limit, struct cel_value *items, size_t *count)
{
	const char *text = str->v.str.s;
	size_t len = str->v.str.len, pos = 0, k = 0;
	size_t prev_end = SIZE_MAX;
	struct cel_value err = cel_null();

	while ((limit < 0 || (int64_t)k < limit) && pos <= len) {
		size_t b, e;
		bool accept = true;
		int r = match_at(ctx, c, s, str, pos, &b, &e, &err);

		if (r < 0)
			return err;
		if (!r)
			break;
		if (e == b) {
			if (b == prev_end)
				accept = false;
			if (e >= len) {
				pos = len + 1;
			} else {
				uint32_t cp;
				size_t w = utf8_decode(text + e, len - e, &cp);

				pos = e + (w ? w : 1);
			}
		} else {
			pos = e;
		}
		prev_end = e;
		if (accept) {
			if (items)
				items[k] = cel_string(text + b, e - b);
			k++;
		}
	}
	*count = k;
	return err;
}

FN(find_all)
{
	int64_t limit = n > 2 ? a[2].v.i : -1;
	struct cel_value err, r, *items;
	struct re_cache *c;
	struct re_slot *s = compile_re(ctx, &a[1], &c, &err);
	size_t count;

	if (!s)
		return err;
	if (limit == 0)
		return cel_list_new(ctx, 0, &items);
	err = find_all_pass(ctx, c, s, &a[0], limit, NULL, &count);
	if (cel_is_error(&err))
		return err;
	r = cel_list_new(ctx, count, &items);
	if (!items)
		return r;
	err = find_all_pass(ctx, c, s, &a[0], limit, items, &count);
	return cel_is_error(&err) ? err : r;
}

/* cel-go: ceil(0.1 * (1 + len(string))) * ceil(0.25 * len(regex)). */
static uint64_t cost_match(const uint64_t *s, size_t n, uint64_t r)
{
	uint64_t c = cel_sat_mul(cel_cost_factor(0.1, cel_sat_add(s[0], 1)),
				 cel_cost_factor(0.25, s[1]));

	(void)n;
	(void)r;
	return c ? c : 1;
}

static const struct cel_overload regex_overloads[] = {
	{ "matches", "matches", 0, "string, string", "bool", matches, cost_match },
	{ "matches", "matches_string", CEL_OV_MEMBER, "string, string", "bool", matches,
	  cost_match },
	{ "find", "string_find_string", CEL_OV_MEMBER, "string, string", "string", find,
	  cost_match },
	{ "findAll", "string_find_all_string", CEL_OV_MEMBER, "string, string",
	  "list(string)", find_all, cost_match },
	{ "findAll", "string_find_all_string_int", CEL_OV_MEMBER, "string, string, int",
	  "list(string)", find_all, cost_match },
};

const struct cel_library cel_lib_regex = {
	.name = "regex",
	.overloads = regex_overloads,
	.n_overloads = CEL_ARRAY_LEN(regex_overloads),
};
