/* pci_enum.c - PCI enumeration through libpci's sysfs back end, with
 * libpci's fatal errors caught. See pci_enum.h. */
#include "pci_enum.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pci/pci.h>

#include "array.h"
#include "hwdb.h"

/* ---- Catching libpci's errors ----
 *
 * libpci's a->error() is declared noreturn: its callers carry on as if the
 * failed step had worked (sysfs_get_value would parse a buffer it never
 * read), so returning from the handler is undefined behaviour, and its
 * default handler calls exit(1), which library code must never do. So every
 * libpci call runs under a guard: the handler formats the message into the
 * active guard and siglongjmp()s back to the sigsetjmp() in guarded_*()
 * below, which report the failure to their caller like any other error.
 *
 * sigsetjmp/siglongjmp rather than setjmp/longjmp: whether plain setjmp
 * saves the signal mask differs between systems; sigsetjmp makes it
 * explicit. We pass savemask 0 because libpci never touches the mask, and
 * saving it would cost a system call per guarded call.
 *
 * Jumping out of libpci is safe for the calls made here: the sysfs back
 * end raises errors only before it acquires anything (a failed open, a name
 * it cannot parse) or after releasing it, except inside pci_scan_bus, whose
 * directory handle would leak; the entries are checked before scanning so
 * that it has nothing to fail on (see enumerate()). The guard is per
 * thread: a handler finds its guard in a thread-local pointer, since libpci
 * callbacks carry no user data. */

struct guard {
	sigjmp_buf jump;
	char msg[512];
};

static _Thread_local struct guard *guard_active;
static _Thread_local struct dt_diags *guard_warnings;

static void guard_error(char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void guard_error(char *fmt, ...)
{
	struct guard *g = guard_active;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->msg, sizeof(g->msg), fmt, ap);
	va_end(ap);
	siglongjmp(g->jump, 1);
}

static void guard_warning(char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void guard_warning(char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!guard_warnings)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dt_diags_add(guard_warnings, "libpci: %s", msg);
}

static void guard_debug(char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void guard_debug(char *fmt, ...)
{
	(void)fmt;
}

/* Each guarded_* runs one libpci call under a fresh guard and returns 0, or
 * -EIO with the message in err. They modify no local state between
 * sigsetjmp and the call, so nothing needs to be volatile. */

static int guard_done(struct guard *g, struct guard *prev, int jumped, struct dt_err *err)
{
	guard_active = prev;
	if (jumped)
		return dt_err_set(err, -EIO, "%s", g->msg);
	return 0;
}

static int guarded_init(struct pci_access *a, struct dt_err *err)
{
	struct guard g, *prev = guard_active;

	guard_active = &g;
	if (sigsetjmp(g.jump, 0) == 0) {
		pci_init(a);
		return guard_done(&g, prev, 0, err);
	}
	return guard_done(&g, prev, 1, err);
}

static int guarded_scan(struct pci_access *a, struct dt_err *err)
{
	struct guard g, *prev = guard_active;

	guard_active = &g;
	if (sigsetjmp(g.jump, 0) == 0) {
		pci_scan_bus(a);
		return guard_done(&g, prev, 0, err);
	}
	return guard_done(&g, prev, 1, err);
}

static int guarded_fill(struct pci_dev *d, int flags, struct dt_err *err)
{
	struct guard g, *prev = guard_active;

	guard_active = &g;
	if (sigsetjmp(g.jump, 0) == 0) {
		pci_fill_info(d, flags);
		return guard_done(&g, prev, 0, err);
	}
	return guard_done(&g, prev, 1, err);
}

static int guarded_read_word(struct pci_dev *d, int pos, uint16_t *out, struct dt_err *err)
{
	struct guard g, *prev = guard_active;

	guard_active = &g;
	if (sigsetjmp(g.jump, 0) == 0) {
		*out = pci_read_word(d, pos);
		return guard_done(&g, prev, 0, err);
	}
	return guard_done(&g, prev, 1, err);
}

static int guarded_get_dev(struct pci_access *a, const struct topo_bdf *b,
			   struct pci_dev **out, struct dt_err *err)
{
	struct guard g, *prev = guard_active;

	guard_active = &g;
	if (sigsetjmp(g.jump, 0) == 0) {
		*out = pci_get_dev(a, (int)b->domain, b->bus, b->dev, b->func);
		return guard_done(&g, prev, 0, err);
	}
	return guard_done(&g, prev, 1, err);
}

/* ---- Checking the entries before libpci sees them ---- */

struct entry {
	struct topo_bdf bdf;
	char name[TOPO_NAME_MAX];
};

static int entry_cmp(const void *a, const void *b)
{
	return topo_bdf_cmp(&((const struct entry *)a)->bdf, &((const struct entry *)b)->bdf);
}

/* The files libpci opens for a device: the ids and class of every device,
 * the rest only for the vendors the agent reads further. One that exists
 * but is not a regular file (a FIFO would block libpci's plain open()
 * forever) rules the device out; a missing one is left to libpci, whose
 * error the guard turns into a warning. */
static const char *const libpci_ident_files[] = { "vendor", "device", "class", NULL };
static const char *const libpci_detail_files[] = {
	"revision", "subsystem_vendor", "subsystem_device", "config", NULL,
};

static int entry_safe(const char *sys, const char *name, const char *const *files,
		      struct dt_diags *warnings)
{
	char dir[PROBE_PATH_MAX];
	int dfd, safe = 1;

	/* One walk of the long path (through the bus's link into devices/),
	 * then a short lookup per file: path walks are most of a probe's
	 * time. A directory that cannot be opened leaves each file to a walk
	 * of its own (and its error to libpci). */
	snprintf(dir, sizeof(dir), "%s/bus/pci/devices/%s", sys, name);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; safe && files[i]; i++) {
		char path[PROBE_PATH_MAX];
		int rc;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		rc = dfd >= 0 ? probe_check_file_at(dfd, files[i]) : probe_check_file(path);
		if (rc == -EINVAL || rc == -EISDIR) {
			dt_diags_add(warnings, "%s: not a regular file; device %s skipped",
				     path, name);
			safe = 0;
		}
	}
	if (dfd >= 0)
		close(dfd);
	return safe;
}

