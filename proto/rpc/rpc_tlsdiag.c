/* rpc_tlsdiag.c - rpc_diagnose: why a connection to the coordinator fails
 * (rpc_tlsdiag.h), and rpc_tls_refusal_parse for the server's side.
 *
 * The probe does with OpenSSL what gRPC's client does: TCP (or a unix
 * socket) to the same address, TLS 1.2+ with the same certificate, key and
 * CA files, SNI when the host is a name, ALPN "grpc-exp"/"h2", the server's
 * certificate verified against --tls-ca and its name checked against the
 * host (IP SANs for an address, DNS SANs or the CN for a name), then the
 * HTTP/2 preface. What it sees on the way (a ServerHello, an alert, a verify
 * error, the connection closed right after the handshake, a plaintext
 * SETTINGS frame, an "HTTP/1.1" answer) is turned into one sentence.
 *
 * gRPC 1.51's server sends no alert when it refuses a client certificate:
 * under TLS 1.3 the client's handshake has already completed and the
 * connection just closes. So "closed right after our certificate went out,
 * before any session ticket or frame" is read as a refused certificate, and
 * the client's own certificate is checked locally (dates, its chain to our
 * own --tls-ca) to say more.
 *
 * Every wait is bounded by one deadline (poll on non-blocking sockets).
 * Writes go through a BIO that sends with MSG_NOSIGNAL, so a peer that
 * hung up never raises SIGPIPE in the caller's process. */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rpc_internal.h"
#include "rpc_tlsdiag.h"
#include "strbuf.h"

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_SETTINGS_FRAME "\0\0\0\4\0\0\0\0\0"    /* empty SETTINGS, stream 0 */
#define H2_FRAME_SETTINGS 4
#define TLS_RECORD_HANDSHAKE 0x16
#define TLS_RECORD_ALERT 0x15
#define NO_TLS_ANSWER 1                         /* internal: try plaintext */

/* Where to connect, and the name the server's certificate must carry. */
struct target {
	char host[256];
	char name[256];                 /* --tls-server-name, else host */
	char port[8];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool is_unix, abstract, host_is_ip, name_is_ip, name_given;
};

struct probe {
	const struct rpc_tls *tls;
	struct target t;
	int64_t timeout_ms, deadline;   /* CLOCK_MONOTONIC milliseconds */
	/* What the message callback saw during one TLS connection. */
	bool server_hello, sent_cert, ticket;
	int alert;                      /* alert the server sent, -1 none */
};

/* What a server's first bytes say it speaks. */
enum answer { ANSWER_NONE, ANSWER_TLS, ANSWER_H2, ANSWER_HTTP1 };

/* ---- the address ---- */

