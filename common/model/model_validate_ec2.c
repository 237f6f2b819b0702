/* model_validate_ec2.c - the EC2NodeClass CRD (karpenter.k8s.aws/v1,
 * aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go): its schema
 * (required lists, enums, patterns, bounds) and its CEL rules, in the API
 * server's words. A rule that fails prints `Invalid value: "TYPE": message`,
 * TYPE the schema type of the value the rule is on; a rule's has(x.f) is
 * whether f was written. Rules that compare with the stored object (role
 * is immutable) have nothing to compare with here and are not checked. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"

#define EC2_MAX_TERMS           30
#define EC2_MAX_TERM_TAGS       20
#define EC2_MAX_ALIAS_LEN       30
#define EC2_MAX_BLOCK_DEVICES   50
#define EC2_MAX_HOP_LIMIT       64

static const char volume_size_pattern[] =
	"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|"
	"[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|"
	"6[0-3]|64)T)$";

static const char *const ami_families[] = { "AL2", "AL2023", "Bottlerocket", "Custom",
					    "Windows2019", "Windows2022", NULL };
static const char *const alias_families[] = { "al2", "al2023", "bottlerocket", "windows2019",
					      "windows2022", NULL };
static const char *const on_off[] = { "enabled", "disabled", NULL };
static const char *const http_tokens[] = { "required", "optional", NULL };
static const char *const volume_types[] = { "standard", "io1", "io2", "gp2", "sc1", "st1", "gp3",
					    NULL };

/* ---- Selector terms ---- */

/* A term's fields, as bits: what the rules' has() look at. */
enum { T_TAGS = 1, T_ID = 2, T_NAME = 4, T_ALIAS = 8, T_OWNER = 16, T_SSM = 32 };

static unsigned term_fields(const struct model_ec2_term *t)
{
	return (t->has_tags ? T_TAGS : 0) | (t->id ? T_ID : 0) | (t->name ? T_NAME : 0) |
	       (t->alias ? T_ALIAS : 0) | (t->owner ? T_OWNER : 0) |
	       (t->ssm_parameter ? T_SSM : 0);
}

/* The shapes of the lists' rules. */
enum rule_kind {
	EVERY_HAS_ONE,          /* self.all(x, has(one of mask)) */
	NOT_ALL_WITH,           /* !self.all(x, has(field) && has(one of mask)) */
	NONE_WITH,              /* !self.exists(x, has(field) && has(one of mask)) */
	ALONE,                  /* !(self.exists(x, has(field)) && self.size() != 1) */
};

struct term_rule {
	enum rule_kind kind;
	unsigned field, mask;
	const char *msg;
};

/* One list of terms: its field, its id pattern (unanchored, as the CRD
 * writes it: the id must contain PREFIX followed by [0-9a-z]), whether []
 * is refused by a rule or by minItems, and its rules. */
struct term_list {
	const char *field;
	const char *id_prefix, *id_pattern;
	const char *empty_msg;          /* NULL: minItems 1 */
	bool aliases;                   /* AMI terms: alias checks */
	struct term_rule rules[4];
};

static const struct term_list subnet_terms = {
	"subnetSelectorTerms", "subnet-", "subnet-[0-9a-z]+", "subnetSelectorTerms cannot be empty",
	false, {
		{ EVERY_HAS_ONE, 0, T_TAGS | T_ID,
		  "expected at least one, got none, ['tags', 'id']" },
		{ NOT_ALL_WITH, T_ID, T_TAGS, "'id' is mutually exclusive, cannot be set with a "
		  "combination of other fields in a subnet selector term" },
	},
};

