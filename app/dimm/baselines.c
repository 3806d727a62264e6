/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm baselines: the local userfaultfd round trip and the same pager
 * over TCP to a page server in another process. See baselines.h.
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "baselines.h"
#include "dimm.h"
#include "dimm_pager.h"
#include "htmodel/ht_workload.h"
#include "tcp_child.h"

#define BL_SEED 0x7c9

/* One request: op (enum dimm_op_type), len, off. A read is answered with
 * len bytes, a write (followed by its len bytes) and a flush with one
 * status byte (0: done). */
struct bl_req {
	uint8_t  op;
	uint8_t  pad[3];
	uint32_t len;
	uint64_t off;
};

struct bl_mem {
	uint8_t *mem;
	size_t   size;
};

/* The page server, in the child process. */
static void bl_serve(int fd, void *arg)
{
	const struct bl_mem *m = arg;
	struct bl_req q;
	uint8_t ok = 0;

	while (tcp_xfer(fd, &q, sizeof(q), false) == 0) {
		if (q.off > m->size || q.len > m->size - q.off)
			return; /* a bad request ends the connection: the client sees it */
		if (q.op == DIMM_OP_READ) {
			if (tcp_xfer(fd, m->mem + q.off, q.len, true))
				return;
		} else if (q.op == DIMM_OP_WRITE) {
			if (tcp_xfer(fd, m->mem + q.off, q.len, false) || tcp_xfer(fd, &ok, 1, true))
				return;
		} else if (q.op == DIMM_OP_FLUSH) {
			if (tcp_xfer(fd, &ok, 1, true))
				return;
		} else {
			return;
		}
	}
}

/* One operation of the pager's client over the connection: 0 or -EIO. */
static int bl_op(int fd, const struct dimm_op *op)
{
	struct bl_req q = { .op = op->op, .len = op->len, .off = op->off };
	uint8_t st;

	if (op->op != DIMM_OP_READ && op->op != DIMM_OP_WRITE && op->op != DIMM_OP_FLUSH)
		return -EINVAL; /* the pager uses no atomics */
	if (tcp_xfer(fd, &q, sizeof(q), true))
		return -EIO;
	if (op->op == DIMM_OP_READ)
		return tcp_xfer(fd, op->buf, op->len, false) ? -EIO : 0;
	if (op->op == DIMM_OP_WRITE && tcp_xfer(fd, op->buf, op->len, true))
		return -EIO;
	return tcp_xfer(fd, &st, 1, false) || st ? -EIO : 0;
}

struct bl_pager {
	struct dimm_pager *p;
	struct dimm_client *c;
	int fd;
	_Atomic int stop;
};

/* The pager's thread: serve faults, send its operations over TCP; sleep in
 * poll() on the userfaultfd when there is nothing to do. */
static void *bl_pager_thread(void *arg)
{
	struct bl_pager *t = arg;

	while (!atomic_load(&t->stop)) {
		unsigned w = dimm_pager_poll(t->p);
		struct dimm_op op;

		while (dimm_op_take(t->c, &op)) {
			dimm_op_complete(t->c, &op, bl_op(t->fd, &op), 0, 0);
			w++;
		}
		if (!w && !dimm_pager_busy(t->p)) {
			struct pollfd pf = { .fd = dimm_pager_fd(t->p), .events = POLLIN };

			poll(&pf, 1, 1);
		}
	}
	return NULL;
}

static uint64_t ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double q_us(const struct lat_hist *h, double q)
{
	return lat_quantile(h, q) / 1e3;
}

/* ---- the local userfaultfd round trip */

struct rt_server {
	int fd;
	_Atomic int stop;
	uint8_t *src;
};

/* The handler thread: sleeps in poll() on the userfaultfd, as a pager does,
 * and serves each fault with a copy of its local page. */
static void *rt_serve(void *arg)
{
	struct rt_server *sv = arg;

	while (!atomic_load(&sv->stop)) {
		struct pollfd pf = { .fd = sv->fd, .events = POLLIN };
		struct uffd_msg m;

		if (poll(&pf, 1, 10) <= 0 || read(sv->fd, &m, sizeof(m)) != sizeof(m) ||
		    m.event != UFFD_EVENT_PAGEFAULT)
			continue;
		struct uffdio_copy c = {
			.dst = m.arg.pagefault.address & ~(uint64_t)(DIMM_PAGE - 1),
			.src = (uintptr_t)sv->src,
			.len = DIMM_PAGE,
		};

		ioctl(sv->fd, UFFDIO_COPY, &c);
	}
	return NULL;
}

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

