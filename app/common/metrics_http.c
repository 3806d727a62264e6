/* SPDX-License-Identifier: BSD-3-Clause
 * See metrics_http.h.
 */
#include "metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

struct htoe_metrics {
	struct MHD_Daemon *d;
	int fd;
	htoe_metrics_fn fn;
	void *arg;
};

static void prom_printf(struct htoe_prom *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void prom_printf(struct htoe_prom *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->oom)
		return;
	for (;;) {
		size_t room = p->cap - p->len;

		va_start(ap, fmt);
		n = vsnprintf(p->buf ? p->buf + p->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			p->oom = true;
			return;
		}
		if ((size_t)n < room) {
			p->len += (size_t)n;
			return;
		}
		size_t cap = p->cap ? p->cap * 2 : 16384;
		while (cap - p->len <= (size_t)n)
			cap *= 2;
		char *b = realloc(p->buf, cap);

		if (!b) {
			p->oom = true;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
}

void htoe_prom_family(struct htoe_prom *p, const char *name, const char *type, const char *help)
{
	prom_printf(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void htoe_prom_u64(struct htoe_prom *p, const char *name, const char *labels, uint64_t v)
{
	bool l = labels && *labels;

	prom_printf(p, "%s%s%s%s %" PRIu64 "\n", name, l ? "{" : "", l ? labels : "", l ? "}" : "",
		    v);
}

void htoe_prom_f64(struct htoe_prom *p, const char *name, const char *labels, double v)
{
	bool l = labels && *labels;

	prom_printf(p, "%s%s%s%s %.9g\n", name, l ? "{" : "", l ? labels : "", l ? "}" : "", v);
}

static void table_sample(struct htoe_prom *p, const struct htoe_prom_col *c,
			 const char *labels, const uint64_t *at)
{
	uint64_t v = __atomic_load_n(at, __ATOMIC_RELAXED);

	if (c->ns)
		htoe_prom_f64(p, c->prom, labels, (double)v / 1e9);
	else
		htoe_prom_u64(p, c->prom, labels, v);
}

void htoe_prom_table(struct htoe_prom *p, const struct htoe_prom_col *c, unsigned nc,
		     const struct htoe_prom_row *r, unsigned nr)
{
	char lab[160];

	for (const struct htoe_prom_col *e = c; e < c + nc; e++) {
		if (!e->prom)
			continue;
		htoe_prom_family(p, e->prom, e->gauge ? "gauge" : "counter", e->help);
		for (unsigned i = 0; i < nr; i++) {
			const uint64_t *at = (const uint64_t *)((const char *)r[i].base + e->off);

			if ((r[i].flags & e->only) != e->only)
				continue;
			if (!e->label) {
				table_sample(p, e, r[i].labels, at);
				continue;
			}
			for (unsigned k = 0; k < e->n; k++) {
				snprintf(lab, sizeof(lab), "%s%s%s=\"%s\"", r[i].labels,
					 *r[i].labels ? "," : "", e->label, e->value(k));
				table_sample(p, e, lab, at + k);
			}
		}
	}
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	static const char not_found[] = "only /metrics is served here\n";
	static const char oom[] = "out of memory\n";
	struct htoe_metrics *m = cls;
	struct MHD_Response *r;
	struct htoe_prom p = { 0 };
	unsigned status = MHD_HTTP_OK;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		if (r)
			MHD_add_response_header(r, "Allow", "GET, HEAD");
	} else if (strcmp(url, "/metrics")) {
		r = MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found,
						    MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_NOT_FOUND;
	} else {
		m->fn(&p, m->arg);
		if (p.oom) {
			free(p.buf);
			r = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom,
							    MHD_RESPMEM_PERSISTENT);
			status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		} else {
			r = MHD_create_response_from_buffer(p.len, p.buf, MHD_RESPMEM_MUST_FREE);
			if (!r)
				free(p.buf);
			else
				MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
							"text/plain; version=0.0.4; charset=utf-8");
		}
	}
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* "IPV4:PORT", "[IPV6]:PORT", "*:PORT" -> a socket address; -1 with the reason */
static int parse_addr(const char *s, const char *where, struct sockaddr_storage *ss,
		      socklen_t *len, char *err, size_t errlen)
{
	static const char usage[] = "expected ADDR:PORT: an IPv4 address, [IPv6] or * (every "
				    "address), then a port 1..65535, e.g. 127.0.0.1:9478";
	char host[64];
	const char *colon, *h = s;
	size_t hl;
	char *end;
	unsigned long port;

	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':') {
			snprintf(err, errlen, "%s: %s", where, usage);
			return -1;
		}
		h = s + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			snprintf(err, errlen, "%s: no port; %s", where, usage);
			return -1;
		}
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(err, errlen, "%s: %s", where, usage);
		return -1;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 1 || port > 65535 || colon[1] == '+' ||
	    colon[1] == '-') {
		snprintf(err, errlen, "%s: bad port '%s': %s", where, colon + 1, usage);
		return -1;
	}
	if (*s == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1) {
			snprintf(err, errlen, "%s: '%s' is not an IPv6 address; %s", where,
				 host, usage);
			return -1;
		}
		*len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		if (!strcmp(host, "*"))
			a4->sin_addr.s_addr = htonl(INADDR_ANY);
		else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1) {
			snprintf(err, errlen, "%s: '%s' is not an IPv4 address (names are "
				 "not resolved); %s", where, host, usage);
			return -1;
		}
		*len = sizeof(*a4);
	}
	return 0;
}

struct htoe_metrics *htoe_metrics_start(const char *addr, const char *where, htoe_metrics_fn fn,
					void *arg, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct htoe_metrics *m;
	int one = 1, fd;

	if (parse_addr(addr, where, &ss, &len, err, errlen))
		return NULL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s: socket: %s", where, strerror(errno));
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16)) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot listen there: %s%s", where,
			 strerror(e),
			 e == EADDRINUSE ? " (another program, or another htoe process, serves that "
			 "port: choose another)" :
			 e == EADDRNOTAVAIL ? " (not an address of this host)" :
			 e == EACCES ? " (a port below 1024 needs CAP_NET_BIND_SERVICE)" : "");
		close(fd);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", where);
		return NULL;
	}
	m->fd = fd;
	m->fn = fn;
	m->arg = arg;
	m->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer, m,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, 32u,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				MHD_OPTION_END);
	if (!m->d) {
		snprintf(err, errlen, "%s: the HTTP server (libmicrohttpd) did not start",
			 where);
		close(fd);
		free(m);
		return NULL;
	}
	return m;
}

void htoe_metrics_stop(struct htoe_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	close(m->fd);
	free(m);
}
