/* cel_types.c - the checker's built-in types and how types print. */
#include <string.h>

#include "cel_ast.h"
#include "strbuf.h"

const struct cel_ctype cel_t_dyn = { .kind = CT_DYN };
const struct cel_ctype cel_t_null = { .kind = CT_NULL };
const struct cel_ctype cel_t_bool = { .kind = CT_BOOL };
const struct cel_ctype cel_t_int = { .kind = CT_INT };
const struct cel_ctype cel_t_uint = { .kind = CT_UINT };
const struct cel_ctype cel_t_double = { .kind = CT_DOUBLE };
const struct cel_ctype cel_t_string = { .kind = CT_STRING };
const struct cel_ctype cel_t_bytes = { .kind = CT_BYTES };
const struct cel_ctype cel_t_timestamp = { .kind = CT_TIMESTAMP };
const struct cel_ctype cel_t_duration = { .kind = CT_DURATION };
const struct cel_ctype cel_t_error = { .kind = CT_ERROR };

void cel_type_print(struct strbuf *sb, const struct cel_ctype *t)
{
	switch (t->kind) {
	case CT_DYN: sb_puts(sb, "dyn"); break;
	case CT_NULL: sb_puts(sb, "null_type"); break;
	case CT_BOOL: sb_puts(sb, "bool"); break;
	case CT_INT: sb_puts(sb, "int"); break;
	case CT_UINT: sb_puts(sb, "uint"); break;
	case CT_DOUBLE: sb_puts(sb, "double"); break;
	case CT_STRING: sb_puts(sb, "string"); break;
	case CT_BYTES: sb_puts(sb, "bytes"); break;
	case CT_TIMESTAMP: sb_puts(sb, "google.protobuf.Timestamp"); break;
	case CT_DURATION: sb_puts(sb, "google.protobuf.Duration"); break;
	case CT_ERROR: sb_puts(sb, "*error*"); break;
	case CT_PARAM:
		/* The checker's free type variable "_" reads as dyn. */
		sb_puts(sb, strcmp(t->name, "_") ? t->name : "dyn");
		break;
	case CT_OBJECT: sb_puts(sb, t->name); break;
	case CT_LIST:
		sb_puts(sb, "list(");
		cel_type_print(sb, t->p[0]);
		sb_putc(sb, ')');
		break;
	case CT_MAP:
		sb_puts(sb, "map(");
		cel_type_print(sb, t->p[0]);
		sb_puts(sb, ", ");
		cel_type_print(sb, t->p[1]);
		sb_putc(sb, ')');
		break;
	case CT_TYPE:
		sb_puts(sb, "type");
		if (t->p[0]) {
			sb_putc(sb, '(');
			cel_type_print(sb, t->p[0]);
			sb_putc(sb, ')');
		}
		break;
	case CT_OPTIONAL:
		sb_puts(sb, "optional_type(");
		cel_type_print(sb, t->p[0]);
		sb_putc(sb, ')');
		break;
	}
}