/* List bus/pci/devices. *clean says whether every entry is one libpci's
 * scan can handle. */
static int list_entries(const char *sys, struct entry **out, size_t *n, int *clean,
			struct dt_diags *warnings, struct dt_err *err)
{
	char dir[PROBE_PATH_MAX];
	struct entry *v = NULL;
	size_t cap = 0, cnt = 0, seen = 0;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	*clean = 1;
	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", sys);
	d = opendir(dir);
	if (!d) {
		rc = -errno;
		return dt_err_set(err, rc, "%s: %s", dir, strerror(-rc));
	}
	while ((e = readdir(d)) != NULL) {
		struct topo_bdf b;

		if (e->d_name[0] == '.')
			continue;
		if (++seen > PROBE_MAX_PCI_ENTRIES) {
			dt_diags_add(warnings, "%s: more than %d entries; the rest ignored", dir,
				     PROBE_MAX_PCI_ENTRIES);
			*clean = 0;
			break;
		}
		if (topo_bdf_parse(e->d_name, &b) != 0) {
			dt_diags_add(warnings, "%s/%s: not a PCI address; skipped", dir,
				     e->d_name);
			*clean = 0;
			continue;
		}
		if (!entry_safe(sys, e->d_name, libpci_ident_files, warnings)) {
			*clean = 0;
			continue;
		}
		if (DT_GROW(v, cap, cnt + 1)) {
			rc = dt_err_set(err, -ENOMEM, "out of memory listing %s", dir);
			goto out;
		}
		v[cnt].bdf = b;
		snprintf(v[cnt].name, sizeof(v[cnt].name), "%s", e->d_name);
		cnt++;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), entry_cmp);
out:
	closedir(d);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* ---- Reading one device ---- */

/* Whether a device may be a GPU or an EFA, judged from ids and class
 * alone: only those are worth their subsystem ids and config space. */
static int want_details(uint16_t vendor, uint16_t device, uint16_t device_class)
{
	if (vendor == HWDB_PCI_VENDOR_NVIDIA)
		return device_class == 0x0300 || device_class == 0x0302;
	return hwdb_pci_efa(vendor, device) != NULL;
}

