/* suggest.h - "did you mean": the known name closest to a misspelt one,
 * for every message that names what the user may have meant (instance
 * types, kinds). */
#ifndef DT_SUGGEST_H
#define DT_SUGGEST_H

#include <stddef.h>

/* Levenshtein distance, letters compared without case ("P5.48XLARGE"
 * is 0 from "p5.48xlarge"); SIZE_MAX for names over 64 bytes. */
size_t dt_edit_distance(const char *a, const char *b);

/* Whether a name at distance d from name is close enough to be what was
 * meant (a typo or a truncation): at most half name's length, plus one. */
int dt_suggest_close(const char *name, size_t d);

/* Of the n candidates, the one closest to name when dt_suggest_close;
 * NULL otherwise. The first of equals wins. */
const char *dt_suggest(const char *name, const char *const *cands, size_t n);

#endif
