/* obs_http.c - /metrics, /healthz and /readyz over libmicrohttpd, and the
 * daemon's own pages. */
#include "obs_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "obs_log.h"

/* Bounds that keep a scraper, a probe and a few stuck clients served. */
#define HTTP_MAX_CONNECTIONS 32
#define HTTP_MAX_PER_CLIENT 8
#define HTTP_IDLE_TIMEOUT_S 10
#define HTTP_CONN_MEMORY (32 * 1024)
#define HTTP_BACKLOG 32

struct obs_http {
	struct MHD_Daemon *daemon;
	struct obs_registry *reg;
	obs_ready_fn ready;
	void *ready_arg;
	obs_ready_fn live;              /* NULL: /healthz is 200 while the process serves */
	void *live_arg;
	obs_page_fn page;
	void *page_arg;
	int port;
};

struct obs_http_request {
	struct MHD_Connection *conn;
	const char *path;
};

/* What every page carries: nothing runs, nothing loads from elsewhere,
 * nothing is kept (the pages are a snapshot of live state). */
static const char page_csp[] =
	"default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
	"base-uri 'none'; frame-ancestors 'none'";

/* ---- the listening socket ---- */

/* Splits "host:port", ":port" or "[v6]:port"; host is "" for every address. */
static int split_addr(const char *addr, char *host, size_t hostlen, char *port,
		      size_t portlen, struct dt_err *err)
{
	const char *colon, *hstart = addr, *hend;

	if (addr[0] == '[') {
		hstart = addr + 1;
		hend = strchr(hstart, ']');
		if (!hend || hend[1] != ':')
			return dt_err_set(err, -EINVAL, "address \"%s\": expected [IPV6]:PORT", addr);
		colon = hend + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || memchr(addr, ':', (size_t)(colon - addr)))
			return dt_err_set(err, -EINVAL,
					  "address \"%s\": expected HOST:PORT, :PORT or [IPV6]:PORT",
					  addr);
		hend = colon;
	}
	if ((size_t)(hend - hstart) >= hostlen || strlen(colon + 1) >= portlen)
		return dt_err_set(err, -EINVAL, "address \"%s\": too long", addr);
	memcpy(host, hstart, (size_t)(hend - hstart));
	host[hend - hstart] = '\0';
	strcpy(port, colon + 1);
	if (!port[0] || strspn(port, "0123456789") != strlen(port) || atol(port) > 65535)
		return dt_err_set(err, -EINVAL, "address \"%s\": port \"%s\" is not 0-65535",
				  addr, port);
	return 0;
}

static int listen_on(const struct sockaddr *sa, socklen_t len, struct dt_err *err,
		     const char *addr)
{
	int one = 1, zero = 0;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return dt_err_set(err, -errno, "%s: socket: %s", addr, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* An IPv6 wildcard also takes IPv4 clients. */
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, sa, len) < 0 || listen(fd, HTTP_BACKLOG) < 0) {
		int rc = dt_err_set(err, -errno, "%s: %s", addr, strerror(errno));

		close(fd);
		return rc;
	}
	return fd;
}

/* A listening socket for addr (its fd), or a negative errno. */
static int open_listener(const char *addr, struct dt_err *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char host[256], port[8];
	int rc, gai;

	rc = split_addr(addr, host, sizeof(host), port, sizeof(port), err);
	if (rc)
		return rc;
	if (!host[0]) {
		struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT,
					     .sin6_port = htons((uint16_t)atoi(port)) };
		struct sockaddr_in any4 = { .sin_family = AF_INET,
					    .sin_addr.s_addr = htonl(INADDR_ANY),
					    .sin_port = any6.sin6_port };

		rc = listen_on((struct sockaddr *)&any6, sizeof(any6), err, addr);
		if (rc == -EAFNOSUPPORT)    /* a host without IPv6 */
			rc = listen_on((struct sockaddr *)&any4, sizeof(any4), err, addr);
		return rc;
	}
	gai = getaddrinfo(host, port, &hints, &res);
	if (gai)
		return dt_err_set(err, -EINVAL, "address \"%s\": %s", addr, gai_strerror(gai));
	rc = dt_err_set(err, -EADDRNOTAVAIL, "address \"%s\": no usable address", addr);
	for (ai = res; ai && rc < 0; ai = ai->ai_next)
		rc = listen_on(ai->ai_addr, ai->ai_addrlen, err, addr);
	freeaddrinfo(res);
	return rc;
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* ---- requests ---- */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *type, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;      /* MHD closes the connection */
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status,
				  const char *text)
{
	return reply(conn, status, "text/plain; charset=utf-8", (char *)text, strlen(text),
		     MHD_RESPMEM_MUST_COPY);
}