static bool is_ip_literal(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

static int copy_part(char *dst, size_t size, const char *src, size_t n)
{
	if (n == 0 || n >= size)
		return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

static int parse_unix(const char *addr, struct target *t)
{
	const char *path = strchr(addr, ':') + 1;

	t->is_unix = true;
	t->abstract = !strncmp(addr, "unix-abstract:", 14);
	if (!t->abstract && !strncmp(path, "//", 2))
		path += 2;              /* unix:///abs/path */
	strcpy(t->host, "localhost");  /* gRPC's authority for unix targets */
	return copy_part(t->path, sizeof(t->path), path, strlen(path));
}

/* host[:port] or [v6][:port] (the first of an ipv4:/ipv6: list). */
static int parse_host_port(const char *hp, struct target *t)
{
	size_t n = strcspn(hp, ",");
	const char *port = NULL, *colon;

	strcpy(t->port, "443");         /* gRPC's default for a target without one */
	if (hp[0] == '[') {
		const char *close = memchr(hp, ']', n);

		if (!close || copy_part(t->host, sizeof(t->host), hp + 1, (size_t)(close - hp - 1)))
			return -1;
		if (close[1] == ':')
			port = close + 2;
	} else {
		colon = memchr(hp, ':', n);
		if (colon && memchr(colon + 1, ':', n - (size_t)(colon + 1 - hp)))
			colon = NULL;   /* a bare IPv6 address */
		if (copy_part(t->host, sizeof(t->host), hp, colon ? (size_t)(colon - hp) : n))
			return -1;
		if (colon)
			port = colon + 1;
	}
	if (port && copy_part(t->port, sizeof(t->port), port, n - (size_t)(port - hp)))
		return -1;
	t->host_is_ip = is_ip_literal(t->host);
	return 0;
}

static int parse_target(const char *addr, struct target *t, struct dt_err *err)
{
	const char *hp = addr;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!strncmp(addr, "unix:", 5) || !strncmp(addr, "unix-abstract:", 14)) {
		rc = parse_unix(addr, t);
	} else {
		if (!strncmp(hp, "dns:", 4)) {
			hp += 4;
			if (!strncmp(hp, "//", 2))      /* dns://authority/host:port */
				hp = strchr(hp + 2, '/') ? strchr(hp + 2, '/') + 1 : "";
		} else if (!strncmp(hp, "ipv4:", 5) || !strncmp(hp, "ipv6:", 5)) {
			hp += 5;
		}
		rc = parse_host_port(hp, t);
	}
	return rc ? dt_err_set(err, -EINVAL, "cannot tell host and port in \"%s\"", addr) : 0;
}

/* ---- sockets with a deadline ---- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 0 once fd is readable (or writable), -ETIMEDOUT at the deadline. */
static int wait_fd(int fd, bool for_write, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = for_write ? POLLOUT : POLLIN };

	for (;;) {
		int64_t left = deadline - now_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_one(const struct sockaddr *sa, socklen_t len, int64_t deadline, int *out)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int rc = 0, so_error = 0;
	socklen_t so_len = sizeof(so_error);

	if (fd < 0)
		return -errno;
	if (connect(fd, sa, len) && errno != EINPROGRESS)
		rc = -errno;
	else
		rc = wait_fd(fd, true, deadline);
	if (!rc && getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &so_len))
		rc = -errno;
	else if (!rc && so_error)
		rc = -so_error;
	if (rc) {
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

static int connect_failed(const struct probe *p, int rc, struct dt_err *err)
{
	switch (rc) {
	case -ECONNREFUSED:
		return dt_err_set(err, rc, "connection refused: is the coordinator running, "
				  "and is this its --listen address?");
	case -ETIMEDOUT:
		return dt_err_set(err, rc, "no answer to connect within %lld ms: is the address "
				  "right, and nothing dropping the packets?", (long long)p->timeout_ms);
	case -ENOENT:
		return dt_err_set(err, rc, "no socket %s: is the coordinator running there?",
				  p->t.path);
	default:
		return dt_err_set(err, rc, "cannot connect: %s", strerror(-rc));
	}
}

static int open_unix(const struct probe *p, int *fd)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t n = strlen(p->t.path);
	socklen_t len;

	/* An abstract name starts with a NUL byte; its length is the address's. */
	memcpy(sun.sun_path + p->t.abstract, p->t.path, n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + p->t.abstract);
	return connect_one((struct sockaddr *)&sun, len, p->deadline, fd);
}

/* A connected non-blocking socket in *fd; on failure err says why. */
static int open_conn(const struct probe *p, int *fd, struct dt_err *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	int rc = -EADDRNOTAVAIL, g;

	if (p->t.is_unix) {
		rc = open_unix(p, fd);
		return rc ? connect_failed(p, rc, err) : 0;
	}
	g = getaddrinfo(p->t.host, p->t.port, &hints, &res);
	if (g)
		return dt_err_set(err, -EADDRNOTAVAIL, "cannot resolve %s: %s", p->t.host,
				  gai_strerror(g));
	/* Like gRPC, try every address; the last failure is the one told. */
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		rc = connect_one(ai->ai_addr, ai->ai_addrlen, p->deadline, fd);
		if (!rc)
			break;
	}
	freeaddrinfo(res);
	return rc ? connect_failed(p, rc, err) : 0;
}

