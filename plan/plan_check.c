/* plan_check.c - the checks a plan's input passes before planning, shared
 * by `dratopo plan -f` and the coordinator's Plan RPC so that a manifest is
 * accepted or refused the same way by both (selectors compiled with
 * cel_selector_check, as `dratopo validate` does), and the check of the
 * EC2NodeClass annotations the planner reads, which `dratopo validate`
 * runs too. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cel.h"
#include "hwdb.h"
#include "hwdb_mig.h"
#include "plan.h"
#include "plan_internal.h"

/* The annotations are checked here rather than in common/model because
 * the API server takes any annotation value: they are not its rules but
 * the words dratopo (and Karpenter's NVIDIA support) gives them, parsed by
 * hwdb (hwdb_cc_parse, hwdb_mig_parse), which the model must not link.
 * The planner is what reads them, so it owns the check; validate runs it
 * through plan_execute (check_only), and the messages are the planner's own
 * (the parsers'). */
static void check_nodeclass(const struct model_object *o, struct dt_diags *errs,
			    struct dt_diags *warnings, int *n)
{
	const struct model_meta *m = &o->meta;
	const char *cc = plan_label(m->annotations, m->n_annotations,
				    PLAN_ANNOTATION_CONSUMABLE_CAPACITY);
	const char *mig = plan_label(m->annotations, m->n_annotations,
				     PLAN_ANNOTATION_MIG_LAYOUT);
	struct hwdb_cc_mode mode;
	struct hwdb_mig_layout layout;
	struct dt_err e = { 0 };
	char where[1024], unknown[64];

	model_object_prefix(o, where, sizeof(where));
	if (hwdb_cc_parse(cc, &mode, &e)) {
		(*n)++;
		dt_diags_add(errs, "%smetadata.annotations[%s]: %s", where,
			     PLAN_ANNOTATION_CONSUMABLE_CAPACITY, e.msg);
	}
	if (hwdb_mig_parse(mig, &layout, &e)) {
		(*n)++;
		dt_diags_add(errs, "%smetadata.annotations[%s]: %s", where,
			     PLAN_ANNOTATION_MIG_LAYOUT, e.msg);
	} else if (warnings && hwdb_mig_unknown_profile(&layout, unknown, sizeof(unknown))) {
		/* Not an error: the layout is well formed, and a GPU newer
		 * than hwdb's tables may have the profile; plan rejects the
		 * MIG types it knows, each with the reason. */
		dt_diags_add(warnings, "%smetadata.annotations[%s]: no GPU in hwdb has MIG "
			     "profile \"%s\" (types whose GPUs have MIG cannot take the layout; "
			     "GPUs without MIG stay whole)", where, PLAN_ANNOTATION_MIG_LAYOUT,
			     unknown);
	}
}

int plan_nodeclass_check(const struct model_set *set, struct dt_diags *errs,
			 struct dt_diags *warnings)
{
	int n = 0;

	for (const struct model_object *o = NULL;
	     (o = model_set_next(set, MODEL_EC2_NODE_CLASS, o)); )
		check_nodeclass(o, errs, warnings, &n);
	return n;
}

/* Validation runs even when loading left problems (objects with decode
 * errors are in the set, decoded as far as they could be), so that one run
 * reports everything, as `dratopo validate` does, and a user does not fix
 * the decode errors only to be shown the rest on the next run (QA-29). */
int plan_input_check(const struct model_set *set, struct dt_diags *errs,
		     struct dt_diags *warnings)
{
	struct model_validate_opts vopts = { .check_cel = cel_selector_check };
	int rc = model_validate_set(set, &vopts, errs);

	if (rc < 0)
		return rc;
	plan_nodeclass_check(set, errs, warnings);
	return dt_diags_count(errs) ? -EINVAL : 0;
}