static const struct term_list security_group_terms = {
	"securityGroupSelectorTerms", "sg-", "sg-[0-9a-z]+",
	"securityGroupSelectorTerms cannot be empty", false, {
		{ EVERY_HAS_ONE, 0, T_TAGS | T_ID | T_NAME,
		  "expected at least one, got none, ['tags', 'id', 'name']" },
		{ NOT_ALL_WITH, T_ID, T_TAGS | T_NAME, "'id' is mutually exclusive, cannot be set "
		  "with a combination of other fields in a security group selector term" },
		{ NOT_ALL_WITH, T_NAME, T_TAGS | T_ID, "'name' is mutually exclusive, cannot be set "
		  "with a combination of other fields in a security group selector term" },
	},
};

static const struct term_list ami_terms = {
	"amiSelectorTerms", "ami-", "ami-[0-9a-z]+", NULL, true, {
		{ EVERY_HAS_ONE, 0, T_TAGS | T_ID | T_NAME | T_ALIAS | T_SSM, "expected at least "
		  "one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']" },
		{ NONE_WITH, T_ID, T_ALIAS | T_TAGS | T_NAME | T_OWNER, "'id' is mutually "
		  "exclusive, cannot be set with a combination of other fields in amiSelectorTerms" },
		{ NONE_WITH, T_ALIAS, T_ID | T_TAGS | T_NAME | T_OWNER, "'alias' is mutually "
		  "exclusive, cannot be set with a combination of other fields in "
		  "amiSelectorTerms" },
		{ ALONE, T_ALIAS, 0, "'alias' is mutually exclusive, cannot be set with a "
		  "combination of other amiSelectorTerms" },
	},
};

/* Whether the rule holds for the list: CEL's all() of no items is true,
 * so a NOT_ALL_WITH rule fails on [] (the CRD's own quirk, kept). */
static bool rule_holds(const struct term_rule *r, const struct model_ec2_terms *t)
{
	bool all = true, any = false;

	for (size_t i = 0; i < t->n; i++) {
		unsigned f = term_fields(&t->items[i]);
		bool with = (f & r->field) && (f & r->mask);

		switch (r->kind) {
		case EVERY_HAS_ONE:
			all = all && (f & r->mask);
			break;
		case NOT_ALL_WITH:
			all = all && with;
			break;
		case NONE_WITH:
			any = any || with;
			break;
		case ALONE:
			any = any || (f & r->field);
			break;
		}
	}
	switch (r->kind) {
	case EVERY_HAS_ONE:
		return all;
	case NOT_ALL_WITH:
		return !all;
	case NONE_WITH:
		return !any;
	default:
		return !(any && t->n != 1);
	}
}

static bool id_ok(const char *id, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *p = strstr(id, prefix); p; p = strstr(p + 1, prefix))
		if ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'z'))
			return true;
	return false;
}

static void v_term_tags(struct model_val *v, const struct model_ec2_term *t)
{
	size_t f;

	if (!t->has_tags)
		return;
	f = P_FIELD(v, "tags");
	if (t->n_tags > EC2_MAX_TERM_TAGS)
		model_e_too_many(v, t->n_tags, EC2_MAX_TERM_TAGS);
	for (size_t i = 0; i < t->n_tags; i++)
		if (!t->tags[i].key[0] || !t->tags[i].value[0]) {
			model_e_rule(v, "object", "empty tag keys or values aren't supported");
			break;
		}
	P_POP(v, f);
}

/* An alias is family@version, the family one of the EKS-optimized AMIs',
 * a Windows family's version only "latest". */
