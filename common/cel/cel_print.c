/* cel_print.c - print CEL values as CEL literals that evaluate back to the
 * same value (the output of `dratopo cel eval`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"
#include "strbuf.h"

void cel_print_double(struct strbuf *sb, double d)
{
	char buf[40];

	if (isnan(d)) {
		sb_puts(sb, "double(\"nan\")");
		return;
	}
	if (isinf(d)) {
		sb_puts(sb, d > 0 ? "double(\"inf\")" : "double(\"-inf\")");
		return;
	}
	/* The fewest significant digits that read back to the same double,
	 * in positional form for moderate exponents (100.0, 0.001), else as
	 * 1e+100. */
	int prec, exp10;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
	exp10 = atoi(strchr(buf, 'e') + 1);
	if (exp10 >= -5 && exp10 < 21)
		snprintf(buf, sizeof(buf), "%.*f", prec - 1 - exp10 > 0 ? prec - 1 - exp10 : 0, d);
	sb_puts(sb, buf);
	if (!strpbrk(buf, ".e"))
		sb_puts(sb, ".0");
}

void cel_value_print(struct strbuf *sb, const struct cel_value *v)
{
	switch (v->kind) {
	case CEL_NULL:
		sb_puts(sb, "null");
		break;
	case CEL_BOOL:
		sb_puts(sb, v->v.b ? "true" : "false");
		break;
	case CEL_INT:
		sb_printf(sb, "%lld", (long long)v->v.i);
		break;
	case CEL_UINT:
		sb_printf(sb, "%lluu", (unsigned long long)v->v.u);
		break;
	case CEL_DOUBLE:
		cel_print_double(sb, v->v.d);
		break;
	case CEL_STRING:
	case CEL_BYTES:
		cel_print_string(sb, v->v.str.s, v->v.str.len, v->kind == CEL_BYTES);
		break;
	case CEL_LIST:
		sb_putc(sb, '[');
		for (size_t i = 0; i < v->v.list->len; i++) {
			if (i)
				sb_puts(sb, ", ");
			cel_value_print(sb, &v->v.list->items[i]);
		}
		sb_putc(sb, ']');
		break;
	case CEL_MAP: {
		size_t n = cel_map_size(v->v.map);
		struct cel_arena scratch;
		char buf[1024];
		struct cel_ctx ctx = { 0 };

		cel_arena_init(&scratch, buf, sizeof(buf), 1u << 20);
		ctx.arena = &scratch;
		ctx.cost_limit = UINT64_MAX;
		sb_putc(sb, '{');
		for (size_t i = 0; i < n; i++) {
			struct cel_value k, val;

			cel_map_entry(&ctx, v->v.map, i, &k, &val);
			if (i)
				sb_puts(sb, ", ");
			cel_value_print(sb, &k);
			sb_puts(sb, ": ");
			cel_value_print(sb, &val);
		}
		sb_putc(sb, '}');
		cel_arena_release(&scratch);
		break;
	}
	case CEL_TYPE:
		sb_puts(sb, v->v.type);
		break;
	case CEL_TIMESTAMP:
		sb_puts(sb, "timestamp(\"");
		cel_timestamp_format(sb, v->v.t.sec, v->v.t.nsec);
		sb_puts(sb, "\")");
		break;
	case CEL_DURATION:
		sb_puts(sb, "duration(\"");
		cel_duration_format(sb, v->v.t.sec, v->v.t.nsec);
		sb_puts(sb, "\")");
		break;
	case CEL_OPTIONAL:
		if (!v->v.opt) {
			sb_puts(sb, "optional.none()");
		} else {
			sb_puts(sb, "optional.of(");
			cel_value_print(sb, v->v.opt);
			sb_putc(sb, ')');
		}
		break;
	case CEL_OBJECT:
		if (v->v.obj.type->print)
			v->v.obj.type->print(sb, v->v.obj.ptr);
		else
			sb_printf(sb, "<%s>", v->v.obj.type->name);
		break;
	case CEL_ERROR:
	default:
		sb_puts(sb, v->v.err.msg ? v->v.err.msg : "error");
		break;
	}
}
