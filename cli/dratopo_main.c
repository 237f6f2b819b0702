/* dratopo_main.c - the dratopo command line: finds the subcommand and runs it. */
#include "cli.h"
#include "opts.h"

static const struct opts_sub commands[] = {
	{ "validate", cli_validate, "load manifests, apply API defaults and validate them" },
	{ "cel",      cli_cel,      "compile and evaluate a CEL expression (cel eval)" },
	{ "hwdb",     cli_hwdb,     "list instance types and show the slices their drivers publish" },
	{ "allocate", cli_allocate, "allocate claims on one node with the scheduler's semantics" },
	{ "plan",     cli_plan,     "decide which nodes to use or launch for pending pods" },
	{ "nodes",    cli_nodes,    "list the nodes a running coordinator knows" },
	{ "types",    cli_types,    "per instance type: nodes, verdicts, shapes (coordinator)" },
};

static const struct opts_prog dratopo = {
	.prog = "dratopo",
	.about = "DRA provisioning decisions for GPU and EFA nodes.",
	.subs = commands,
	.n_subs = sizeof(commands) / sizeof(commands[0]),
	.version = DRATOPO_VERSION,
	.epilog = "Exit codes: 0 ok, 1 invalid input or failure, 2 usage error,\n"
		  "3 cannot be placed (allocate, plan).\n",
};

int main(int argc, char **argv)
{
	return opts_dispatch(&dratopo, argc, argv);
}
