/* test_certwatch.c - TLS files watched under a running watcher: the
 * `..data` symlink swap kubelet and cert-manager's CSI driver do, a copy
 * over the file, a half-written pair (refused, the old files kept, then
 * taken once whole), a file that is a link into another directory, a
 * refused reload tried again at the poll, SIGHUP's poke; the validity of what is in use (expired, not yet
 * valid, the CA bundle) and the metrics. Certificates come from
 * tests/tls/mkcerts.sh (fixture rpc_tls).
 *
 * The waits for a reload are bounded (10 s) liveness waits: a watcher that
 * never reloads fails; how fast it reloads is not asserted. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "certwatch.h"
#include "dt_test.h"
#include "obs_log.h"
#include "strbuf.h"

#define CERTS DT_BINARY_DIR "/fixtures/tls"
#define NS 1000000000LL
#define WAIT_MS 10000

/* The reload the daemon would do: counts calls, can be told to refuse. */
struct target {
	atomic_int calls;
	atomic_bool refuse;
};

static int reload(void *user, struct dt_err *err)
{
	struct target *t = user;

	atomic_fetch_add(&t->calls, 1);
	return atomic_load(&t->refuse) ? dt_err_set(err, -EINVAL, "key does not belong") : 0;
}

static void copy_file(const char *from, const char *to)
{
	char buf[8192];
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		CU_ASSERT_EQUAL(fwrite(buf, 1, n, out), n);
	fclose(in);
	CU_ASSERT_EQUAL(fclose(out), 0);
}

/* A Secret volume as kubelet writes it: DIR/..<gen>/{tls.crt,tls.key,ca.crt},
 * DIR/..data -> ..<gen>, DIR/tls.crt -> ..data/tls.crt and so on. A new
 * generation is a new directory and an atomic rename of ..data. */
static void volume_write(const char *dir, int gen, const char *crt, const char *key,
			 const char *ca)
{
	char d[512], p[600], tmp[600], data[600];

	snprintf(d, sizeof(d), "%s/..gen_%d", dir, gen);
	CU_ASSERT_EQUAL_FATAL(mkdir(d, 0700), 0);
	snprintf(p, sizeof(p), "%s/tls.crt", d);
	copy_file(crt, p);
	snprintf(p, sizeof(p), "%s/tls.key", d);
	copy_file(key, p);
	snprintf(p, sizeof(p), "%s/ca.crt", d);
	copy_file(ca, p);
	snprintf(tmp, sizeof(tmp), "%s/..data_tmp", dir);
	snprintf(data, sizeof(data), "%s/..data", dir);
	snprintf(p, sizeof(p), "..gen_%d", gen);
	CU_ASSERT_EQUAL_FATAL(symlink(p, tmp), 0);
	CU_ASSERT_EQUAL_FATAL(rename(tmp, data), 0);
	if (gen == 1) {
		static const char *const names[] = { "tls.crt", "tls.key", "ca.crt" };

		for (int i = 0; i < 3; i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
			snprintf(tmp, sizeof(tmp), "..data/%s", names[i]);
			CU_ASSERT_EQUAL_FATAL(symlink(tmp, p), 0);
		}
	}
}

static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

struct fixture {
	char dir[64];
	char crt[128], key[128], ca[128];
	struct target t;
	struct obs_registry *reg;
	struct certwatch *w;
};

