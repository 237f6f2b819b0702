/* model_kinds.c - what the API serves in the groups dratopo reads
 * (served-kinds.txt, compiled into model_served_table): whether a
 * document's apiVersion and kind exist, and, when they do not, kubectl's
 * "no matches for kind" with what is served instead. */
#include <stdbool.h>
#include <string.h>

#include "model_internal.h"
#include "strbuf.h"
#include "suggest.h"

/* apiVersion split as schema.ParseGroupVersion splits it: "v1" is the
 * core group's, "g/v" group g's. */
struct gv {
	const char *group;
	size_t group_len;
	const char *version;
};

static struct gv split(const char *api_version)
{
	const char *slash = strchr(api_version, '/');

	if (!slash)
		return (struct gv){ "", 0, api_version };
	return (struct gv){ api_version, (size_t)(slash - api_version), slash + 1 };
}

static bool same_group(const struct model_served *e, const struct gv *gv)
{
	return strlen(e->group) == gv->group_len && !strncmp(e->group, gv->group, gv->group_len);
}

/* Whether the space-separated list holds kind. */
static bool has_kind(const char *kinds, const char *kind)
{
	size_t n = strlen(kind);

	for (const char *p = kinds; (p = strstr(p, kind)); p += n)
		if ((p == kinds || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

bool model_group_read(const char *api_version)
{
	struct gv gv = split(api_version);

	for (size_t i = 0; i < model_n_served; i++)
		if (same_group(&model_served_table[i], &gv))
			return true;
	return false;
}

bool model_kind_served(const char *api_version, const char *kind)
{
	struct gv gv = split(api_version);

	for (size_t i = 0; i < model_n_served; i++) {
		const struct model_served *e = &model_served_table[i];

		if (same_group(e, &gv) && !strcmp(e->version, gv.version))
			return has_kind(e->kinds, kind);
	}
	return false;
}

/* "g/v" or, for the core group, "v". */
static void put_gv(struct strbuf *sb, const struct model_served *e)
{
	if (e->group[0])
		sb_printf(sb, "%s/", e->group);
	sb_puts(sb, e->version);
}

/* "A, B and C" of the kinds (space-separated) */
static void put_kinds(struct strbuf *sb, const char *kinds)
{
	sb_join_list(sb, kinds, ' ', "and");
}

/* "KIND is served in g/v1, v1beta2 and v1beta1": the versions of the
 * group that serve kind; false when none does. */
static bool put_served_elsewhere(struct strbuf *sb, const struct gv *gv, const char *kind)
{
	const struct model_served *vs[16];
	size_t n = 0;

	for (size_t i = 0; i < model_n_served && n < 16; i++)
		if (same_group(&model_served_table[i], gv) &&
		    has_kind(model_served_table[i].kinds, kind))
			vs[n++] = &model_served_table[i];
	if (!n)
		return false;
	sb_printf(sb, "%s is served in ", kind);
	put_gv(sb, vs[0]);
	for (size_t i = 1; i < n; i++)
		sb_printf(sb, "%s%s", i + 1 == n ? " and " : ", ", vs[i]->version);
	return true;
}

/* The group's kind closest to kind ("DeviceClas", "deviceclass") into
 * out; false when none is close. */
static bool suggest_kind(const struct gv *gv, const char *kind, char out[64])
{
	const char *cands[64], *best;
	char words[64][64];
	size_t n = 0;

	for (size_t i = 0; i < model_n_served; i++) {
		const struct model_served *e = &model_served_table[i];

		if (!same_group(e, gv))
			continue;
		for (const char *p = e->kinds; *p && n < 64; ) {
			size_t len = strcspn(p, " ");

			if (len < sizeof(words[0])) {
				memcpy(words[n], p, len);
				words[n][len] = '\0';
				cands[n] = words[n];
				n++;
			}
			p += len + (p[len] == ' ');
		}
	}
	best = dt_suggest(kind, cands, n);
	if (!best || !strcmp(best, kind))
		return false;
	strcpy(out, best);      /* < 64 bytes: words[] holds it */
	return true;
}

void model_kind_no_match(const char *api_version, const char *kind, struct strbuf *sb)
{
	struct gv gv = split(api_version);
	const struct model_served *here = NULL;
	char like[64];

	for (size_t i = 0; i < model_n_served && !here; i++)
		if (same_group(&model_served_table[i], &gv) &&
		    !strcmp(model_served_table[i].version, gv.version))
			here = &model_served_table[i];
	sb_printf(sb, "no matches for kind \"%s\" in version \"%s\" (", kind, api_version);
	if (put_served_elsewhere(sb, &gv, kind)) {
		sb_puts(sb, ")");
		return;
	}
	if (here) {
		put_gv(sb, here);
		sb_puts(sb, " serves ");
		put_kinds(sb, here->kinds);
	} else {
		bool first = true;

		if (gv.group_len)
			sb_printf(sb, "%.*s serves ", (int)gv.group_len, gv.group);
		else
			sb_puts(sb, "the core group serves ");
		for (size_t i = 0; i < model_n_served; i++) {
			const struct model_served *e = &model_served_table[i];

			if (!same_group(e, &gv))
				continue;
			sb_printf(sb, "%s%s: ", first ? "" : "; ", e->version);
			put_kinds(sb, e->kinds);
			first = false;
		}
	}
	if (suggest_kind(&gv, kind, like))
		sb_printf(sb, "; did you mean %s?", like);
	sb_puts(sb, ")");
}
