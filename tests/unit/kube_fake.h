/* kube_fake.h - a scripted HTTP/1.1 server on loopback for the kube
 * client's tests: each request is read whole and handed to the test's
 * handler, which answers on the connection (one request per connection:
 * every answer says Connection: close). */
#ifndef DT_KUBE_FAKE_H
#define DT_KUBE_FAKE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct fake_req {
	char method[16];
	char target[4096];              /* path?query */
	char headers[8192];
	char body[65536];
	size_t body_len;
	int n;                          /* 0-based request number */
};

struct fake_server;
typedef void (*fake_handler)(struct fake_server *fs, const struct fake_req *rq, int fd);

struct fake_server {
	int listen_fd;
	int port;
	pthread_t thread;
	fake_handler handler;
	void *arg;
	volatile int stop;
	int n_requests;
	char url[64];
	/* every request's method and target, for the tests to look at */
	char log[64][4200];
};

static inline void fake_write(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

/* A whole answer with a body. extra: more header lines ("X: y\r\n") or "". */
static inline void fake_respond(int fd, int status, const char *extra, const char *body)
{
	char head[1024];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n%s\r\n", status, strlen(body), extra ? extra : "");

	fake_write(fd, head, (size_t)n);
	fake_write(fd, body, strlen(body));
}

/* A chunked stream: the head, then chunks as the test sends them. */
static inline void fake_stream_begin(int fd)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				   "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

	fake_write(fd, head, sizeof(head) - 1);
}

static inline void fake_chunk(int fd, const char *buf, size_t n)
{
	char size[32];
	int k = snprintf(size, sizeof(size), "%zx\r\n", n);

	fake_write(fd, size, (size_t)k);
	fake_write(fd, buf, n);
	fake_write(fd, "\r\n", 2);
}

/* Send text in chunks of `piece` bytes (1: every byte its own chunk). */
static inline void fake_chunks(int fd, const char *text, size_t piece)
{
	size_t n = strlen(text);

	for (size_t i = 0; i < n; i += piece)
		fake_chunk(fd, text + i, n - i < piece ? n - i : piece);
}

static inline void fake_stream_end(int fd)
{
	fake_write(fd, "0\r\n\r\n", 5);
}

static inline int fake_read_request(int fd, struct fake_req *rq)
{
	char buf[80000];
	size_t have = 0;
	char *end = NULL;
	size_t clen = 0;
	const char *cl;

	while (!end) {
		ssize_t r;

		if (have >= sizeof(buf) - 1)
			return -1;
		r = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
		if (r <= 0)
			return -1;
		have += (size_t)r;
		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	*end = '\0';
	sscanf(buf, "%15s %4095s", rq->method, rq->target);
	snprintf(rq->headers, sizeof(rq->headers), "%s", strchr(buf, '\n') + 1);
	cl = strcasestr(rq->headers, "Content-Length:");
	if (cl)
		clen = strtoul(cl + 15, NULL, 10);
	end += 4;
	rq->body_len = have - (size_t)(end - buf);
	memcpy(rq->body, end, rq->body_len);
	while (rq->body_len < clen && rq->body_len < sizeof(rq->body) - 1) {
		ssize_t r = recv(fd, rq->body + rq->body_len, sizeof(rq->body) - 1 - rq->body_len, 0);

		if (r <= 0)
			break;
		rq->body_len += (size_t)r;
	}
	rq->body[rq->body_len] = '\0';
	return 0;
}

static inline void *fake_loop(void *arg)
{
	struct fake_server *fs = arg;

	while (!fs->stop) {
		struct fake_req *rq;
		int fd = accept(fs->listen_fd, NULL, NULL);

		if (fd < 0)
			break;
		if (fs->stop) {
			close(fd);
			break;
		}
		rq = calloc(1, sizeof(*rq));
		if (rq && fake_read_request(fd, rq) == 0) {
			rq->n = fs->n_requests++;
			if (rq->n < 64)
				snprintf(fs->log[rq->n], sizeof(fs->log[0]), "%s %s", rq->method,
					 rq->target);
			fs->handler(fs, rq, fd);
		}
		free(rq);
		shutdown(fd, SHUT_RDWR);
		close(fd);
	}
	return NULL;
}

static inline int fake_start(struct fake_server *fs, fake_handler h, void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int one = 1;

	memset(fs, 0, sizeof(*fs));
	fs->handler = h;
	fs->arg = arg;
	fs->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fs->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fs->listen_fd, (struct sockaddr *)&a, sizeof(a)) || listen(fs->listen_fd, 16) ||
	    getsockname(fs->listen_fd, (struct sockaddr *)&a, &len))
		return -1;
	fs->port = ntohs(a.sin_port);
	snprintf(fs->url, sizeof(fs->url), "http://127.0.0.1:%d", fs->port);
	return pthread_create(&fs->thread, NULL, fake_loop, fs);
}

static inline void fake_stop(struct fake_server *fs)
{
	int fd;
	struct sockaddr_in a = { .sin_family = AF_INET };

	fs->stop = 1;
	/* wake accept() */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)fs->port);
	connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	pthread_join(fs->thread, NULL);
	close(fs->listen_fd);
}

#endif
