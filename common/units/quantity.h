/* quantity.h - Kubernetes resource.Quantity: "100Gi", "500m", "1e3".
 *
 * A quantity is an exact decimal (or binary-suffixed) number. Parsing follows
 * k8s.io/apimachinery's grammar, rounds up to nano precision (10^-9) as it
 * does, and remembers the format (BinarySI, DecimalSI, DecimalExponent) so
 * that canonical printing matches what the API server writes back.
 *
 * Representation: value = mant * 10^exp, exactly. mant is a 128-bit integer,
 * which holds every value Kubernetes can express without loss in practice;
 * operations whose exact result would not fit return -ERANGE. */
#ifndef DT_QUANTITY_H
#define DT_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum quantity_format {
	QUANTITY_DECIMAL_SI,        /* "", k, M, G, ... and m, u, n */
	QUANTITY_BINARY_SI,         /* Ki, Mi, Gi, ... */
	QUANTITY_DECIMAL_EXPONENT,  /* 1e3, 1E-3 */
};

struct quantity {
	__int128 mant;
	int32_t exp;                /* power of ten, >= -9 after parsing */
	enum quantity_format format;
	/* mant/exp are apimachinery's own representation: the int64 value and
	 * scale of its fast path, or (dec) the arbitrary-precision form its slow
	 * path and overflowing arithmetic produce. Only quantity_to_int64,
	 * quantity_is_integer and quantity_to_double look at it (CEL's
	 * asInteger() fails on an inf.Dec value or a negative scale, as
	 * AsInt64 does); comparison and printing depend on the value alone.
	 * A zeroed struct is the integer 0. */
	bool dec;
};

/* Longest canonical form quantity_format() can write, with NUL. */
#define QUANTITY_STR_MAX 64

/* Parse s (len bytes) as resource.ParseQuantity does; -EINVAL with the API
 * server's words:
 * "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
 * "unable to parse quantity's suffix" or "unable to parse numeric part of
 * quantity"; -ERANGE for values a 128-bit mantissa cannot hold exactly.
 * No whitespace is trimmed (the API server's JSON decoder trims it before
 * parsing; callers decoding JSON/YAML do the same). *out is left alone on
 * error. */
int quantity_parse(const char *s, size_t len, struct quantity *out, struct dt_err *err);
/* Whether apimachinery keeps s verbatim as the parsed quantity's String()
 * (and so the API server writes it back as given): true for inputs its fast
 * path deems canonical, "100Gi", "1500m", "12.345k", "+1Ki", "1E3"; false for
 * "1000" (written back as "1k") and for anything that does not parse. A
 * writer that wants kubectl's output prints s when this is true and
 * quantity_format() otherwise. */
bool quantity_keeps_input(const char *s, size_t len);
/* Convenience for NUL-terminated strings. */
int quantity_parse_str(const char *s, struct quantity *out, struct dt_err *err);

/* A quantity from an integer (DecimalSI, as resource.NewQuantity does). */
struct quantity quantity_from_int(int64_t v, enum quantity_format fmt);

/* -1, 0, 1: exact comparison. */
int quantity_cmp(const struct quantity *a, const struct quantity *b);
bool quantity_is_zero(const struct quantity *q);
int quantity_sign(const struct quantity *q);

/* Exact arithmetic; the result takes a's format (b's when a is zero, as
 * Quantity.Add does). -ERANGE on overflow, *out untouched. */
int quantity_add(const struct quantity *a, const struct quantity *b, struct quantity *out);
int quantity_sub(const struct quantity *a, const struct quantity *b, struct quantity *out);

/* CEL's asInteger()/isInteger() (apimachinery AsInt64): the value as an
 * int64 when held in int64 form at a scale >= 0 and it fits; -ERANGE
 * otherwise ("cannot convert value to integer" is the CEL library's
 * message). So "1k" -> 1000, but "1000m" and "0.5Gi" fail as they do in
 * Kubernetes. */
int quantity_to_int64(const struct quantity *q, int64_t *out);
bool quantity_is_integer(const struct quantity *q);
/* The value as an int64 when it is an integer that fits, whatever its
 * representation ("1000m" -> 1, "0.5Gi" -> 536870912); -ERANGE otherwise.
 * For callers that want the number, not CEL's asInteger(). */
int quantity_exact_int64(const struct quantity *q, int64_t *out);
/* Value rounded up, away from zero, to an integer (Quantity.Value()),
 * saturating at INT64_MIN/INT64_MAX where Value() would overflow. */
int64_t quantity_value_ceil(const struct quantity *q);
/* asApproximateFloat: mantissa times math.Pow10(exp), as Go computes it. */
double quantity_to_double(const struct quantity *q);

/* Canonical string, as Quantity.String() prints it: "100Gi", "1500m",
 * "1e3", "0". buf must hold QUANTITY_STR_MAX bytes. Returns the length. */
size_t quantity_format(const struct quantity *q, char *buf);

#endif
