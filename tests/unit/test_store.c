/* test_store.c - the coordinator's store: record round trips, upserts,
 * batches, migrations, reopen, SIGKILL while writing, and the faults an
 * operator meets (corrupt file, read-only, full disk). The fault cases
 * that need a tmpfs mount it in a private mount namespace (root only) and
 * say so when they cannot. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt_test.h"
#include "store.h"
#include "store_sqlite.h"

static char tmpdir[] = "/tmp/dt_store.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[4][512];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int suite_init(void)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_cleanup(void)
{
	umount2(tmp_path("mnt"), MNT_DETACH);
	return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- helpers ---------------------------------------------------------- */

static struct store *open_ok(const char *uri)
{
	struct dt_err err = { 0 };
	struct store *s = NULL;
	int rc = store_open(uri, NULL, &s, &err);

	if (rc)
		fprintf(stderr, "\n  store_open(%s): %d %s\n", uri, rc, err.msg);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	return s;
}

/* Writable copies of string literals for records (their fields are char *). */
#define W(lit) ((char *)(uintptr_t)(const char *)(lit))

static void fill_node(struct store_node *n, const char *name, uint64_t seq)
{
	static char *diffs[] = { W("gpu 3: missing"), W(""), W("efa 1: wrong PCIe root") };
	static uint8_t report[] = { 0x0a, 0x00, 0xff, 0x10, 0x00, 0x7f };

	memset(n, 0, sizeof(*n));
	n->name = W(name);
	n->instance_type = W("p5.48xlarge");
	n->verdict = W("drift");
	n->differences = diffs;
	n->n_differences = 3;
	n->agent_version = W("0.1.0");
	n->boot_id = W("7d1f0c2e-boot");
	n->last_seq = seq;
	n->first_seen_ns = 1700000000000000000LL;
	n->last_report_ns = 1700000030000000000LL + (int64_t)seq;
	n->report = report;
	n->report_len = sizeof(report);
	n->gpus = 8;
	n->efas = 32;
	n->shape_key = W("gpu8:efa32:roots4");
	n->drifted = true;
}

static void assert_node_eq(const struct store_node *got, const struct store_node *want)
{
	DT_ASSERT_STR(got->name, want->name);
	DT_ASSERT_STR(got->instance_type, want->instance_type);
	DT_ASSERT_STR(got->verdict, want->verdict);
	CU_ASSERT_EQUAL_FATAL(got->n_differences, want->n_differences);
	for (size_t i = 0; i < want->n_differences; i++)
		DT_ASSERT_STR(got->differences[i], want->differences[i]);
	DT_ASSERT_STR(got->agent_version, want->agent_version);
	DT_ASSERT_STR(got->boot_id, want->boot_id);
	CU_ASSERT_EQUAL(got->last_seq, want->last_seq);
	CU_ASSERT_EQUAL(got->first_seen_ns, want->first_seen_ns);
	CU_ASSERT_EQUAL(got->last_report_ns, want->last_report_ns);
	CU_ASSERT_EQUAL_FATAL(got->report_len, want->report_len);
	CU_ASSERT(want->report_len == 0 || memcmp(got->report, want->report, want->report_len) == 0);
	CU_ASSERT_EQUAL(got->gpus, want->gpus);
	CU_ASSERT_EQUAL(got->efas, want->efas);
	DT_ASSERT_STR(got->shape_key, want->shape_key);
	CU_ASSERT_EQUAL(got->drifted, want->drifted);
}

static int count_node(struct store_node *rec, void *arg)
{
	(void)rec;
	(*(int *)arg)++;
	return 0;
}

static int count_nodes(struct store *s)
{
	int n = 0;

	CU_ASSERT_EQUAL(store_list_nodes(s, count_node, &n, NULL), 0);
	return n;
}

/* The whole file, to check that a refused database was left untouched. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
			*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static void assert_unchanged(const char *path, const uint8_t *before, size_t len)
{
	size_t now_len;
	uint8_t *now = slurp(path, &now_len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(now);
	CU_ASSERT_EQUAL(now_len, len);
	CU_ASSERT(now_len == len && memcmp(now, before, len) == 0);
	free(now);
}

/* Open must fail with code, name the file, and leave it byte-identical. */
static void assert_refused(const char *path, int code, const char *word)
{
	struct dt_err err = { 0 };
	struct store *s = NULL;
	size_t len;
	uint8_t *before = slurp(path, &len);
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(before);
	rc = store_open(path, NULL, &s, &err);
	if (rc != code)
		fprintf(stderr, "\n  %s: got %d (%s), want %d\n", path, rc, err.msg, code);
	CU_ASSERT_EQUAL(rc, code);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, word));
	assert_unchanged(path, before, len);
	free(before);
	store_close(s);
}

