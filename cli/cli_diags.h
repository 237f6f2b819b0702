/* cli_diags.h - ordering the input problems the CLI prints (cli_diags.c). */
#ifndef DT_CLI_DIAGS_H
#define DT_CLI_DIAGS_H

#include <stddef.h>

#include "diag.h"

/* Sort messages of the form "FILE: document N[, item M] (...): ..." by the
 * position of FILE in files (a directory given there covers its files, in
 * name order), then document and item; the sort is stable, and messages
 * naming no given file go last. On out of memory they stay as they were
 * (unsorted is still correct). */
void cli_diags_sort(struct dt_diags *errs, const char *const *files, size_t n_files);

#endif