/* libpci reads an empty or garbled id file as 0 without complaint, which
 * would file a GPU under "other devices" in silence. Vendor 0 and 0xffff
 * are never real, nor is class 0 on an NVIDIA device (its GPUs are display
 * controllers, its NVSwitches bridges), so when libpci reports one, look at
 * the file ourselves and say what is wrong with it. file is "vendor"
 * (what: "vendor id", "not a PCI vendor") or "class". */
static int id_file_sane(const char *sys, const char *name, const char *file, uint32_t max,
			bool zero_ok, const char *what, const char *is_not,
			struct dt_diags *warnings)
{
	char path[PROBE_PATH_MAX], buf[32];
	struct dt_err e = { 0 };
	uint32_t v;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", sys, name, file);
	if (probe_read_attr(path, buf, sizeof(buf), &e) < 0) {
		dt_diags_add(warnings, "%s: %s; device skipped", name, e.msg);
		return 0;
	}
	if (probe_parse_hex(buf, max, &v) < 0 || (v == 0 && !zero_ok) || v == 0xffff) {
		dt_diags_add(warnings, "%s: %s \"%s\" is %s; device skipped", path, what, buf,
			     is_not);
		return 0;
	}
	return 1;
}

/* Fill rec from libpci's view of d. 0, or -EIO with a warning added.
 * Every device costs three small reads (ids and class); only the possible
 * GPUs and EFAs get the rest, which keeps a probe cheap on hosts full of
 * bridges. */
static int read_device(const char *sys, struct pci_dev *d, const char *name,
		       struct probe_pci_dev *rec, struct dt_diags *warnings)
{
	char path[PROBE_PATH_MAX];
	struct dt_err e = { 0 };
	uint16_t word;
	int rc;

	memset(rec, 0, sizeof(*rec));
	if (guarded_fill(d, PCI_FILL_IDENT | PCI_FILL_CLASS, &e)) {
		dt_diags_add(warnings, "%s: libpci: %s; device skipped", name, e.msg);
		return -EIO;
	}
	if ((d->vendor_id == 0 || d->vendor_id == 0xffff) &&
	    !id_file_sane(sys, name, "vendor", 0xffff, false, "vendor id", "not a PCI vendor",
			  warnings))
		return -EIO;
	/* A class file that parses as 0 is garbled; one that says 0 is kept. */
	if (d->vendor_id == HWDB_PCI_VENDOR_NVIDIA && d->device_class == 0 &&
	    !id_file_sane(sys, name, "class", 0xffffff, true, "class", "not a PCI class code",
			  warnings))
		return -EIO;
	rec->vendor = d->vendor_id;
	rec->device = d->device_id;
	rec->class_code = (uint32_t)d->device_class << 8;
	if (!want_details(d->vendor_id, d->device_id, d->device_class))
		return 0;
	if (!entry_safe(sys, name, libpci_detail_files, warnings))
		return -EIO;
	if (guarded_fill(d, PCI_FILL_CLASS_EXT | PCI_FILL_SUBSYS, &e) == 0) {
		rec->class_code |= d->prog_if;
		if (d->known_fields & PCI_FILL_SUBSYS) {
			rec->has_subsys = true;
			rec->subsys_vendor = d->subsys_vendor_id;
			rec->subsys_device = d->subsys_id;
		}
	} else {
		dt_diags_add(warnings, "%s: libpci: %s", name, e.msg);
	}
	/* libpci answers all ones for config space it cannot read, which
	 * would look like a device gone from the bus: check the file first. */
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/config", sys, name);
	rc = probe_check_file(path);
	if (rc) {
		dt_diags_add(warnings, "%s: config space unreadable (%s); cannot tell whether "
			     "it is still on the bus", name, strerror(-rc));
		return 0;
	}
	if (guarded_read_word(d, PCI_VENDOR_ID, &word, &e) == 0) {
		rec->config_read = true;
		rec->config_dead = word == 0xffff;
	} else {
		dt_diags_add(warnings, "%s: libpci: %s", name, e.msg);
	}
	return 0;
}

/* Enumerate with a ready pci_access: scan when the listing was clean, else
 * look up each listed device by address (pci_get_dev), which never parses
 * a directory entry. */
static int enumerate(const char *sys, struct pci_access *a, const struct entry *ents,
		     size_t n_ents, int clean, struct probe_pci_dev *recs, size_t *n_recs,
		     struct dt_diags *warnings)
{
	struct dt_err e = { 0 };
	size_t k = 0;

