/* hwdb_source.h - hwdb's source format: decoding it (for the generator and
 * for `--hwdb-extra` files at run time) and writing it back.
 *
 * Internal to the hwdb module: the generator (hwdb_gen.c), the lookup code
 * (hwdb.c) and the tests use it; everyone else goes through hwdb.h.
 *
 * The format is described in docs/hwdb.md. There is exactly one decoder, so
 * the built-in data and an extra file are held to the same rules. */
#ifndef DT_HWDB_SOURCE_H
#define DT_HWDB_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doc.h"
#include "err.h"
#include "hwdb.h"
#include "hwdb_mig.h"
#include "strbuf.h"

/* Bounds an input cannot exceed. HWDB_MAX_DEVICES is the API's limit on
 * devices in one ResourceSlice (one slice per driver per node). */
#define HWDB_MAX_DEVICES        128
#define HWDB_MAX_TYPES          10000
#define HWDB_MAX_ATTRS          32
#define HWDB_MAX_NOTES          64
#define HWDB_MAX_PCI_ENTRIES    4096

/* An ignore rule of pci-ids.yaml: matches on every field it has. */
struct hwdb_pci_ignore {
	bool has_vendor, has_device, has_class;
	uint16_t vendor, device;
	uint16_t pci_class;             /* class << 8 | subclass */
	const char *why;
};

/* One price of hwdb/prices.yaml: type's on-demand price in region. */
struct hwdb_source_price {
	const char *region, *type;
	double price;
};

/* Everything one source file says. arena owns every string and array the
 * entries point to; hwdb_source_free releases it all. */
struct hwdb_source {
	char *filename;
	struct doc_arena *arena;
	struct hwdb_type *types;
	size_t n_types;
	struct hwdb_pci_gpu *pci_gpus;
	size_t n_pci_gpus;
	struct hwdb_pci_efa *pci_efas;
	size_t n_pci_efas;
	struct hwdb_pci_ignore *pci_ignore;
	size_t n_pci_ignore;
	struct hwdb_mig_gpu *mig_gpus;
	size_t n_mig_gpus;
	const char **regions;           /* prices.yaml: its regions, in file order */
	size_t n_regions;
	struct hwdb_source_price *prices;
	size_t n_prices, cap_prices;
};

/* Decode an instance-type file (`instanceTypes: [...]`). On error *out is
 * NULL and err names the file, line, entry and field. builtin marks the
 * entries as the built-in data. */
int hwdb_source_load_types(const char *path, bool builtin, struct hwdb_source **out,
			   struct dt_err *err);
int hwdb_source_parse_types(const char *buf, size_t len, const char *name, bool builtin,
			    struct hwdb_source **out, struct dt_err *err);
/* Decode a PCI id file (`gpus:`, `efas:`, `ignore:`). */
int hwdb_source_load_pci(const char *path, struct hwdb_source **out, struct dt_err *err);
/* Decode a MIG profile file (`migGpus:`, hwdb/mig-profiles.yaml). */
int hwdb_source_load_mig(const char *path, struct hwdb_source **out, struct dt_err *err);
/* Decode a price file (`regions:`, hwdb/prices.yaml): per region, prices
 * of types by name. Which names exist is the generator's to check. */
int hwdb_source_load_prices(const char *path, struct hwdb_source **out, struct dt_err *err);
void hwdb_source_free(struct hwdb_source *s);

/* Whether s is an AWS region name ("eu-west-1", "us-gov-west-1"). */
bool hwdb_source_valid_region(const char *s);
/* Sort p[0..n) by region; -1 when one appears twice (*dup: its index). */
int hwdb_source_sort_prices(struct hwdb_price *p, size_t n, size_t *dup);

/* The source-format entry as a doc tree (a map), built in arena a. */
struct doc_node *hwdb_source_encode_type(const struct hwdb_type *t, struct doc_arena *a);

/* Every slice an entry yields must pass the API server's validation; an
 * extra file whose entry would publish an invalid slice is refused like
 * any other malformed file (hwdb_slices.c). */
int hwdb_slices_check(const struct hwdb_type *t, struct dt_err *err);

/* The built-in tables, written by hwdb_gen into hwdb_data.c. */
extern const struct hwdb_type hwdb_builtin_types[];
extern const size_t hwdb_builtin_n_types;
extern const struct hwdb_pci_gpu hwdb_builtin_pci_gpus[];
extern const size_t hwdb_builtin_n_pci_gpus;
extern const struct hwdb_pci_efa hwdb_builtin_pci_efas[];
extern const size_t hwdb_builtin_n_pci_efas;
extern const struct hwdb_pci_ignore hwdb_builtin_pci_ignore[];
extern const size_t hwdb_builtin_n_pci_ignore;

#endif
