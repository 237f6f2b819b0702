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

/* Declared weak so that a build can leave a module out; the dispatcher
 * reports a missing one instead of failing to link. */
int cli_validate(int argc, char **argv) __attribute__((weak));
int cli_cel(int argc, char **argv) __attribute__((weak));
int cli_hwdb(int argc, char **argv) __attribute__((weak));
int cli_allocate(int argc, char **argv) __attribute__((weak));
int cli_plan(int argc, char **argv) __attribute__((weak));
int cli_nodes(int argc, char **argv) __attribute__((weak));

#endif
