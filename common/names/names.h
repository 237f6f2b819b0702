/* names.h - the name rules of the Kubernetes API machinery
 * (k8s.io/apimachinery/pkg/util/validation and pkg/api/validation):
 * DNS-1123 labels and subdomains, DNS-1035 labels, C identifiers,
 * qualified names (label keys) and label values, each a pure check of a
 * string that says what is wrong in the API server's words.
 *
 * The model validates objects with them (prefixing the field path), and
 * the CEL format library returns the same messages from
 * format.dns1123Label().validate(s) and friends. Strings are
 * length-delimited (CEL strings may hold NUL bytes); no check allocates. */
#ifndef DT_NAMES_H
#define DT_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The messages of one check, at most NAMES_MSGS_MAX (no rule produces
 * more than 3). m[i] points into buf. */
#define NAMES_MSGS_MAX 4
#define NAMES_MSG_LEN 400

struct names_msgs {
	const char *m[NAMES_MSGS_MAX];
	char buf[NAMES_MSGS_MAX][NAMES_MSG_LEN];
	int n;
};

/* Each check fills out and returns the number of messages: 0 when s is
 * valid. */

/* IsDNS1123Label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 bytes. */
int names_dns1123_label(const char *s, size_t len, struct names_msgs *out);
/* IsDNS1123Subdomain: dot-separated DNS-1123 labels, at most 253 bytes. */
int names_dns1123_subdomain(const char *s, size_t len, struct names_msgs *out);
/* IsDNS1035Label: [a-z]([-a-z0-9]*[a-z0-9])?, at most 63 bytes. */
int names_dns1035_label(const char *s, size_t len, struct names_msgs *out);
/* IsCIdentifier: [A-Za-z_][A-Za-z0-9_]* (no length limit). */
int names_c_identifier(const char *s, size_t len, struct names_msgs *out);
/* IsQualifiedName (label keys, taint keys, ...): [prefix/]name, the prefix
 * a DNS-1123 subdomain, the name at most 63 bytes of
 * ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. */
int names_qualified_name(const char *s, size_t len, struct names_msgs *out);
/* IsValidLabelValue: empty, or a qualified name's name part. */
int names_label_value(const char *s, size_t len, struct names_msgs *out);

/* maskTrailingDash, which NameIsDNSLabel, NameIsDNSSubdomain and
 * NameIsDNS1035Label apply to a prefix that a generated suffix will
 * follow (metadata.generateName): a name ending in '-' is checked as its
 * first len-2 bytes followed by "a" (upstream drops the byte before the
 * dash too). Returns the string to check, s itself or buf (room for *len
 * bytes) holding the masked name, and updates *len. NULL for "-" alone,
 * on which upstream's slice expression fails (Go: "slice bounds out of
 * range [:-1]"). */
const char *names_mask_trailing_dash(const char *s, size_t *len, char *buf);

/* Generated names (the API server's SimpleNameGenerator, used for
 * metadata.generateName and by controllers naming replicas and claims):
 * a base cut to NAMES_GENERATED_BASE_MAX bytes, then NAMES_SUFFIX_LEN
 * characters of utilrand's alphabet, which has no vowels so that no word
 * is spelt by chance. */
#define NAMES_SUFFIX_LEN 5
#define NAMES_GENERATED_BASE_MAX 58
#define NAMES_SUFFIX_ALPHABET "bcdfghjklmnpqrstvwxz2456789"

/* NAMES_SUFFIX_LEN characters of the alphabet picked by h (upstream draws
 * them at random; callers pass a hash so that names are reproducible),
 * NUL-terminated. */
void names_suffix(uint64_t h, char out[NAMES_SUFFIX_LEN + 1]);

#endif
