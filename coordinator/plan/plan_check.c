/* plan_check.c - the checks a plan's input passes before planning, shared
 * by `dratopo plan -f` and the coordinator's Plan RPC so that a manifest is
 * accepted or refused the same way by both (selectors compiled with
 * cel_selector_check, as `dratopo validate` does). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cel.h"
#include "plan.h"

int plan_input_check(const struct model_set *set, struct dt_diags *errs)
{
	struct model_validate_opts vopts = { .check_cel = cel_selector_check };

	if (dt_diags_count(errs))
		return -EINVAL;
	return model_validate_set(set, &vopts, errs) != 0 ? -EINVAL : 0;
}
