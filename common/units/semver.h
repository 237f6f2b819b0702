/* semver.h - semantic versions with the semantics of the Kubernetes CEL
 * semver library (blang/semver v4 parsing and ordering), plus the
 * library's optional normalization ("v1.02" -> "1.2.0"). */
#ifndef DT_SEMVER_H
#define DT_SEMVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Longest version string we keep (the API limit for version attributes). */
#define SEMVER_MAX_LEN 64

struct semver {
	uint64_t major, minor, patch;
	/* Pre-release and build as written ("rc.1", "build.5"), NUL-terminated,
	 * empty when absent. Each is at most SEMVER_MAX_LEN bytes: a valid
	 * version with a longer one is refused with -E2BIG ("version too
	 * long"); version attributes are at most 64 bytes in all anyway. */
	char pre[SEMVER_MAX_LEN + 1];
	char build[SEMVER_MAX_LEN + 1];
};

/* Strict parse (blang Parse). -EINVAL with blang's messages, e.g.
 * "No Major.Minor.Patch elements found"; *out untouched on error. */
int semver_parse(const char *s, size_t len, struct semver *out, struct dt_err *err);
/* Parse with the CEL library's normalization: strip one leading 'v', strip
 * leading zeros, pad missing minor/patch with 0 ("short version cannot
 * contain PreRelease/Build meta data" when a short one has '-' or '+'). */
int semver_parse_normalized(const char *s, size_t len, struct semver *out, struct dt_err *err);

/* -1, 0, 1; build metadata ignored. */
int semver_cmp(const struct semver *a, const struct semver *b);

/* Print as "1.2.3-pre+build". buf must hold SEMVER_STR_MAX bytes. */
#define SEMVER_STR_MAX (3 * 21 + 2 * (SEMVER_MAX_LEN + 1) + 4)
size_t semver_format(const struct semver *v, char *buf);

/* The Kubernetes API's check for version attribute values (semver 2.0.0
 * regex, at most 64 bytes). */
bool semver_is_valid_attribute(const char *s, size_t len);

#endif