/* Send all of buf, within the deadline. */
static int send_all(int fd, const void *buf, size_t len, int64_t deadline)
{
	const char *b = buf;

	while (len) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n < 0) {
			int rc = wait_fd(fd, true, deadline);

			if (rc)
				return rc;
			continue;
		}
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read what arrives until want bytes, EOF or the deadline; the count read. */
static size_t recv_some(int fd, unsigned char *buf, size_t want, int64_t deadline)
{
	size_t got = 0;

	while (got < want && wait_fd(fd, false, deadline) == 0) {
		ssize_t n = recv(fd, buf + got, want - got, 0);

		if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR)))
			break;
		if (n > 0)
			got += (size_t)n;
	}
	return got;
}

/* ---- a BIO on the socket that never raises SIGPIPE ---- */

static int bio_write(BIO *b, const char *buf, int len)
{
	ssize_t n = send((int)(intptr_t)BIO_get_data(b), buf, (size_t)len, MSG_NOSIGNAL);

	BIO_clear_retry_flags(b);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		BIO_set_retry_write(b);
	return (int)n;
}

static int bio_read(BIO *b, char *buf, int len)
{
	ssize_t n = recv((int)(intptr_t)BIO_get_data(b), buf, (size_t)len, 0);

	BIO_clear_retry_flags(b);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		BIO_set_retry_read(b);
	return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b, (void)num, (void)ptr;
	return cmd == BIO_CTRL_FLUSH;   /* nothing is buffered here */
}

static BIO_METHOD *probe_method;
static pthread_once_t probe_method_once = PTHREAD_ONCE_INIT;

/* One method for the process's life: BIO type indexes are a small pool. */
static void make_probe_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOURCE_SINK | BIO_get_new_index(), "dt_rpc probe");

	if (m && BIO_meth_set_write(m, bio_write) && BIO_meth_set_read(m, bio_read) &&
	    BIO_meth_set_ctrl(m, bio_ctrl))
		probe_method = m;
	else
		BIO_meth_free(m);
}

static BIO *probe_bio(int fd)
{
	BIO *b;

	pthread_once(&probe_method_once, make_probe_method);
	b = probe_method ? BIO_new(probe_method) : NULL;
	if (b) {
		BIO_set_data(b, (void *)(intptr_t)fd);
		BIO_set_init(b, 1);
	}
	return b;
}

/* ---- plaintext sniffing ---- */

static enum answer classify(const unsigned char *b, size_t n)
{
	if (n >= 5 && !memcmp(b, "HTTP/", 5))
		return ANSWER_HTTP1;
	if (n >= 3 && (b[0] == TLS_RECORD_HANDSHAKE || b[0] == TLS_RECORD_ALERT) && b[1] == 3)
		return ANSWER_TLS;
	if (n >= 9 && b[3] == H2_FRAME_SETTINGS)
		return ANSWER_H2;
	return ANSWER_NONE;
}

/* Connect, send hello, and see what the first bytes of the answer are. */
static int sniff(const struct probe *p, const void *hello, size_t len, enum answer *out,
		 struct dt_err *err)
{
	unsigned char buf[16];
	int fd, rc = open_conn(p, &fd, err);

	if (rc)
		return rc;
	*out = ANSWER_NONE;
	if (send_all(fd, hello, len, p->deadline) == 0)
		*out = classify(buf, recv_some(fd, buf, 9, p->deadline));
	close(fd);
	return 0;
}

static int sniff_h2(const struct probe *p, enum answer *out, struct dt_err *err)
{
	static const char hello[] = H2_PREFACE H2_SETTINGS_FRAME;

	return sniff(p, hello, sizeof(hello) - 1, out, err);
}

