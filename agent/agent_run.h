/* agent_run.h - `dratopo-agent run`, the reporting loop (agent_run.c). */
#ifndef DT_AGENT_RUN_H
#define DT_AGENT_RUN_H

/* argv[0] is "run". Returns the process's exit code. */
int agent_run(int argc, char **argv);

#endif