int dimm_uffd_roundtrip(unsigned pages, struct lat_hist *hist, char *err, size_t errlen)
{
	struct rt_server sv = { .fd = dimm_uffd_open() };
	struct uffdio_api api = { .api = UFFD_API };
	size_t size = (size_t)pages * DIMM_PAGE;
	uint8_t *m = MAP_FAILED;
	pthread_t th;
	int e = 0;

	sv.src = aligned_alloc(DIMM_PAGE, DIMM_PAGE);
	if (dimm_uffd_off_by_env()) {
		e = -EPERM;
		ERR("userfaultfd round trip: userfaultfd unavailable: disabled "
		    "(HTOE_DIMM_NO_UFFD is set)");
		goto out;
	}
	if (sv.fd < 0 || ioctl(sv.fd, UFFDIO_API, &api)) {
		e = -errno;
		ERR("userfaultfd round trip: userfaultfd unavailable: %s", strerror(errno));
		goto out;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pages || !sv.src || m == MAP_FAILED) {
		e = -ENOMEM;
		ERR("userfaultfd round trip: no memory for %u pages", pages);
		goto out;
	}
	memset(sv.src, 0x5a, DIMM_PAGE);
	madvise(m, size, MADV_NOHUGEPAGE);
	struct uffdio_register reg = { .range = { (uintptr_t)m, size },
				       .mode = UFFDIO_REGISTER_MODE_MISSING };

	if (ioctl(sv.fd, UFFDIO_REGISTER, &reg)) {
		e = -errno;
		ERR("userfaultfd round trip: UFFDIO_REGISTER: %s", strerror(errno));
		goto out;
	}
	if (pthread_create(&th, NULL, rt_serve, &sv)) {
		e = -EAGAIN;
		ERR("userfaultfd round trip: cannot start the handler thread");
		goto out;
	}
	for (unsigned i = 0; i < pages; i++) {
		uint64_t t0 = ns();

		(void)*(volatile uint8_t *)(m + (size_t)i * DIMM_PAGE);
		lat_add(hist, ns() - t0);
	}
	atomic_store(&sv.stop, 1);
	pthread_join(th, NULL);
out:
	if (m != MAP_FAILED)
		munmap(m, size);
	if (sv.fd >= 0)
		close(sv.fd);
	free(sv.src);
	return e;
}

/* ---- the pager over TCP */

static bool bl_tcp(struct dimm_baselines *b)
{
	static struct lat_hist rt;
	struct bl_mem m = { .size = (size_t)b->pages * DIMM_PAGE };
	struct dimm_client_cfg cc;
	struct dimm_pager_cfg pc;
	struct bl_pager t;
	struct tcp_child ch;
	pthread_t th;
	bool ok = false;
	char err[256];

	memset(&rt, 0, sizeof(rt));
	memset(&t, 0, sizeof(t));
	m.mem = malloc(m.size);
	if (!m.mem) {
		snprintf(b->tcp_why, sizeof(b->tcp_why), "out of memory");
		return false;
	}
	ht_wl_fill(BL_SEED, m.mem, m.size); /* the server's pages (the child's copy) */
	if (tcp_child_start(&ch, bl_serve, &m, err, sizeof(err))) {
		snprintf(b->tcp_why, sizeof(b->tcp_why), "%s", err);
		free(m.mem);
		return false;
	}
	memset(&cc, 0, sizeof(cc));
	cc.size = m.size;
	cc.depth = 256;
	t.c = dimm_client_new(&cc, err, sizeof(err));
	memset(&pc, 0, sizeof(pc));
	pc.client = t.c;
	pc.size = m.size;
	t.p = t.c ? dimm_pager_new(&pc, err, sizeof(err)) : NULL;
	t.fd = ch.fd;
	if (!t.p) {
		snprintf(b->tcp_why, sizeof(b->tcp_why), "%s", err);
		goto out;
	}
	if (pthread_create(&th, NULL, bl_pager_thread, &t)) {
		snprintf(b->tcp_why, sizeof(b->tcp_why), "cannot start the pager thread");
		goto out;
	}
	const volatile uint8_t *base = dimm_pager_base(t.p);
	unsigned bad = 0;

	for (unsigned i = 0; i < b->pages; i++) {
		uint64_t t0 = ns();

		(void)base[(size_t)i * DIMM_PAGE];
		lat_add(&rt, ns() - t0);
	}
	/* every page is what the server has */
	for (unsigned i = 0; i < b->pages; i++)
		bad += memcmp((const uint8_t *)base + (size_t)i * DIMM_PAGE,
			      m.mem + (size_t)i * DIMM_PAGE, DIMM_PAGE) != 0;
	atomic_store(&t.stop, 1);
	pthread_join(th, NULL);
	const struct dimm_pager_stats *st = dimm_pager_stats(t.p);

	if (bad || dimm_pager_error(t.p, err, sizeof(err))) {
		snprintf(b->tcp_why, sizeof(b->tcp_why), "%u pages differ from the server's (%.180s)",
			 bad, err);
		goto out;
	}
	b->tcp_p50_us = q_us(&st->hist, 0.5);
	b->tcp_p99_us = q_us(&st->hist, 0.99);
	b->tcp_rt_p50_us = q_us(&rt, 0.5);
	b->tcp_rt_p99_us = q_us(&rt, 0.99);
	ok = true;
out:
	tcp_child_stop(&ch); /* closes the connection first: nothing is in flight now */
	if (t.p)
		dimm_pager_free(t.p);
	if (t.c)
		dimm_client_free(t.c);
	free(m.mem);
	return ok;
}

bool dimm_baselines_measure(struct dimm_baselines *b)
{
	static struct lat_hist h;

	memset(b, 0, sizeof(*b));
	memset(&h, 0, sizeof(h));
	b->pages = BL_PAGES;
	if (dimm_uffd_roundtrip(b->pages, &h, b->uffd_why, sizeof(b->uffd_why)) == 0) {
		b->uffd_done = true;
		b->uffd_p50_us = q_us(&h, 0.5);
		b->uffd_p99_us = q_us(&h, 0.99);
	}
	b->tcp_done = bl_tcp(b);
	return b->uffd_done && b->tcp_done;
}
