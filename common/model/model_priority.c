/* model_priority.c - PriorityClass: the API server's rules for a class,
 * and the priority its Priority admission plugin gives a pod on create
 * (from the class the pod names, the globalDefault class, or the two
 * built-in system classes), which the planner orders pods by (QA-62). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"

#define SYSTEM_PREFIX "system-"

static const struct {
	const char *name;
	int64_t value;
} builtin[] = {
	{ "system-cluster-critical", MODEL_PRIORITY_CLUSTER_CRITICAL },
	{ "system-node-critical", MODEL_PRIORITY_NODE_CRITICAL },
};

static bool builtin_value(const char *name, int64_t *value)
{
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (!strcmp(name, builtin[i].name)) {
			*value = builtin[i].value;
			return true;
		}
	return false;
}

/* Why a system- name is refused (IsKnownSystemPriorityClass), or NULL. */
static const char *system_class_error(const char *name, const struct model_priority_class *c,
				      char *buf, size_t sz)
{
	int64_t value;

	if (!builtin_value(name, &value))
		snprintf(buf, sz, "%s is not a known system priority class", name);
	else if (c->value != value)
		snprintf(buf, sz, "value of %s PriorityClass must be %" PRId64, name, value);
	else if (c->global_default)
		snprintf(buf, sz, "globalDefault of %s PriorityClass must be false", name);
	else
		return NULL;
	return buf;
}

void model_v_priority_class(struct model_val *v, const struct model_priority_class *c)
{
	static const char *const policies[] = { "PreemptLowerPriority", "Never", NULL };
	const char *name = v->o->meta.name ? v->o->meta.name : "";
	char why[160], msg[256];
	size_t f;

	if (!strncmp(name, SYSTEM_PREFIX, strlen(SYSTEM_PREFIX))) {
		if (system_class_error(name, c, why, sizeof(why))) {
			size_t m = P_FIELD(v, "metadata"), n = P_FIELD(v, "name");

			snprintf(msg, sizeof(msg), "priority class names with '" SYSTEM_PREFIX
				 "' prefix are reserved for system use only. error: %s", why);
			model_e_forbidden(v, msg);
			P_POP(v, n);
			P_POP(v, m);
		}
	} else if (c->value > MODEL_PRIORITY_USER_MAX) {
		f = P_FIELD(v, "value");
		snprintf(msg, sizeof(msg), "maximum allowed value of a user defined priority is %d",
			 MODEL_PRIORITY_USER_MAX);
		model_e_forbidden(v, msg);
		P_POP(v, f);
	}
	if (c->preemption_policy) {
		f = P_FIELD(v, "preemptionPolicy");
		if (strcmp(c->preemption_policy, "Never") &&
		    strcmp(c->preemption_policy, "PreemptLowerPriority"))
			model_e_not_supported(v, c->preemption_policy, policies);
		P_POP(v, f);
	}
}

/* The globalDefault class admission takes: the lowest value of those
 * marked (several can exist when API servers raced), NULL when none. */
static const struct model_object *default_class(const struct model_set *s)
{
	const struct model_object *best = NULL;

	for (const struct model_object *o = NULL; (o = model_set_next(s, MODEL_PRIORITY_CLASS, o)); )
		if (o->u.priority_class.global_default &&
		    (!best || o->u.priority_class.value < best->u.priority_class.value))
			best = o;
	return best;
}

int model_pod_priority(const struct model_set *s, const struct model_pod_spec *spec,
		       int64_t *out, const char **field, char *why, size_t whysz)
{
	const char *name = spec->priority_class_name;
	const struct model_object *pc = NULL;
	int64_t value = 0;
	bool known = true;

	if (name && name[0]) {
		pc = model_set_find(s, MODEL_PRIORITY_CLASS, NULL, name);
		if (pc)
			value = pc->u.priority_class.value;
		else if (!builtin_value(name, &value))
			known = false;
	} else if ((pc = default_class(s))) {
		value = pc->u.priority_class.value;
	}
	if (!known) {
		if (spec->has_priority) {
			*out = spec->priority;
			return 0;
		}
		*field = "priorityClassName";
		snprintf(why, whysz, "no PriorityClass with name %s was found", name);
		return -ENOENT;
	}
	if (spec->has_priority && spec->priority != value) {
		*field = "priority";
		snprintf(why, whysz, "the integer value of priority (%" PRId64 ") must not be "
			 "provided in pod spec; priority admission controller computed %" PRId64
			 " from the given PriorityClass name", spec->priority, value);
		return -EINVAL;
	}
	*out = value;
	return 0;
}

int model_check_priorities(const struct model_set *s, struct dt_diags *errs)
{
	const struct model_object *first = NULL;
	char where[1024], why[512];
	int n = 0;

	for (const struct model_object *o = NULL; (o = model_set_next(s, MODEL_PRIORITY_CLASS, o)); ) {
		if (!o->u.priority_class.global_default)
			continue;
		if (!first) {
			first = o;
			continue;
		}
		model_object_prefix(o, where, sizeof(where));
		n++;
		if (errs && dt_diags_add(errs, "%sglobalDefault: Forbidden: PriorityClass %s is "
					 "already marked as default. Only one default can exist",
					 where, first->meta.name) < 0)
			return -ENOMEM;
	}
	for (const struct model_object *o = NULL; (o = model_set_next(s, MODEL_POD, o)); ) {
		const char *field;
		int64_t p;

		if (!model_pod_priority(s, &o->u.pod.spec, &p, &field, why, sizeof(why)))
			continue;
		model_object_prefix(o, where, sizeof(where));
		n++;
		if (errs && dt_diags_add(errs, "%sspec.%s: Forbidden: %s", where, field, why) < 0)
			return -ENOMEM;
	}
	return n;
}