static void v_alias(struct model_val *v, const char *alias)
{
	size_t f = P_FIELD(v, "alias");
	size_t fam = strcspn(alias, "@");
	const char *version = alias[fam] ? alias + fam + 1 : NULL;
	char family[EC2_MAX_ALIAS_LEN + 1] = "";        /* split('@')[0]; "" when longer */

	if (strlen(alias) > EC2_MAX_ALIAS_LEN)
		model_e_too_long(v, EC2_MAX_ALIAS_LEN);
	if (fam < sizeof(family)) {
		memcpy(family, alias, fam);
		family[fam] = '\0';
	}
	if (!fam || strspn(alias, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
	    != fam || !version || !*version || strchr(version, '\n'))
		model_e_rule(v, "string", "'alias' is improperly formatted, must match the format "
			     "'family@version'");
	if (!model_in_list(family, alias_families))
		model_e_rule(v, "string", "family is not supported, must be one of the following: "
			     "'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022'");
	else if (!strncmp(family, "windows", 7) && version &&
		 !(strcspn(version, "@") == 6 && !strncmp(version, "latest", 6)))
		model_e_rule(v, "string", "windows families may only specify version 'latest'");
	P_POP(v, f);
}

static void v_term(struct model_val *v, const struct term_list *l, const struct model_ec2_term *t)
{
	v_term_tags(v, t);
	if (t->id && !id_ok(t->id, l->id_prefix)) {
		size_t f = P_FIELD(v, "id");

		model_e_pattern(v, t->id, l->id_pattern);
		P_POP(v, f);
	}
	if (l->aliases && t->alias)
		v_alias(v, t->alias);
}

static void v_terms(struct model_val *v, const struct term_list *l, const struct model_ec2_terms *t)
{
	size_t f = P_FIELD(v, l->field);

	if (!t->present) {
		model_e_required(v, "");
	} else if (t->n > EC2_MAX_TERMS) {
		model_e_too_many(v, t->n, EC2_MAX_TERMS);
	} else {
		if (!t->n && l->empty_msg)
			model_e_rule(v, "array", l->empty_msg);
		else if (!t->n)
			model_e_invalid_raw(v, "0", "should have at least 1 items");
		for (size_t i = 0; i < t->n; i++) {
			size_t ix = P_INDEX(v, i);

			v_term(v, l, &t->items[i]);
			P_POP(v, ix);
		}
		for (size_t i = 0; i < 4 && l->rules[i].msg; i++)
			if (!rule_holds(&l->rules[i], t))
				model_e_rule(v, "array", l->rules[i].msg);
	}
	P_POP(v, f);
}

/* ---- The spec's own rules ---- */

/* An alias's family and the amiFamily it implies, with the article of its
 * message ("an AL2 alias", "a Bottlerocket alias"). */
static const struct {
	const char *alias, *family, *article;
} alias_implies[] = {
	{ "al2", "AL2", "an" }, { "al2023", "AL2023", "an" },
	{ "bottlerocket", "Bottlerocket", "a" }, { "windows2019", "Windows2019", "a" },
	{ "windows2022", "Windows2022", "a" },
};

/* Whether a term's alias is of family: the text before its first '@', as
 * the rules' find('^[^@]+'). */
static bool has_alias_family(const struct model_ec2_terms *t, const char *family)
{
	size_t n = strlen(family);

	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].alias && !strncmp(t->items[i].alias, family, n) &&
		    (t->items[i].alias[n] == '@' || !t->items[i].alias[n]))
			return true;
	return false;
}

static bool has_alias(const struct model_ec2_terms *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].alias)
			return true;
	return false;
}

static void v_ami_family(struct model_val *v, const struct model_ec2_node_class *c)
{
	const char *fam = c->ami_family;

	if (fam && !model_in_list(fam, ami_families)) {
		size_t f = P_FIELD(v, "amiFamily");

		model_e_not_supported(v, fam, ami_families);
		P_POP(v, f);
	}
	if (!c->ami_terms.present)
		return;         /* the rules read amiSelectorTerms: reported as required */
	for (size_t i = 0; fam && i < sizeof(alias_implies) / sizeof(alias_implies[0]); i++)
		if (has_alias_family(&c->ami_terms, alias_implies[i].alias) &&
		    strcmp(fam, "Custom") && strcmp(fam, alias_implies[i].family)) {
			char msg[128];

			snprintf(msg, sizeof(msg),
				 "if set, amiFamily must be '%s' or 'Custom' when using %s %s alias",
				 alias_implies[i].family, alias_implies[i].article,
				 alias_implies[i].family);
			model_e_rule(v, "object", msg);
		}
	if (!fam && !has_alias(&c->ami_terms))
		model_e_rule(v, "object",
			     "must specify amiFamily if amiSelectorTerms does not contain an alias");
}

