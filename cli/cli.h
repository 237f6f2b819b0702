/* cli.h - the subcommands of the dratopo command line.
 *
 * Each subcommand lives in its own cli/cli_<name>.c and has the
 * signature of main() with argv[0] set to the subcommand's name. Exit codes
 * everywhere: 0 success, 1 invalid input or runtime failure, 2 usage error;
 * commands add their own (allocate and plan: 3 = cannot be placed). */
#ifndef DT_CLI_H
#define DT_CLI_H

#define CLI_EXIT_OK     0
#define CLI_EXIT_FAIL   1
#define CLI_EXIT_USAGE  2

int cli_validate(int argc, char **argv);
int cli_cel(int argc, char **argv);
int cli_hwdb(int argc, char **argv);
int cli_allocate(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_nodes(int argc, char **argv);
int cli_types(int argc, char **argv);

#endif
