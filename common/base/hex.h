/* hex.h - hexadecimal digits, both ways: the one place that knows them
 * (PCI addresses and ids, URL escapes, CEL's and JSON's \x and \u
 * escapes, IPv6 groups). */
#ifndef DT_HEX_H
#define DT_HEX_H

#include <stddef.h>

extern const char hex_lower[16];        /* "0123456789abcdef" */
extern const char hex_upper[16];        /* "0123456789ABCDEF" */

/* The value of the hex digit c (either case); -1 for anything else. */
int hex_value(char c);
/* The value of the hex digit c in lower case only (as Kubernetes writes
 * PCI addresses); -1 for anything else, upper-case digits included. */
int hex_value_lower(char c);
/* The n hex digits at s as a number into *out; -1 when one is not a hex
 * digit or n is above 8 (0 digits give 0). */
int hex_parse(const char *s, size_t n, unsigned long *out);

#endif