static void start(struct fixture *f, int64_t poll_ns)
{
	struct dt_err err = { 0 };
	struct certwatch_opts o;

	snprintf(f->dir, sizeof(f->dir), "/tmp/dt_certwatch_XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(f->dir));
	volume_write(f->dir, 1, CERTS "/server.pem", CERTS "/server.key", CERTS "/ca.pem");
	snprintf(f->crt, sizeof(f->crt), "%s/tls.crt", f->dir);
	snprintf(f->key, sizeof(f->key), "%s/tls.key", f->dir);
	snprintf(f->ca, sizeof(f->ca), "%s/ca.crt", f->dir);
	CU_ASSERT_EQUAL_FATAL(obs_registry_new(&f->reg, &err), 0);
	o = (struct certwatch_opts){ f->crt, f->key, f->ca, "server", reload, &f->t, f->reg,
				     poll_ns, 0 };
	CU_ASSERT_EQUAL_FATAL(certwatch_start(&o, &f->w, &err), 0);
}

static void stop(struct fixture *f)
{
	certwatch_stop(f->w);
	obs_registry_free(f->reg);
	rm_rf(f->dir);
}

/* Wait until the reload function was called more than `calls` times. */
static bool wait_calls(struct fixture *f, int calls)
{
	for (int ms = 0; ms < WAIT_MS; ms += 10) {
		if (atomic_load(&f->t.calls) > calls)
			return true;
		usleep(10000);
	}
	return false;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static bool metrics_have(struct obs_registry *reg, const char *line)
{
	struct strbuf sb = STRBUF_INIT;
	struct dt_err err = { 0 };
	bool found;

	CU_ASSERT_EQUAL(obs_registry_render(reg, &sb, &err), 0);
	found = strstr(sb_str(&sb), line) != NULL;
	if (!found)
		fprintf(stderr, "\n  no \"%s\" in:\n%s", line, sb_str(&sb));
	sb_free(&sb);
	return found;
}

static void test_data_symlink_swap(void)
{
	struct fixture f = { 0 };
	char why[400];

	start(&f, 60 * NS);             /* only inotify can see it in time */
	CU_ASSERT_EQUAL(certwatch_check(f.w, now_ns(), why, sizeof(why)), 0);
	CU_ASSERT(metrics_have(f.reg, "dratopo_tls_reloads_total{result=\"ok\"} 0\n"));
	CU_ASSERT(metrics_have(f.reg, "dratopo_tls_reloads_total{result=\"failed\"} 0\n"));
	CU_ASSERT(metrics_have(f.reg, "dratopo_tls_certificate_valid 1\n"));

	/* renewed in place: a new generation behind the same paths */
	volume_write(f.dir, 2, CERTS "/wrongname-server.pem", CERTS "/wrongname-server.key",
		     CERTS "/ca.pem");
	CU_ASSERT_TRUE(wait_calls(&f, 0));
	CU_ASSERT_EQUAL(certwatch_reloads(f.w), 1);
	CU_ASSERT(metrics_have(f.reg, "dratopo_tls_reloads_total{result=\"ok\"} 1\n"));

	/* an expired certificate comes in: taken (it is what the files hold)
	 * and reported, not a quiet failure */
	volume_write(f.dir, 3, CERTS "/expired-server.pem", CERTS "/expired-server.key",
		     CERTS "/ca.pem");
	CU_ASSERT_TRUE(wait_calls(&f, 1));
	CU_ASSERT_EQUAL(certwatch_check(f.w, now_ns(), why, sizeof(why)), -EKEYEXPIRED);
	CU_ASSERT(strstr(why, "server certificate ") == why);
	CU_ASSERT(strstr(why, "/tls.crt expired at ") != NULL);
	CU_ASSERT(metrics_have(f.reg, "dratopo_tls_certificate_valid 0\n"));
	stop(&f);
}

static void test_copy_over_and_half_written_pair(void)
{
	struct fixture f = { 0 };
	char real[600], why[400];
	int calls;

	start(&f, 60 * NS);
	/* someone copies a new certificate over the file first: the key no
	 * longer belongs to it, the daemon refuses, the old files stay */
	atomic_store(&f.t.refuse, true);
	snprintf(real, sizeof(real), "%s/..gen_1/tls.crt", f.dir);
	copy_file(CERTS "/client-node-02.pem", real);
	CU_ASSERT_TRUE(wait_calls(&f, 0));
	CU_ASSERT_EQUAL(certwatch_reloads(f.w), 0);
	CU_ASSERT(metrics_have(f.reg, "dratopo_tls_reloads_total{result=\"failed\"} 1\n"));
	CU_ASSERT_EQUAL(certwatch_check(f.w, now_ns(), why, sizeof(why)), 0);
	/* then the key: whole again, taken */
	calls = atomic_load(&f.t.calls);
	atomic_store(&f.t.refuse, false);
	snprintf(real, sizeof(real), "%s/..gen_1/tls.key", f.dir);
	copy_file(CERTS "/client-node-02.key", real);
	CU_ASSERT_TRUE(wait_calls(&f, calls));
	CU_ASSERT_EQUAL(certwatch_reloads(f.w), 1);
	stop(&f);
}

static void test_links_into_other_directories(void)
{
	struct fixture f = { 0 };
	char other[64] = "/tmp/dt_certwatch_other_XXXXXX", p[600], link[600];

	start(&f, 60 * NS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(other));
	/* the CA file becomes a link into a directory nobody watches */
	snprintf(p, sizeof(p), "%s/ca.pem", other);
	copy_file(CERTS "/ca.pem", p);
	snprintf(link, sizeof(link), "%s/..gen_1/ca.crt", f.dir);
	CU_ASSERT_EQUAL(unlink(link), 0);
	CU_ASSERT_EQUAL(symlink(p, link), 0);
	CU_ASSERT_TRUE(wait_calls(&f, 0));
	/* the directory it leads into is watched from then on */
	usleep(50000);
	{
		int calls = atomic_load(&f.t.calls);

		copy_file(CERTS "/other-ca.pem", p);
		CU_ASSERT_TRUE(wait_calls(&f, calls));
	}
	stop(&f);
	rm_rf(other);
}

static void test_poll_retries_a_refused_reload(void)
{
	struct fixture f = { 0 };
	char real[600];

	start(&f, NS / 5);              /* a 200 ms poll */
	atomic_store(&f.t.refuse, true);
	snprintf(real, sizeof(real), "%s/..gen_1/tls.crt", f.dir);
	copy_file(CERTS "/client-node-02.pem", real);
	CU_ASSERT_TRUE(wait_calls(&f, 0));
	CU_ASSERT_EQUAL(certwatch_reloads(f.w), 0);
	/* nothing changes on disk, but what refused may take it now (a
	 * permission fixed, a server that could not): the poll tries again */
	atomic_store(&f.t.refuse, false);
	for (int ms = 0; ms < WAIT_MS && !certwatch_reloads(f.w); ms += 10)
		usleep(10000);
	CU_ASSERT_EQUAL(certwatch_reloads(f.w), 1);
	stop(&f);
}

static void test_poke_reloads_unchanged_files(void)
{
	struct fixture f = { 0 };

	start(&f, 60 * NS);
	certwatch_poke(f.w);
	CU_ASSERT_TRUE(wait_calls(&f, 0));
	CU_ASSERT_EQUAL(certwatch_reloads(f.w), 1);
	certwatch_poke(NULL);           /* no-op */
	stop(&f);
}

static void test_validity_window(void)
{
	struct fixture f = { 0 };
	char why[400];

	start(&f, 60 * NS);
	/* mkcerts' certificates are valid from now for two days */
	CU_ASSERT_EQUAL(certwatch_check(f.w, now_ns() - 86400 * NS, why, sizeof(why)), -EKEYEXPIRED);
	CU_ASSERT(strstr(why, "/tls.crt is not valid before ") != NULL);
	CU_ASSERT(strstr(why, "(is the clock right?)") != NULL);
	CU_ASSERT_EQUAL(certwatch_check(f.w, now_ns() + 3 * 86400 * NS, why, sizeof(why)),
			-EKEYEXPIRED);
	CU_ASSERT(strstr(why, "/tls.crt expired at ") != NULL);
	stop(&f);
}

static void test_expired_ca_bundle(void)
{
	struct certwatch_opts o = { CERTS "/server.pem", CERTS "/server.key",
				    CERTS "/expired-server.pem", "client", reload, NULL, NULL, 0, 0 };
	struct target t = { 0 };
	struct certwatch *w = NULL;
	struct dt_err err = { 0 };
	char why[400];

	o.user = &t;
	CU_ASSERT_EQUAL_FATAL(certwatch_start(&o, &w, &err), 0);
	CU_ASSERT_EQUAL(certwatch_check(w, now_ns(), why, sizeof(why)), -EKEYEXPIRED);
	DT_ASSERT_STR(strstr(why, "CA bundle "), why);
	CU_ASSERT(strstr(why, "every certificate in it expired (the last at ") != NULL);
	certwatch_stop(w);
}

static void test_start_errors(void)
{
	struct certwatch_opts o = { CERTS "/server.pem", CERTS "/server.key", "/nonexistent/ca.pem",
				    "server", reload, NULL, NULL, 0, 0 };
	struct certwatch *w = (struct certwatch *)&o;
	struct dt_err err = { 0 };

	CU_ASSERT_EQUAL(certwatch_start(&o, &w, &err), -ENOENT);
	CU_ASSERT_PTR_NULL(w);
	DT_ASSERT_STR(err.msg, "CA bundle /nonexistent/ca.pem: No such file or directory");
	o.ca = CERTS "/ca.pem";
	o.cert = CERTS "/server.key";   /* a key where a certificate belongs */
	memset(&err, 0, sizeof(err));
	CU_ASSERT_EQUAL(certwatch_start(&o, &w, &err), -EINVAL);
	DT_ASSERT_STR(err.msg, "server certificate " CERTS "/server.key: no PEM certificate in it");
	o.reload = NULL;
	CU_ASSERT_EQUAL(certwatch_start(&o, &w, &err), -EINVAL);
	certwatch_stop(NULL);
}

static int quiet(void)
{
	obs_log_set_fd(open("/dev/null", O_WRONLY));
	return 0;
}

DT_SUITE_MAIN_WITH("certwatch", quiet, NULL,
		   DT_TEST(test_data_symlink_swap),
		   DT_TEST(test_copy_over_and_half_written_pair),
		   DT_TEST(test_links_into_other_directories),
		   DT_TEST(test_poll_retries_a_refused_reload),
		   DT_TEST(test_poke_reloads_unchanged_files),
		   DT_TEST(test_validity_window),
		   DT_TEST(test_expired_ca_bundle),
		   DT_TEST(test_start_errors))