static void v_identity(struct model_val *v, const struct model_ec2_node_class *c)
{
	static const char *const fields[] = { "role", "instanceProfile" };
	static const char *const empty[] = { "role cannot be empty",
					     "instanceProfile cannot be empty" };
	const char *values[] = { c->role, c->instance_profile };

	if (!c->role == !c->instance_profile)
		model_e_rule(v, "object", "must specify exactly one of ['role', 'instanceProfile']");
	for (int i = 0; i < 2; i++)
		if (values[i] && !values[i][0]) {
			size_t f = P_FIELD(v, fields[i]);

			model_e_rule(v, "string", empty[i]);
			P_POP(v, f);
		}
}

/* spec.tags: tags Karpenter sets itself may not be given. */
static void v_tags(struct model_val *v, const struct model_ec2_node_class *c)
{
	static const struct {
		const char *key;
		bool prefix;
	} restricted[] = {
		{ "eks:eks-cluster-name", false }, { "kubernetes.io/cluster", true },
		{ "karpenter.sh/nodepool", false }, { "karpenter.sh/nodeclaim", false },
		{ "karpenter.k8s.aws/ec2nodeclass", false },
	};
	size_t f = P_FIELD(v, "tags");

	for (size_t i = 0; i < c->n_tags; i++)
		if (!c->tags[i].key[0]) {
			model_e_rule(v, "object", "empty tag keys aren't supported");
			break;
		}
	for (size_t r = 0; r < sizeof(restricted) / sizeof(restricted[0]); r++)
		for (size_t i = 0; i < c->n_tags; i++) {
			const char *k = c->tags[i].key, *rk = restricted[r].key;
			char msg[96];

			if (restricted[r].prefix ? strncmp(k, rk, strlen(rk)) : strcmp(k, rk))
				continue;
			snprintf(msg, sizeof(msg), "tag contains a restricted tag matching %s%s", rk,
				 restricted[r].prefix ? "/" : "");
			model_e_rule(v, "object", msg);
			break;
		}
	P_POP(v, f);
}

/* ---- Enums and bounds ---- */

static void v_enum(struct model_val *v, const char *field, const char *value,
		   const char *const *allowed)
{
	size_t f;

	if (!value || model_in_list(value, allowed))
		return;
	f = P_FIELD(v, field);
	model_e_not_supported(v, value, allowed);
	P_POP(v, f);
}

static void v_bounds(struct model_val *v, const char *field, bool has, int64_t value, int64_t lo,
		     int64_t hi)
{
	char msg[64];
	size_t f;

	if (!has || (value >= lo && value <= hi))
		return;
	f = P_FIELD(v, field);
	if (value < lo)
		snprintf(msg, sizeof(msg), "should be greater than or equal to %lld", (long long)lo);
	else
		snprintf(msg, sizeof(msg), "should be less than or equal to %lld", (long long)hi);
	model_e_invalid_int(v, value, msg);
	P_POP(v, f);
}

static void v_metadata_options(struct model_val *v, const struct model_ec2_node_class *c)
{
	size_t f;

	if (!c->has_metadata_options)
		return;
	f = P_FIELD(v, "metadataOptions");
	v_enum(v, "httpEndpoint", c->http_endpoint, on_off);
	v_enum(v, "httpProtocolIPv6", c->http_protocol_ipv6, on_off);
	v_enum(v, "httpTokens", c->http_tokens, http_tokens);
	v_bounds(v, "httpPutResponseHopLimit", c->has_hop_limit, c->hop_limit, 1,
		 EC2_MAX_HOP_LIMIT);
	P_POP(v, f);
}

/* A number of 1..hi without leading zeros: s[0..n). */
static bool size_in(const char *s, size_t n, long hi)
{
	long x = 0;

	if (!n || n > 5 || s[0] == '0')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
	}
	return x <= hi;
}