static enum MHD_Result serve_metrics(struct obs_http *srv, struct MHD_Connection *conn)
{
	struct strbuf out = STRBUF_INIT;
	struct dt_err err;
	size_t len;
	char *body;

	if (obs_registry_render(srv->reg, &out, &err)) {
		sb_free(&out);
		obs_log(OBS_ERROR, "metrics_render_failed", "error", err.msg, NULL);
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render metrics\n");
	}
	len = out.len;
	body = sb_detach(&out);
	if (!body)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len,
		     MHD_RESPMEM_MUST_FREE);
}

/* /readyz with the ready callback, /healthz with the live one. */
static enum MHD_Result serve_check(struct MHD_Connection *conn, obs_ready_fn fn, void *arg)
{
	char why[512] = "not ready";
	char body[sizeof(why) + 1];

	if (!fn || fn(arg, why, sizeof(why)))
		return reply_text(conn, MHD_HTTP_OK, "ok\n");
	why[sizeof(why) - 1] = '\0';
	snprintf(body, sizeof(body), "%s\n", why);
	return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, body);
}

const char *obs_http_path(const struct obs_http_request *r)
{
	return r->path;
}

const char *obs_http_arg(const struct obs_http_request *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result serve_page(struct obs_http *srv, struct MHD_Connection *conn,
				  const char *url)
{
	struct obs_http_request req = { conn, url };
	struct obs_http_page page = { .status = MHD_HTTP_OK,
				      .content_type = "text/html; charset=utf-8" };
	struct MHD_Response *resp;
	enum MHD_Result ret;
	size_t len;
	char *body;
	int rc;

	sb_init(&page.body);
	rc = srv->page(srv->page_arg, &req, &page);
	if (!rc && sb_error(&page.body))
		rc = -ENOMEM;
	if (rc) {
		sb_free(&page.body);
		if (rc == -ENOENT)
			return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
		obs_logf(OBS_ERROR, "page_failed", "path", "%s", url);
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render the page\n");
	}
	len = page.body.len;
	body = sb_detach(&page.body);
	resp = body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE) : NULL;
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, page.content_type);
	MHD_add_response_header(resp, "Content-Security-Policy", page_csp);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, page.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version,
			      const char *upload_data, size_t *upload_data_size,
			      void **con_cls)
{
	struct obs_http *srv = cls;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	/* Answered on the first call: these requests have no body to wait
	 * for, and MHD drops whatever body another method sent. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (strcmp(url, "/metrics") == 0)
		return serve_metrics(srv, conn);
	if (strcmp(url, "/healthz") == 0)
		return serve_check(conn, srv->live, srv->live_arg);
	if (strcmp(url, "/readyz") == 0)
		return serve_check(conn, srv->ready, srv->ready_arg);
	if (srv->page)
		return serve_page(srv, conn, url);
	return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* MHD's own messages (a refused connection, a malformed request) become
 * log events. */
static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t len;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	obs_log(OBS_WARN, "http_server", "msg", msg, NULL);
}

int obs_http_start(const char *addr, struct obs_registry *reg, obs_ready_fn ready,
		   void *ready_arg, struct obs_http **out, struct dt_err *err)
{
	struct obs_http_opts o = { .addr = addr, .reg = reg, .ready = ready,
				   .ready_arg = ready_arg };

	return obs_http_start_opts(&o, out, err);
}

int obs_http_start_opts(const struct obs_http_opts *o, struct obs_http **out,
			struct dt_err *err)
{
	const char *addr = o->addr;
	struct obs_http *srv;
	int fd;

	fd = open_listener(addr, err);
	if (fd < 0)
		return dt_err_prefix(err, "http: ");
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		close(fd);
		return dt_err_set(err, -ENOMEM, "http: out of memory");
	}
	srv->reg = o->reg;
	srv->ready = o->ready;
	srv->ready_arg = o->ready_arg;
	srv->live = o->live;
	srv->live_arg = o->live_arg;
	srv->page = o->page;
	srv->page_arg = o->page_arg;
	srv->port = bound_port(fd);
	srv->daemon = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_MAX_PER_CLIENT,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
		MHD_OPTION_END);
	if (!srv->daemon) {
		close(fd);
		free(srv);
		return dt_err_set(err, -EIO, "http: %s: cannot start the server", addr);
	}
	*out = srv;
	return 0;
}

int obs_http_port(const struct obs_http *srv)
{
	return srv->port;
}

void obs_http_stop(struct obs_http *srv)
{
	if (!srv)
		return;
	MHD_stop_daemon(srv->daemon);   /* also closes the listening socket */
	free(srv);
}