/* A ClientHello as OpenSSL writes it, sent by hand: whether the server
 * answers with TLS is all we want, without finishing (or refusing) a
 * handshake that the server would then log. */
static int sniff_tls(const struct probe *p, enum answer *out, struct dt_err *err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = ctx ? SSL_new(ctx) : NULL;
	BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
	char *hello;
	long len;
	int rc;

	if (!ssl || !rb || !wb) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	SSL_set_bio(ssl, rb, wb);       /* ssl owns both now */
	rb = wb = NULL;
	if (!p->t.name_is_ip)
		SSL_set_tlsext_host_name(ssl, p->t.name);
	SSL_connect(ssl);               /* writes the hello, then wants to read */
	len = BIO_get_mem_data(SSL_get_wbio(ssl), &hello);
	rc = len > 0 ? sniff(p, hello, (size_t)len, out, err)
		     : dt_err_set(err, -EIO, "OpenSSL wrote no ClientHello");
out:
	BIO_free(rb);
	BIO_free(wb);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	return rc;
}

/* ---- the TLS handshake as gRPC makes it ---- */

static void on_msg(int write_p, int version, int content_type, const void *buf, size_t len,
		   SSL *ssl, void *arg)
{
	struct probe *p = arg;
	const unsigned char *b = buf;

	(void)version, (void)ssl;
	if (len < 1)
		return;
	if (content_type == SSL3_RT_ALERT && !write_p && len >= 2 && b[1] != SSL_AD_CLOSE_NOTIFY)
		p->alert = b[1];
	if (content_type != SSL3_RT_HANDSHAKE)
		return;
	if (!write_p && b[0] == SSL3_MT_SERVER_HELLO)
		p->server_hello = true;
	if (!write_p && b[0] == SSL3_MT_NEWSESSION_TICKET)
		p->ticket = true;
	/* A Certificate message with a non-empty list (TLS 1.3 has a context byte). */
	if (write_p && b[0] == SSL3_MT_CERTIFICATE && len > 10)
		p->sent_cert = true;
}

enum io_op { IO_CONNECT, IO_READ, IO_WRITE };

/* One OpenSSL operation driven to its end: > 0 done, 0 failed (the caller
 * looks at what the handshake saw), -ETIMEDOUT. */
static int ssl_run(SSL *ssl, int fd, enum io_op op, void *buf, int len, int64_t deadline)
{
	for (;;) {
		int n, e, rc;

		ERR_clear_error();
		n = op == IO_CONNECT ? SSL_connect(ssl)
		    : op == IO_READ  ? SSL_read(ssl, buf, len)
				     : SSL_write(ssl, buf, len);
		if (n > 0)
			return n;
		e = SSL_get_error(ssl, n);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			return 0;
		rc = wait_fd(fd, e == SSL_ERROR_WANT_WRITE, deadline);
		if (rc)
			return rc;
	}
}

static int client_ctx(const struct rpc_tls *tls, SSL_CTX **out, struct dt_err *err)
{
	static const unsigned char alpn[] = "\x08grpc-exp\x02h2";
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	*out = NULL;
	if (!ctx)
		return dt_err_set(err, -ENOMEM, "out of memory");
	SSL_CTX_set_default_passwd_cb(ctx, rpc_pem_no_passphrase);
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1) ||  /* 0 is success */
	    SSL_CTX_use_certificate_chain_file(ctx, tls->cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, tls->key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_load_verify_locations(ctx, tls->ca, NULL) != 1) {
		SSL_CTX_free(ctx);
		return dt_err_set(err, -EINVAL, "cannot load --tls-cert %s, --tls-key %s or "
				  "--tls-ca %s", tls->cert, tls->key, tls->ca);
	}
	*out = ctx;
	return 0;
}

