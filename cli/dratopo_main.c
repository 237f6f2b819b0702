/* dratopo_main.c - the dratopo command line: finds the subcommand and runs it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "validate", cli_validate, "load manifests, apply API defaults and validate them" },
	{ "cel",      cli_cel,      "compile and evaluate a CEL expression (cel eval)" },
	{ "hwdb",     cli_hwdb,     "list instance types and show the slices their drivers publish" },
	{ "allocate", cli_allocate, "allocate claims on one node with the scheduler's semantics" },
	{ "plan",     cli_plan,     "decide which nodes to use or launch for pending pods" },
	{ "nodes",    cli_nodes,    "list the nodes a running coordinator knows" },
	{ "types",    cli_types,    "per instance type: nodes, verdicts, shapes (coordinator)" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: dratopo COMMAND [ARGS...]\n\n"
		     "DRA provisioning decisions for GPU and EFA nodes.\n\ncommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun 'dratopo COMMAND --help' for a command's options.\n"
		     "Exit codes: 0 ok, 1 invalid input or failure, 2 usage error, "
		     "3 cannot be placed (allocate, plan).\n");
}

int main(int argc, char **argv)
{
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("dratopo %s\n", DRATOPO_VERSION);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(name, commands[i].name))
			continue;
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "dratopo: unknown command '%s'\n\n", name);
	usage(stderr);
	return CLI_EXIT_USAGE;
}
