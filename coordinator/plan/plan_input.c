/* plan_input.c - the checks a plan's input passes before planning: what
 * `dratopo plan -f` and the coordinator's Plan RPC share (and `dratopo
 * validate` uses for its CEL hook), so that a manifest is accepted or refused
 * the same way by both. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cel.h"
#include "plan.h"

int plan_check_cel(const char *expr, size_t len, char *msg, size_t msgsz, void *ctx)
{
	struct cel_program *p = NULL;
	struct dt_err err = { 0 };
	int rc;

	(void)ctx;
	rc = cel_compile_selector(expr, len, true, &p, &err);
	cel_program_free(p);
	if (!rc)
		return 0;
	if (strstr(err.msg, "cost limit")) {
		snprintf(msg, msgsz, "too complex, exceeds cost limit");
		return -E2BIG;
	}
	snprintf(msg, msgsz, "compilation failed: %s", err.msg[0] ? err.msg : "invalid expression");
	return -EINVAL;
}

int plan_input_check(const struct model_set *set, struct dt_diags *errs)
{
	struct model_validate_opts vopts = { .check_cel = plan_check_cel };

	if (dt_diags_count(errs))
		return -EINVAL;
	return model_validate_set(set, &vopts, errs) != 0 ? -EINVAL : 0;
}