	if (clean && guarded_scan(a, &e) == 0) {
		for (struct pci_dev *d = a->devices; d; d = d->next) {
			struct topo_bdf b;
			char name[TOPO_NAME_MAX];
			struct entry key;
			const struct entry *ent;

			if (d->domain < 0 || d->domain > 0xffff)
				continue;
			b.domain = (uint32_t)d->domain;
			b.bus = d->bus;
			b.dev = d->dev;
			b.func = d->func;
			key.bdf = b;
			ent = bsearch(&key, ents, n_ents, sizeof(*ents), entry_cmp);
			topo_bdf_format(&b, name, sizeof(name));
			if (!ent) {
				dt_diags_add(warnings, "%s: seen by libpci but not in the listing; "
					     "skipped", name);
				continue;
			}
			if (k >= n_ents || read_device(sys, d, name, &recs[k], warnings) != 0)
				continue;
			recs[k].bdf = b;
			snprintf(recs[k].name, sizeof(recs[k].name), "%s", name);
			k++;
		}
		*n_recs = k;
		return 0;
	}
	if (clean)
		dt_diags_add(warnings, "libpci: scan failed (%s); reading devices one by one",
			     e.msg);
	for (size_t i = 0; i < n_ents; i++) {
		struct pci_dev *d = NULL;

		if (guarded_get_dev(a, &ents[i].bdf, &d, &e) != 0 || !d) {
			dt_diags_add(warnings, "%s: libpci: %s; device skipped", ents[i].name,
				     e.msg);
			continue;
		}
		if (read_device(sys, d, ents[i].name, &recs[k], warnings) == 0) {
			recs[k].bdf = ents[i].bdf;
			snprintf(recs[k].name, sizeof(recs[k].name), "%s", ents[i].name);
			k++;
		}
		pci_free_dev(d);
	}
	*n_recs = k;
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	return topo_bdf_cmp(&((const struct probe_pci_dev *)a)->bdf,
			     &((const struct probe_pci_dev *)b)->bdf);
}

int probe_pci_enum(const char *sys, struct probe_pci_dev **out, size_t *n,
		   struct dt_diags *warnings, struct dt_err *err)
{
	char path[PROBE_PATH_MAX];
	struct entry *ents = NULL;
	struct probe_pci_dev *recs = NULL;
	struct pci_access *a = NULL;
	struct dt_diags *prev_warnings = guard_warnings;
	size_t n_ents = 0, n_recs = 0;
	int clean, rc;

	*out = NULL;
	*n = 0;
	rc = list_entries(sys, &ents, &n_ents, &clean, warnings, err);
	if (rc)
		return rc;
	recs = calloc(n_ents ? n_ents : 1, sizeof(*recs));
	if (!recs) {
		rc = dt_err_set(err, -ENOMEM, "out of memory enumerating PCI devices");
		goto out;
	}
	if (n_ents == 0)
		goto out;
	a = pci_alloc();
	if (!a) {
		rc = dt_err_set(err, -ENOMEM, "libpci: cannot allocate its state");
		goto out;
	}
	a->error = guard_error;
	a->warning = guard_warning;
	a->debug = guard_debug;
	guard_warnings = warnings;
	a->method = PCI_ACCESS_SYS_BUS_PCI;
	snprintf(path, sizeof(path), "%s/bus/pci", sys);
	/* Names come from hwdb's PCI tables, never from the host's pci.ids or
	 * udev hwdb: the agent reads sysfs and nothing else. */
	{
		/* libpci takes char *, and copies the values. */
		char p_hwdb[] = "hwdb.disable", v_one[] = "1", p_sysfs[] = "sysfs.path";

		pci_set_param(a, p_hwdb, v_one);
		pci_set_param(a, p_sysfs, path);
	}
	rc = guarded_init(a, err);
	if (rc) {
		dt_err_prefix(err, "libpci: ");
		goto out;
	}
	enumerate(sys, a, ents, n_ents, clean, recs, &n_recs, warnings);
	if (n_recs)
		qsort(recs, n_recs, sizeof(*recs), rec_cmp);
out:
	if (a)
		pci_cleanup(a);
	guard_warnings = prev_warnings;
	free(ents);
	if (rc) {
		free(recs);
		return rc;
	}
	*out = recs;
	*n = n_recs;
	return 0;
}