/* ---- records ---------------------------------------------------------- */

static void test_node_roundtrip(void)
{
	struct store *s = open_ok("memory:");
	struct store_node n, got;

	fill_node(&n, "ip-10-0-0-1", 42);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(store_get_node(s, "ip-10-0-0-1", &got, NULL), 0);
	assert_node_eq(&got, &n);
	store_node_done(&got);
	CU_ASSERT_PTR_NULL(got.name);
	DT_ASSERT_STR(store_backend(s), "sqlite");
	store_close(s);
}

/* NULL strings come back as "", no lists and no report as empty ones. */
static void test_node_empty_fields(void)
{
	struct store *s = open_ok("memory:");
	struct store_node n = { .name = W("bare") }, got;

	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(store_get_node(s, "bare", &got, NULL), 0);
	DT_ASSERT_STR(got.verdict, "");
	DT_ASSERT_STR(got.shape_key, "");
	CU_ASSERT_EQUAL(got.n_differences, 0);
	CU_ASSERT_PTR_NULL(got.differences);
	CU_ASSERT_EQUAL(got.report_len, 0);
	CU_ASSERT_PTR_NULL(got.report);
	store_node_done(&got);
	store_close(s);
}

static void test_node_upsert(void)
{
	struct store *s = open_ok("memory:");
	struct store_node n, got;
	char *one[] = { W("only") };

	fill_node(&n, "n1", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	n.last_seq = 2;
	n.verdict = W("match");
	n.differences = one;
	n.n_differences = 1;
	n.first_seen_ns = 5;            /* ignored: the first sighting stays */
	n.report_len = 2;
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	CU_ASSERT_EQUAL(count_nodes(s), 1);
	CU_ASSERT_EQUAL_FATAL(store_get_node(s, "n1", &got, NULL), 0);
	n.first_seen_ns = 1700000000000000000LL;
	assert_node_eq(&got, &n);
	store_node_done(&got);
	store_close(s);
}

static void test_node_missing_and_delete(void)
{
	struct store *s = open_ok("memory:");
	struct dt_err err = { 0 };
	struct store_node n, got;

	CU_ASSERT_EQUAL(store_get_node(s, "ghost", &got, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "ghost"));
	fill_node(&n, "n1", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	CU_ASSERT_EQUAL(store_delete_node(s, "n1", NULL), 0);
	CU_ASSERT_EQUAL(store_get_node(s, "n1", &got, NULL), -ENOENT);
	CU_ASSERT_EQUAL(store_delete_node(s, "n1", NULL), 0);     /* idempotent */
	n.name = W("");
	CU_ASSERT_EQUAL(store_put_node(s, &n, &err), -EINVAL);
	store_close(s);
}

/* A heartbeat's touch moves the sequence, times, boot id and agent version
 * only; touching a node the store lacks fails the whole commit. */
static void test_node_touch(void)
{
	struct store *s = open_ok("memory:");
	struct dt_err err = { 0 };
	struct store_node n, t, ghost, got;
	struct store_batch b[2] = { { .node = &n }, { .touch = &ghost } };

	fill_node(&n, "n1", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	t = (struct store_node){ .name = W("n1"), .agent_version = W("v2"), .boot_id = W("b2"),
				 .last_seq = 99, .last_report_ns = 1800000000000000000LL,
				 .verdict = W("match") };       /* not taken by a touch */
	b[0] = (struct store_batch){ .touch = &t };
	CU_ASSERT_EQUAL(store_commit(s, b, 1, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(store_get_node(s, "n1", &got, NULL), 0);
	n.agent_version = t.agent_version;
	n.boot_id = t.boot_id;
	n.last_seq = t.last_seq;
	n.last_report_ns = t.last_report_ns;
	assert_node_eq(&got, &n);
	store_node_done(&got);

	fill_node(&n, "n2", 2);
	ghost = (struct store_node){ .name = W("ghost"), .last_seq = 1 };
	b[0] = (struct store_batch){ .node = &n };
	CU_ASSERT_EQUAL(store_commit(s, b, 2, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "ghost"));
	CU_ASSERT_EQUAL(store_get_node(s, "n2", &got, NULL), -ENOENT);   /* rolled back */
	store_close(s);
}

static int take_learned(struct store_learned *rec, void *arg)
{
	struct store_learned *out = arg;

	store_learned_done(out);        /* keep the last one */
	*out = *rec;
	memset(rec, 0, sizeof(*rec));
	return 0;
}

static void test_learned_roundtrip_and_upsert(void)
{
	struct store *s = open_ok("memory:");
	char *nodes[] = { W("a"), W("b") }, *nodes3[] = { W("a"), W("b"), W("c") };
	struct store_learned l = {
		.instance_type = W("g9.xlarge"), .shape_key = W("gpu1"),
		.hwdb_text = W("g9.xlarge:\n  gpus: 1\n"),
		.nodes = nodes, .n_nodes = 2, .learned_ns = 123,
	}, got = { 0 };

	CU_ASSERT_EQUAL(store_put_learned(s, &l, NULL), 0);
	CU_ASSERT_EQUAL(store_list_learned(s, take_learned, &got, NULL), 0);
	DT_ASSERT_STR(got.instance_type, "g9.xlarge");
	DT_ASSERT_STR(got.shape_key, "gpu1");
	DT_ASSERT_STR(got.hwdb_text, l.hwdb_text);
	CU_ASSERT_EQUAL_FATAL(got.n_nodes, 2);
	DT_ASSERT_STR(got.nodes[1], "b");
	CU_ASSERT_EQUAL(got.learned_ns, 123);
	store_learned_done(&got);

	l.shape_key = W("gpu1b");          /* re-learned: replaces the entry */
	l.nodes = nodes3;
	l.n_nodes = 3;
	CU_ASSERT_EQUAL(store_put_learned(s, &l, NULL), 0);
	CU_ASSERT_EQUAL(store_list_learned(s, take_learned, &got, NULL), 0);
	DT_ASSERT_STR(got.shape_key, "gpu1b");
	CU_ASSERT_EQUAL(got.n_nodes, 3);
	store_learned_done(&got);
	store_close(s);
}

struct conflicts_seen {
	char keys[8][96];
	int64_t first[8];
	int n;
};

static int collect_conflict(struct store_conflict *c, void *arg)
{
	struct conflicts_seen *seen = arg;

	if (seen->n == 8)
		return -E2BIG;
	snprintf(seen->keys[seen->n], sizeof(seen->keys[0]), "%s/%s/%s", c->instance_type,
		 c->shape_key, c->node);
	seen->first[seen->n++] = c->first_seen_ns;
	return 0;
}

static void test_conflicts(void)
{
	struct store *s = open_ok("memory:");
	struct store_conflict c[] = {
		{ W("g9.xlarge"), W("shapeB"), W("n3"), 30 },
		{ W("g9.xlarge"), W("shapeA"), W("n1"), 10 },
		{ W("h1.small"), W("x"), W("m1"), 5 },
	}, again = { W("g9.xlarge"), W("shapeA"), W("n1"), 99 };
	struct store_batch b = { .conflicts = c, .n_conflicts = 3 };
	struct conflicts_seen seen = { 0 };

	CU_ASSERT_EQUAL(store_commit(s, &b, 1, NULL), 0);
	CU_ASSERT_EQUAL(store_put_conflict(s, &again, NULL), 0);   /* keeps first_seen 10 */
	CU_ASSERT_EQUAL(store_list_conflicts(s, collect_conflict, &seen, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(seen.n, 3);
	DT_ASSERT_STR(seen.keys[0], "g9.xlarge/shapeA/n1");
	CU_ASSERT_EQUAL(seen.first[0], 10);
	DT_ASSERT_STR(seen.keys[1], "g9.xlarge/shapeB/n3");
	DT_ASSERT_STR(seen.keys[2], "h1.small/x/m1");

	CU_ASSERT_EQUAL(store_clear_conflicts(s, "g9.xlarge", NULL), 0);
	memset(&seen, 0, sizeof(seen));
	CU_ASSERT_EQUAL(store_list_conflicts(s, collect_conflict, &seen, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(seen.n, 1);
	DT_ASSERT_STR(seen.keys[0], "h1.small/x/m1");
	store_close(s);
}

/* One report's effects land together or not at all. */
static void test_batch_is_atomic(void)
{
	struct store *s = open_ok("memory:");
	struct store_node n;
	struct store_learned l = { .instance_type = W("g9.xlarge"), .shape_key = W("k") };
	struct store_conflict bad = { W("g9.xlarge"), W("k"), NULL, 1 };   /* no node: invalid */
	struct store_batch b[2] = {
		{ .node = &n, .learned = &l },
		{ .clear_conflicts_type = "g9.xlarge", .conflicts = &bad, .n_conflicts = 1 },
	};
	struct store_learned got = { 0 };
	struct dt_err err = { 0 };

	fill_node(&n, "n1", 1);
	CU_ASSERT_EQUAL(store_commit(s, b, 2, &err), -EINVAL);
	CU_ASSERT_EQUAL(count_nodes(s), 0);
	CU_ASSERT_EQUAL(store_list_learned(s, take_learned, &got, NULL), 0);
	CU_ASSERT_PTR_NULL(got.instance_type);

	CU_ASSERT_EQUAL(store_commit(s, b, 1, &err), 0);
	CU_ASSERT_EQUAL(count_nodes(s), 1);
	CU_ASSERT_EQUAL(store_list_learned(s, take_learned, &got, NULL), 0);
	DT_ASSERT_STR(got.instance_type, "g9.xlarge");
	store_learned_done(&got);
	CU_ASSERT_EQUAL(store_ready(s, NULL), 0);
	store_close(s);
}

static int stop_at_second(struct store_node *rec, void *arg)
{
	char **taken = arg;

	if (!taken[0]) {
		taken[0] = rec->name;   /* take one string: the store must not free it */
		rec->name = NULL;
		return 0;
	}
	return 7;
}

static void test_list_order_stop_and_take(void)
{
	struct store *s = open_ok("memory:");
	char *taken[1] = { NULL };
	struct store_node n;

	fill_node(&n, "b", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	fill_node(&n, "a", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	fill_node(&n, "c", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	CU_ASSERT_EQUAL(store_list_nodes(s, stop_at_second, taken, NULL), 7);
	DT_ASSERT_STR(taken[0], "a");
	free(taken[0]);
	CU_ASSERT_EQUAL(count_nodes(s), 3);     /* the statement was reset */
	store_close(s);
}

static void test_uris(void)
{
	struct dt_err err = { 0 };
	struct store *s = NULL;

	CU_ASSERT_EQUAL(store_open("postgres://db/x", NULL, &s, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown scheme"));
	CU_ASSERT_EQUAL(store_open("sqlite:", NULL, &s, &err), -EINVAL);
	CU_ASSERT_EQUAL(store_open("", NULL, &s, &err), -EINVAL);
	CU_ASSERT_EQUAL(store_open(tmp_path("no/such/dir/db"), NULL, &s, &err), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no/such/dir/db"));
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_EQUAL(store_ready(NULL, &err), -ENODEV);

	s = open_ok(tmp_path("uri.db"));
	DT_ASSERT_STR(store_location(s), tmp_path("uri.db"));
	store_close(s);
	{
		char uri[600];

		snprintf(uri, sizeof(uri), "sqlite:%s", tmp_path("uri.db"));
		s = open_ok(uri);
		DT_ASSERT_STR(store_location(s), tmp_path("uri.db"));
		CU_ASSERT_EQUAL(store_ready(s, NULL), 0);
		store_close(s);
	}
}

/* ---- persistence and schema ------------------------------------------ */

static void test_reopen_has_everything(void)
{
	const char *path = tmp_path("reopen.db");
	struct store *s = open_ok(path);
	char *nodes[] = { W("n1"), W("n2") };
	struct store_learned l = { W("g9.xlarge"), W("k"), W("text"), nodes, 2, 9 }, gotl = { 0 };
	struct store_conflict c = { W("h1.small"), W("x"), W("m1"), 5 };
	struct conflicts_seen seen = { 0 };
	struct store_node n, got;
	struct store_batch b = { .node = &n, .learned = &l, .conflicts = &c, .n_conflicts = 1 };

	fill_node(&n, "n1", 77);
	CU_ASSERT_EQUAL(store_commit(s, &b, 1, NULL), 0);
	store_close(s);

	s = open_ok(path);
	CU_ASSERT_EQUAL_FATAL(store_get_node(s, "n1", &got, NULL), 0);
	assert_node_eq(&got, &n);
	store_node_done(&got);
	CU_ASSERT_EQUAL(store_list_learned(s, take_learned, &gotl, NULL), 0);
	DT_ASSERT_STR(gotl.hwdb_text, "text");
	store_learned_done(&gotl);
	CU_ASSERT_EQUAL(store_list_conflicts(s, collect_conflict, &seen, NULL), 0);
	CU_ASSERT_EQUAL(seen.n, 1);
	store_close(s);
}

static int raw_version(const char *path)
{
	sqlite3 *db = NULL;
	int v = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		store_schema_version(db, path, &v, NULL);
	sqlite3_close(db);
	return v;
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* A new file is migrated from version 0; a version-1 file (before node
 * shape keys, and with the heartbeat columns in `nodes`, before version 3
 * moved them to `seen`) keeps every value of its rows. */
static void test_migrations(void)
{
	const char *fresh = tmp_path("fresh.db"), *old = tmp_path("v1.db");
	struct store_node got;
	struct store *s;
	sqlite3 *db = NULL;

	s = open_ok(fresh);
	store_close(s);
	CU_ASSERT_EQUAL(raw_version(fresh), STORE_SCHEMA_LATEST);

	CU_ASSERT_EQUAL_FATAL(sqlite3_open(old, &db), SQLITE_OK);
	CU_ASSERT_EQUAL(store_schema_migrate(db, old, 1, NULL), 0);
	sqlite3_close(db);
	CU_ASSERT_EQUAL(raw_version(old), 1);
	raw_exec(old, "INSERT INTO nodes VALUES ('old', 'p4d.24xlarge', 'match', X'', '0.0.9', "
		      "'b', 3, 1, 2, X'0102', 8, 4)");
	s = open_ok(old);
	CU_ASSERT_EQUAL_FATAL(store_get_node(s, "old", &got, NULL), 0);
	DT_ASSERT_STR(got.instance_type, "p4d.24xlarge");
	CU_ASSERT_EQUAL(got.report_len, 2);
	DT_ASSERT_STR(got.shape_key, "");
	DT_ASSERT_STR(got.agent_version, "0.0.9");
	DT_ASSERT_STR(got.boot_id, "b");
	CU_ASSERT_EQUAL(got.last_seq, 3);
	CU_ASSERT_EQUAL(got.first_seen_ns, 1);
	CU_ASSERT_EQUAL(got.last_report_ns, 2);
	CU_ASSERT_EQUAL(got.gpus, 8);
	CU_ASSERT_EQUAL(got.efas, 4);
	CU_ASSERT_FALSE(got.drifted);
	store_node_done(&got);
	store_close(s);
	CU_ASSERT_EQUAL(raw_version(old), STORE_SCHEMA_LATEST);
}

static void test_future_schema_refused(void)
{
	const char *path = tmp_path("future.db");
	struct store *s = open_ok(path);
	char sql[64];

	store_close(s);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", STORE_SCHEMA_LATEST + 1);
	raw_exec(path, sql);
	assert_refused(path, -ENOTSUP, "newer");
}

static void test_foreign_database_refused(void)
{
	const char *path = tmp_path("foreign.db");

	raw_exec(path, "CREATE TABLE t (x)");
	assert_refused(path, -EINVAL, "not a dratopo database");
	raw_exec(path, "PRAGMA user_version = 1");
	assert_refused(path, -EINVAL, "application id");
}

static void test_corrupt_random_bytes(void)
{
	const char *path = tmp_path("random.db");
	FILE *f = fopen(path, "wb");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	srand(12345);
	for (int i = 0; i < 16384; i++)
		fputc(rand() & 0xff, f);
	fclose(f);
	assert_refused(path, -EBADMSG, "corrupt");
}

static void test_corrupt_truncated(void)
{
	const char *path = tmp_path("truncated.db");
	static uint8_t big[4000];
	struct store *s = open_ok(path);
	struct store_node n;
	struct stat st;
	char name[32];

	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "node-%03d", i);
		fill_node(&n, name, (uint64_t)i);
		n.report = big;
		n.report_len = sizeof(big);
		CU_ASSERT_EQUAL_FATAL(store_put_node(s, &n, NULL), 0);
	}
	store_close(s);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL_FATAL(truncate(path, st.st_size / 3 + 100), 0);
	assert_refused(path, -EBADMSG, "corrupt");
}

/* A child writes acknowledged puts (each ack goes down a pipe after its
 * put returned) until it is killed with SIGKILL at a random point; every
 * acknowledged record must be in the reopened database. */
static void child_writer(const char *path, int ack_fd)
{
	struct store *s = NULL;
	struct store_node n, counter;

	if (store_open(path, NULL, &s, NULL))
		_exit(3);
	for (uint32_t i = 0; i < 1000000; i++) {
		char name[32];
		struct store_batch b[2] = { { .node = &n }, { .node = &counter } };

		snprintf(name, sizeof(name), "n%07u", i);
		fill_node(&n, name, i);
		fill_node(&counter, "counter", i);
		if (store_commit(s, b, 2, NULL))
			_exit(4);
		if (write(ack_fd, &i, sizeof(i)) != (ssize_t)sizeof(i))
			_exit(5);
	}
	_exit(0);
}

static void test_sigkill_keeps_acknowledged(void)
{
	const char *path = tmp_path("killed.db");
	uint32_t ack, kill_after, n_acked = 0;
	struct store_node got;
	struct store *s;
	int fds[2], status;
	pid_t pid;

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	kill_after = 20 + (uint32_t)(rand() % 300);
	CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		child_writer(path, fds[1]);
	}
	close(fds[1]);
	while (read(fds[0], &ack, sizeof(ack)) == (ssize_t)sizeof(ack)) {
		CU_ASSERT_EQUAL(ack, n_acked);
		if (++n_acked == kill_after)
			kill(pid, SIGKILL);
	}
	close(fds[0]);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CU_ASSERT_FATAL(n_acked >= kill_after);

	s = open_ok(path);
	for (uint32_t i = 0; i < n_acked; i++) {
		char name[32];

		snprintf(name, sizeof(name), "n%07u", i);
		if (store_get_node(s, name, &got, NULL)) {
			fprintf(stderr, "\n  acknowledged %s missing (%u acked)\n", name, n_acked);
			CU_FAIL("an acknowledged record is missing");
			break;
		}
		CU_ASSERT_EQUAL(got.last_seq, i);
		store_node_done(&got);
	}
	CU_ASSERT_EQUAL_FATAL(store_get_node(s, "counter", &got, NULL), 0);
	CU_ASSERT(got.last_seq >= n_acked - 1);
	store_node_done(&got);
	store_close(s);
}

/* ---- read-only and full disks ----------------------------------------- */

/* A tmpfs of size_kb at tmpdir/mnt, in a mount namespace of our own so
 * that nothing outlives the test process. 0, or -1 (and the reason
 * printed) where mounting is not allowed. */
static int mount_tmpfs(int size_kb)
{
	static int unshared;
	const char *mnt = tmp_path("mnt");
	char opts[32];

	if (!unshared) {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
			printf("\n  SKIPPED: cannot make a private mount namespace (%s); "
			       "run as root for the read-only and full-disk cases\n", strerror(errno));
			return -1;
		}
		unshared = 1;
	}
	umount2(mnt, MNT_DETACH);
	mkdir(mnt, 0700);
	snprintf(opts, sizeof(opts), "size=%dk", size_kb);
	if (mount("tmpfs", mnt, "tmpfs", 0, opts)) {
		printf("\n  SKIPPED: cannot mount a tmpfs (%s)\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int remount(unsigned long flags)
{
	return mount(NULL, tmp_path("mnt"), NULL, MS_REMOUNT | flags, "size=4096k");
}

/* Without root: the same through permissions (root ignores them). */
static void read_only_by_permissions(void)
{
	const char *dir = tmp_path("rodir"), *path = tmp_path("rodir/ro.db");
	struct store_node n;
	struct store *s;

	mkdir(dir, 0700);
	s = open_ok(path);
	fill_node(&n, "n1", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	store_close(s);
	CU_ASSERT_EQUAL_FATAL(chmod(path, 0400), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(dir, 0500), 0);
	assert_refused(path, -EROFS, "not writable");
	CU_ASSERT_EQUAL(chmod(dir, 0700), 0);
	CU_ASSERT_EQUAL(chmod(path, 0600), 0);
	store_close(open_ok(path));
}

static void test_read_only(void)
{
	const char *path = tmp_path("mnt/ro.db");
	struct store_node n, got;
	struct store *s;

	if (geteuid() != 0) {
		read_only_by_permissions();
		return;
	}
	if (mount_tmpfs(4096))
		return;
	s = open_ok(path);
	fill_node(&n, "n1", 1);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	store_close(s);
	CU_ASSERT_EQUAL_FATAL(remount(MS_RDONLY), 0);
	assert_refused(path, -EROFS, "not writable");

	CU_ASSERT_EQUAL_FATAL(remount(0), 0);
	s = open_ok(path);
	CU_ASSERT_EQUAL(store_get_node(s, "n1", &got, NULL), 0);
	store_node_done(&got);
	fill_node(&n, "n2", 2);
	CU_ASSERT_EQUAL(store_put_node(s, &n, NULL), 0);
	CU_ASSERT_EQUAL(store_ready(s, NULL), 0);
	store_close(s);
	umount2(tmp_path("mnt"), MNT_DETACH);
}

/* Fill the file system with another file until it is full. */
static int fill_disk(const char *filler)
{
	static char block[65536];
	int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int full = 0;

	if (fd < 0)
		return -1;
	while (!full)
		full = write(fd, block, sizeof(block)) < (ssize_t)sizeof(block);
	close(fd);
	return 0;
}

static void test_full_disk(void)
{
	const char *path = tmp_path("mnt/full.db"), *filler = tmp_path("mnt/filler");
	static uint8_t big[32768];
	struct dt_err err = { 0 };
	struct store_node n, got;
	int acked = 0, rc = 0;
	struct store *s;
	char name[32];

	if (mount_tmpfs(4096))
		return;
	s = open_ok(path);
	CU_ASSERT_EQUAL_FATAL(fill_disk(filler), 0);
	for (int i = 0; i < 200 && rc == 0; i++) {
		snprintf(name, sizeof(name), "n%03d", i);
		fill_node(&n, name, (uint64_t)i);
		n.report = big;
		n.report_len = sizeof(big);
		rc = store_put_node(s, &n, &err);
		acked += rc == 0;
	}
	CU_ASSERT_EQUAL(rc, -ENOSPC);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "full"));

	CU_ASSERT_EQUAL(unlink(filler), 0);             /* space returns */
	CU_ASSERT_EQUAL(store_ready(s, &err), 0);
	CU_ASSERT_EQUAL(store_put_node(s, &n, &err), 0);
	acked++;
	store_close(s);

	s = open_ok(path);                              /* passes the integrity check */
	CU_ASSERT_EQUAL(count_nodes(s), acked);
	CU_ASSERT_EQUAL(store_get_node(s, name, &got, NULL), 0);
	CU_ASSERT_EQUAL(got.report_len, sizeof(big));
	store_node_done(&got);
	store_close(s);
	umount2(tmp_path("mnt"), MNT_DETACH);
}

DT_SUITE_MAIN_WITH("store", suite_init, suite_cleanup,
		   DT_TEST(test_node_roundtrip),
		   DT_TEST(test_node_empty_fields),
		   DT_TEST(test_node_upsert),
		   DT_TEST(test_node_missing_and_delete),
		   DT_TEST(test_node_touch),
		   DT_TEST(test_learned_roundtrip_and_upsert),
		   DT_TEST(test_conflicts),
		   DT_TEST(test_batch_is_atomic),
		   DT_TEST(test_list_order_stop_and_take),
		   DT_TEST(test_uris),
		   DT_TEST(test_reopen_has_everything),
		   DT_TEST(test_migrations),
		   DT_TEST(test_future_schema_refused),
		   DT_TEST(test_foreign_database_refused),
		   DT_TEST(test_corrupt_random_bytes),
		   DT_TEST(test_corrupt_truncated),
		   DT_TEST(test_sigkill_keeps_acknowledged),
		   DT_TEST(test_read_only),
		   DT_TEST(test_full_disk))