/* "2026-12-03T08:00:00Z" for a certificate date. */
static void format_time(const ASN1_TIME *t, char *buf, size_t len)
{
	struct tm tm;

	if (!t || !ASN1_TIME_to_tm(t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

/* The first certificate of a PEM file, the others (its chain) in *chain. */
static X509 *read_chain(const char *path, STACK_OF(X509) **chain)
{
	FILE *f = fopen(path, "r");
	X509 *leaf = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL, *x;

	*chain = sk_X509_new_null();
	while (leaf && *chain && (x = PEM_read_X509(f, NULL, NULL, NULL)))
		if (!sk_X509_push(*chain, x))
			X509_free(x);
	ERR_clear_error();          /* the end of the file reads as an error */
	if (f)
		fclose(f);
	return leaf;
}

/* What is wrong with the client's own certificate, seen from here: dates,
 * and whether it chains to our own --tls-ca. "" when nothing is. */
static void own_cert_problem(const struct rpc_tls *tls, char *buf, size_t len)
{
	STACK_OF(X509) *chain = NULL;
	X509 *leaf = read_chain(tls->cert, &chain);
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *vctx = X509_STORE_CTX_new();
	char when[32];

	buf[0] = '\0';
	if (!leaf || !chain || !store || !vctx)
		goto out;
	if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0) {
		format_time(X509_get0_notAfter(leaf), when, sizeof(when));
		snprintf(buf, len, "--tls-cert %s has expired (not after %s): renew it", tls->cert, when);
	} else if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0) {
		format_time(X509_get0_notBefore(leaf), when, sizeof(when));
		snprintf(buf, len, "--tls-cert %s is not valid before %s: is this machine's clock right?",
			 tls->cert, when);
	} else if (X509_STORE_load_file(store, tls->ca) == 1 &&
		   X509_STORE_CTX_init(vctx, store, leaf, chain) == 1 &&
		   X509_verify_cert(vctx) != 1) {
		snprintf(buf, len, "is --tls-cert %s signed by the CA the coordinator trusts (its "
			 "--tls-ca)? It is not signed by --tls-ca %s either (%s)", tls->cert, tls->ca,
			 X509_verify_cert_error_string(X509_STORE_CTX_get_error(vctx)));
	}
out:
	X509_STORE_CTX_free(vctx);
	X509_STORE_free(store);
	sk_X509_pop_free(chain, X509_free);
	X509_free(leaf);
}

/* "unknown CA" -> "unknown ca", as alerts are usually written. */
static void alert_text(int alert, char *buf, size_t len)
{
	snprintf(buf, len, "%s", SSL_alert_desc_string_long(alert));
	for (char *c = buf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
}

static bool alert_about_cert(int alert)
{
	switch (alert) {
	case SSL_AD_BAD_CERTIFICATE: case SSL_AD_UNSUPPORTED_CERTIFICATE:
	case SSL_AD_CERTIFICATE_REVOKED: case SSL_AD_CERTIFICATE_EXPIRED:
	case SSL_AD_CERTIFICATE_UNKNOWN: case SSL_AD_UNKNOWN_CA: case SSL_AD_ACCESS_DENIED:
	case SSL_AD_DECRYPT_ERROR: case SSL_AD_CERTIFICATE_REQUIRED:
		return true;
	default:
		return false;
	}
}

/* The server hung up on (or alerted about) the certificate we sent. */
static int refused_cert(const struct probe *p, struct dt_err *err)
{
	char alert[64] = "", paren[80] = "", own[768];

	if (p->alert >= 0) {
		alert_text(p->alert, alert, sizeof(alert));
		snprintf(paren, sizeof(paren), " (alert: %s)", alert);
	}
	own_cert_problem(p->tls, own, sizeof(own));
	if (own[0])
		return dt_err_set(err, -EACCES, "the coordinator refused this client's certificate "
				  "during the TLS handshake%s: %s", paren, own);
	return dt_err_set(err, -EACCES, "the coordinator refused this client's certificate during "
			  "the TLS handshake%s: is --tls-cert %s signed by the CA the coordinator "
			  "trusts (its --tls-ca), and still valid?", paren, p->tls->cert);
}

static int server_untrusted(const struct probe *p, long verify, struct dt_err *err)
{
	const char *why = X509_verify_cert_error_string(verify);

	if (verify == X509_V_ERR_CERT_HAS_EXPIRED || verify == X509_V_ERR_CERT_NOT_YET_VALID)
		return dt_err_set(err, -EACCES, "the coordinator's certificate is not valid now: %s "
				  "(renew the coordinator's --tls-cert, or check the clocks)", why);
	return dt_err_set(err, -EACCES, "the coordinator's certificate is not trusted by "
			  "--tls-ca %s: %s (is that the CA that signed the coordinator's --tls-cert?)",
			  p->tls->ca, why);
}

/* The names a certificate is valid for, as "DNS:a, IP:b" (or its CN). */
static void cert_names(X509 *cert, struct strbuf *sb)
{
	GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	char ip[INET6_ADDRSTRLEN], cn[256];

	for (int i = 0; names && i < sk_GENERAL_NAME_num(names); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
		const char *sep = sb->len ? ", " : "";

		if (g->type == GEN_DNS)
			sb_printf(sb, "%sDNS:%.*s", sep, ASN1_STRING_length(g->d.dNSName),
				  (const char *)ASN1_STRING_get0_data(g->d.dNSName));
		else if (g->type == GEN_IPADD &&
			 inet_ntop(ASN1_STRING_length(g->d.iPAddress) == 4 ? AF_INET : AF_INET6,
				   ASN1_STRING_get0_data(g->d.iPAddress), ip, sizeof(ip)))
			sb_printf(sb, "%sIP:%s", sep, ip);
	}
	GENERAL_NAMES_free(names);
	if (!sb->len && X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName,
						  cn, sizeof(cn)) > 0)
		sb_printf(sb, "CN=%s", cn);
	if (!sb->len)
		sb_puts(sb, "no name at all");
}

/* gRPC's rule: an address must be an IP SAN; a name a DNS SAN (one-label
 * wildcards) or, without DNS SANs, the CN. */
static int check_name(const struct probe *p, X509 *cert, struct dt_err *err)
{
	struct strbuf names;
	int ok, rc;

	if (!cert)
		return 0;
	ok = p->t.name_is_ip ? X509_check_ip_asc(cert, p->t.name, 0)
			     : X509_check_host(cert, p->t.name, 0,
					       X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, NULL);
	if (ok == 1)
		return 0;
	sb_init(&names);
	cert_names(cert, &names);
	rc = dt_err_set(err, -EACCES, "the coordinator's certificate is not for %s%s (name "
			"mismatch: it names %s): %s, or give the coordinator a certificate "
			"with %s:%s", p->t.name, p->t.name_given ? " (--tls-server-name)" : "",
			sb_str(&names),
			p->t.name_given ? "name one of those with --tls-server-name"
					: "connect by one of those names",
			p->t.name_is_ip ? "IP" : "DNS", p->t.name);
	sb_free(&names);
	return rc;
}

/* The handshake did not complete. */
static int handshake_failed(const struct probe *p, SSL *ssl, struct dt_err *err)
{
	long verify = SSL_get_verify_result(ssl);
	char alert[64];

	if (!p->server_hello)
		return NO_TLS_ANSWER;
	if (verify != X509_V_OK)
		return server_untrusted(p, verify, err);
	if (p->sent_cert && (p->alert < 0 || alert_about_cert(p->alert)))
		return refused_cert(p, err);
	if (p->alert >= 0) {
		alert_text(p->alert, alert, sizeof(alert));
		return dt_err_set(err, -EPROTO, "the coordinator ended the TLS handshake (alert: %s)",
				  alert);
	}
	return dt_err_set(err, -EPROTO, "the TLS handshake with the coordinator failed: %s",
			  ERR_peek_last_error() ? ERR_reason_error_string(ERR_peek_last_error())
						: "the connection closed");
}

/* The handshake completed here: does the server take it, and speak HTTP/2? */
static int after_handshake(struct probe *p, SSL *ssl, int fd, struct dt_err *err)
{
	char hello[] = H2_PREFACE H2_SETTINGS_FRAME;
	const unsigned char *proto = NULL;
	unsigned proto_len = 0;
	char buf[64];
	int rc;

	SSL_get0_alpn_selected(ssl, &proto, &proto_len);
	if (!proto_len)
		return dt_err_set(err, -EPROTO, "the server took TLS but not HTTP/2 (no ALPN h2): is "
				  "this the coordinator's gRPC address (--listen, not --http)?");
	rc = check_name(p, SSL_get0_peer_certificate(ssl), err);
	if (rc)
		return rc;
	rc = ssl_run(ssl, fd, IO_WRITE, hello, (int)sizeof(hello) - 1, p->deadline);
	if (rc > 0)
		rc = ssl_run(ssl, fd, IO_READ, buf, (int)sizeof(buf), p->deadline);
	if (rc > 0 || (rc == 0 && p->ticket && p->alert < 0))
		return 0;       /* it answered: the failure was something else */
	if (rc == -ETIMEDOUT)
		return dt_err_set(err, rc, "the coordinator took the TLS handshake but sent nothing "
				  "within %lld ms", (long long)p->timeout_ms);
	return refused_cert(p, err);
}

static int probe_tls(struct probe *p, struct dt_err *err)
{
	SSL_CTX *ctx;
	SSL *ssl = NULL;
	BIO *bio;
	int fd = -1, rc = client_ctx(p->tls, &ctx, err);

	if (rc)
		return rc;
	rc = open_conn(p, &fd, err);
	if (rc)
		goto out;
	ssl = SSL_new(ctx);
	bio = ssl ? probe_bio(fd) : NULL;
	if (!bio) {
		rc = dt_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	SSL_set_bio(ssl, bio, bio);             /* ssl owns it */
	if (!p->t.name_is_ip)
		SSL_set_tlsext_host_name(ssl, p->t.name);
	SSL_set_msg_callback(ssl, on_msg);
	SSL_set_msg_callback_arg(ssl, p);
	p->server_hello = p->sent_cert = p->ticket = false;
	p->alert = -1;
	rc = ssl_run(ssl, fd, IO_CONNECT, NULL, 0, p->deadline);
	if (rc == -ETIMEDOUT)
		rc = dt_err_set(err, rc, "no answer to the TLS handshake within %lld ms",
				(long long)p->timeout_ms);
	else if (rc == 0)
		rc = handshake_failed(p, ssl, err);
	else
		rc = after_handshake(p, ssl, fd, err);
out:
	SSL_free(ssl);
	if (fd >= 0)
		close(fd);
	SSL_CTX_free(ctx);
	return rc;
}

static int plaintext_answer(enum answer a, struct dt_err *err)
{
	if (a == ANSWER_HTTP1)
		return dt_err_set(err, -EPROTO, "the server answers HTTP/1, not gRPC: is this the "
				  "coordinator's --listen address (not its --http one)?");
	return 0;
}

static int diagnose_tls(struct probe *p, struct dt_err *err)
{
	enum answer a;
	int rc = probe_tls(p, err);

	if (rc != NO_TLS_ANSWER)
		return rc;
	rc = sniff_h2(p, &a, err);
	if (rc)
		return rc;
	if (a == ANSWER_H2)
		return dt_err_set(err, -EPROTO, "the coordinator is not speaking TLS (started with "
				  "--insecure?): give --insecure instead of the --tls-* files, or "
				  "start it with --tls-cert, --tls-key and --tls-ca");
	rc = plaintext_answer(a, err);
	return rc ? rc : dt_err_set(err, -EPROTO, "the server closed the connection without "
				    "answering a TLS handshake: is this the coordinator's address?");
}

static int diagnose_plaintext(struct probe *p, struct dt_err *err)
{
	enum answer a;
	int rc = sniff_tls(p, &a, err);

	if (rc)
		return rc;
	if (a == ANSWER_TLS)
		return dt_err_set(err, -EPROTO, "the coordinator speaks TLS: drop --insecure and give "
				  "--tls-cert, --tls-key and --tls-ca");
	rc = sniff_h2(p, &a, err);
	return rc ? rc : plaintext_answer(a, err);
}

int rpc_diagnose(const char *addr, const struct rpc_tls *tls, int64_t timeout_ms,
		 struct dt_err *err)
{
	struct probe p = { .tls = tls, .timeout_ms = timeout_ms, .alert = -1 };
	int rc;

	if (!addr || !*addr)
		return dt_err_set(err, -EINVAL, "no address");
	if (timeout_ms <= 0)
		return dt_err_set(err, -EINVAL, "a diagnosis needs a timeout");
	rc = rpc_tls_check(tls, err);
	if (!rc)
		rc = parse_target(addr, &p.t, err);
	if (rc)
		return rc;
	p.t.name_given = tls->server_name && *tls->server_name;
	snprintf(p.t.name, sizeof(p.t.name), "%s", p.t.name_given ? tls->server_name : p.t.host);
	p.t.name_is_ip = is_ip_literal(p.t.name);
	p.deadline = now_ms() + timeout_ms;
	rc = tls->insecure ? diagnose_plaintext(&p, err) : diagnose_tls(&p, err);
	ERR_clear_error();      /* leave nothing on the thread's queue for gRPC to find */
	return rc;
}

/* ---- the server's side ---- */

static const struct {
	const char *reason;     /* a part of OpenSSL's reason string */
	const char *hint;
} refusal_hints[] = {
	{ "certificate verify failed",
	  "a client certificate that --tls-ca does not verify (another CA's, or expired)" },
	{ "peer did not return a certificate", "a TLS client without a certificate" },
	{ "wrong version number", "a client not speaking TLS (one given --insecure?)" },
	{ "http request", "a plain HTTP client on the gRPC port" },
	{ "unknown ca", "a client whose --tls-ca does not trust this coordinator's certificate" },
	{ "certificate expired", "a client that finds this coordinator's certificate expired" },
	{ "bad certificate", "a client that refused this coordinator's certificate" },
	{ "unexpected eof", "a client that hung up during the handshake" },
	{ "No match found for server name",
	  "a client that asked (SNI) for a name this coordinator's certificate does not carry" },
};

/* reason = text with trailing dots and blanks dropped; the hint it has. */
static void set_reason(struct rpc_tls_refusal *out, const char *text)
{
	size_t n = strlen(text);

	while (n && (text[n - 1] == '.' || text[n - 1] == ' ' || text[n - 1] == '\n'))
		n--;
	snprintf(out->reason, sizeof(out->reason), "%.*s", (int)n, text);
	out->hint = NULL;
	for (size_t i = 0; i < sizeof(refusal_hints) / sizeof(refusal_hints[0]); i++) {
		if (strstr(out->reason, refusal_hints[i].reason)) {
			out->hint = refusal_hints[i].hint;
			break;
		}
	}
}

bool rpc_tls_refusal_parse(const char *message, struct rpc_tls_refusal *out)
{
	static const char fatal[] = "Handshake failed with fatal error ";
	static const char sni[] = "No match found for server name";
	const char *r, *colon;

	if (!message)
		return false;
	if (!strncmp(message, sni, sizeof(sni) - 1)) {
		set_reason(out, message);
		return true;
	}
	if (strncmp(message, fatal, sizeof(fatal) - 1))
		return false;
	/* "SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify failed." */
	r = message + sizeof(fatal) - 1;
	colon = strrchr(r, ':');
	if (colon && colon[1])
		r = colon + 1;
	set_reason(out, r + strspn(r, " "));
	return true;
}