/* The volumeSize pattern: 1-59000Gi, 1-64000G, 1-64T and, as its Ti branch
 * is written, 1-9, 10-17 ... 50-57 or 58 Ti; a bare "Ti" or "T" (an empty
 * alternative in the pattern) passes too. */
static bool volume_size_ok(const char *s)
{
	size_t n = strlen(s);

	if (n >= 2 && !strcmp(s + n - 2, "Gi"))
		return size_in(s, n - 2, 59000);
	if (n >= 2 && !strcmp(s + n - 2, "Ti"))
		return n == 2 || size_in(s, n - 2, 9) ||
		       (n == 4 && s[0] >= '1' && s[0] <= '5' && s[1] >= '0' && s[1] <= '7') ||
		       !strcmp(s, "58Ti");
	if (n >= 1 && s[n - 1] == 'G')
		return size_in(s, n - 1, 64000);
	return n >= 1 && s[n - 1] == 'T' && (n == 1 || size_in(s, n - 1, 64));
}

static void v_ebs(struct model_val *v, const struct model_ec2_block_device *b)
{
	size_t f = P_FIELD(v, "ebs");

	if (b->volume_size && !volume_size_ok(b->volume_size)) {
		size_t g = P_FIELD(v, "volumeSize");

		model_e_pattern(v, b->volume_size, volume_size_pattern);
		P_POP(v, g);
	}
	v_enum(v, "volumeType", b->volume_type, volume_types);
	if (!b->snapshot_id && !b->volume_size)
		model_e_rule(v, "object", "snapshotID or volumeSize must be defined");
	P_POP(v, f);
}

static void v_block_devices(struct model_val *v, const struct model_ec2_node_class *c)
{
	size_t f = P_FIELD(v, "blockDeviceMappings"), roots = 0;

	if (c->n_block_devices > EC2_MAX_BLOCK_DEVICES) {
		model_e_too_many(v, c->n_block_devices, EC2_MAX_BLOCK_DEVICES);
		P_POP(v, f);
		return;
	}
	for (size_t i = 0; i < c->n_block_devices; i++) {
		size_t ix = P_INDEX(v, i);

		if (c->block_devices[i].has_ebs)
			v_ebs(v, &c->block_devices[i]);
		roots += c->block_devices[i].root_volume;
		P_POP(v, ix);
	}
	if (roots > 1)
		model_e_rule(v, "array", "must have only one blockDeviceMappings with rootVolume");
	P_POP(v, f);
}

static void v_kubelet(struct model_val *v, const struct model_ec2_node_class *c)
{
	size_t f = P_FIELD(v, "kubelet");

	v_bounds(v, "maxPods", c->has_max_pods, c->max_pods, 0, INT32_MAX);
	v_bounds(v, "podsPerCore", c->has_pods_per_core, c->pods_per_core, 0, INT32_MAX);
	v_bounds(v, "imageGCHighThresholdPercent", c->has_gc_high, c->gc_high, 0, 100);
	v_bounds(v, "imageGCLowThresholdPercent", c->has_gc_low, c->gc_low, 0, 100);
	if (c->has_gc_high && c->has_gc_low && c->gc_high <= c->gc_low)
		model_e_rule(v, "object", "imageGCHighThresholdPercent must be greater than "
			     "imageGCLowThresholdPercent");
	P_POP(v, f);
}

void model_v_ec2_node_class(struct model_val *v, const struct model_ec2_node_class *c)
{
	size_t sp;

	if (!c->spec)
		return;         /* no spec: nothing the CRD requires of one */
	sp = P_FIELD(v, "spec");
	v_identity(v, c);
	v_terms(v, &subnet_terms, &c->subnet_terms);
	v_terms(v, &security_group_terms, &c->security_group_terms);
	v_terms(v, &ami_terms, &c->ami_terms);
	v_ami_family(v, c);
	v_tags(v, c);
	v_metadata_options(v, c);
	v_block_devices(v, c);
	v_kubelet(v, c);
	P_POP(v, sp);
}
