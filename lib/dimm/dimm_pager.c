/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_pager: remote memory behind plain pointers, with userfaultfd. See
 * dimm_pager.h for the design (dirty tracking, eviction, error path).
 * This is the shell: the kernel calls (userfaultfd, mmap, madvise,
 * PAGEMAP_SCAN, signals), threads, the clock and the client's operations.
 * What each page is and which pages to evict and read ahead is the
 * policy's (dimm_policy.c, sans-I/O).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dimm_evict.h"
#include "dimm_pager.h"
#include "dimm_sync.h"

/* Kernel 6.6+ (the build headers may be older). */
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
#endif
#ifndef _UFFDIO_POISON
#define _UFFDIO_POISON (0x08)
struct uffdio_poison {
	struct uffdio_range range;
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

/* Kernel 6.7+: asynchronous write-protection and the pagemap scan. */
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
#define PAGE_IS_WRITTEN       (1 << 1)
#define PM_SCAN_WP_MATCHING   (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
struct page_region {
	__u64 start, end, categories;
};
struct pm_scan_arg {
	__u64 size, flags, start, end, walk_end, vec, vec_len, max_pages;
	__u64 category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

enum { ROOM_NEED = 0, ROOM_WAIT, ROOM_OK };
/* what a fetch waited for to get its slot (dimm_pager_stats victim_waits, batch_waits) */
enum { WAIT_NONE = 0, WAIT_VICTIM, WAIT_BATCH };
#define N_FETCH  16u     /* fetches in flight (demand + readahead) */
#define N_EVICT  DIMM_N_EVICT /* dirty write-backs in flight (dimm_evict.h) */
#define N_CLEAN  2u      /* of them at most this many the cleaner's: the next fault's reads
			    queue behind what is in flight when it comes */
#define CLEAN_BURST 2u   /* cleaner: write-backs started per poll at most */
#define N_PEND   256u    /* fault messages read, not yet handled */
#define SYNC_MAX 64u     /* sync write-backs in flight */
#define N_SIGQ   64u     /* faults posted by SIGBUS handlers, not yet read */
#define N_STOP   16u     /* threads in a SIGBUS handler that app_stopped sees */

enum { K_FETCH = 1, K_WB, K_FL, K_SWB, K_SFL };

struct fetch {
	bool     used;
	bool     write;       /* install writable: a write fault waits */
	bool     waiter;      /* a thread waits (false: readahead) */
	bool     done;
	bool     waited;      /* counted in room_waits */
	int      status;
	uint8_t  ht_err;
	uint8_t  room;        /* ROOM_NEED, ROOM_WAIT (an eviction), ROOM_OK */
	uint8_t  room_why;    /* what it waited for: WAIT_NONE, WAIT_VICTIM, WAIT_BATCH */
	uint8_t  retries;     /* sent again after a VL reset */
	uint32_t page;
	uint64_t t0;
	uint8_t *buf;         /* DIMM_PAGE bytes */
};

struct pend {
	uint32_t page;
	uint32_t flags;       /* UFFD_PAGEFAULT_FLAG_* */
	uint64_t t0;
};

struct dimm_pager {
	struct dimm_pager_cfg cfg;
	int      fd;
	uint8_t *base;
	uintptr_t uaddr;      /* the mapping where the faults are (external: the other
				 process's; else base) */
	bool     ext;         /* DIMM_PAGER_F_EXTERNAL */
	int      memfd;       /* external: the memfd behind both mappings */
	size_t   size;
	uint32_t npages;
	bool     wp, poison;
	bool     wp_async;    /* UFFD_FEATURE_WP_ASYNC: writes never fault,
				 PAGEMAP_SCAN finds them (wp_scan) */
	int      pagemap;     /* /proc/self/pagemap (wp_async), or -1 */
	int      pidfd;       /* this process (process_madvise of a batch), or -1 */
	struct dimm_policy pol; /* page states, budget, CLOCK, batches, readahead */
	unsigned clean_low;   /* cleaner's watermark (0: off) */
	bool     clean_due;   /* something changed since the cleaner last looked */
	struct fetch fe[N_FETCH];
	struct dimm_evicts ev; /* write-backs in flight: slots, claim order */
	struct pend pend[N_PEND];
	/* run to completion (DIMM_PAGER_F_SIGBUS): faults come as SIGBUS in
	 * the faulting thread, which posts the page here (page + 1; 0: free)
	 * and drives the node until it is installed (sigbus_serve) */
	bool     sigbus;
	_Atomic uint32_t sigq[N_SIGQ];
	_Atomic unsigned sigq_posts; /* posts to sigq[] so far (after each one's store) */
	_Atomic unsigned resumed;    /* threads that left their SIGBUS handler so far */
	unsigned sigq_seen;          /* sigq_posts when read_sigq last read every slot */
	/* the page (+ 1; 0: free) each thread in sigbus_serve waits for: it
	 * is stopped while that page is not resident (app_stopped) */
	_Atomic uint32_t stopped_at[N_STOP];
	_Atomic unsigned stopped_more; /* threads in sigbus_serve without a slot there */
	unsigned n_pend;
	uint8_t *bufs;
	uint8_t *ebufs;              /* N_EVICT pages: the copies of evicted pages */

	/* error state */
	_Atomic int err;
	char     errmsg[256];
	bool     dead;        /* fallback: unregistered and PROT_NONE */

	/* sync: requested by an application thread */
	_Atomic unsigned sync_req;   /* sequence of requests (bit 0 of the arg: drop) */
	_Atomic unsigned sync_done;
	_Atomic int sync_status;
	_Atomic bool sync_drop;
	unsigned sync_serving;       /* request being served (0: none) */
	struct dimm_sync sync;       /* the one being served: its state machine */
	int      registry_slot;
	_Atomic bool idle;           /* set by dimm_pager_poll for other threads */
	unsigned polls;              /* dimm_pager_poll calls (fault_read_due) */

	struct dimm_pager_stats st;
};

static int wp_scan_probe(struct dimm_pager *p);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ signals */

#define REG_MAX 16

static struct {
	_Atomic(uintptr_t) base;
	_Atomic size_t size;
	_Atomic(struct dimm_pager *) p;
} registry[REG_MAX];

static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_bus, old_segv;
static __thread sigjmp_buf *tls_jb;
static __thread void *tls_addr;

static bool sigbus_serve(struct dimm_pager *p, uintptr_t a);

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	/* run to completion: a missing page of a pager in SIGBUS mode (a
	 * poisoned page is BUS_MCEERR_AR and goes on to the error path) */
	if (sig == SIGBUS && si->si_code == BUS_ADRERR) {
		for (unsigned i = 0; i < REG_MAX; i++) {
			uintptr_t b = atomic_load(&registry[i].base);
			struct dimm_pager *p = atomic_load(&registry[i].p);

			if (b && p && a >= b && a - b < atomic_load(&registry[i].size) &&
			    sigbus_serve(p, a))
				return; /* installed: the access runs again */
		}
	}

	if (tls_jb) {
		for (unsigned i = 0; i < REG_MAX; i++) {
			uintptr_t b = atomic_load(&registry[i].base);

			if (b && a >= b && a - b < atomic_load(&registry[i].size)) {
				sigjmp_buf *jb = tls_jb;

				tls_addr = si->si_addr;
				tls_jb = NULL;
				siglongjmp(*jb, 1);
			}
		}
	}
	/* not ours: the previous disposition */
	const struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;

	if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
		old->sa_sigaction(sig, si, uc);
		return;
	}
	if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL); /* the access faults again and takes the default action */
}

/* (Re)install the handlers if someone replaced them (test harnesses do),
 * keeping the replaced ones to chain to for addresses that are not ours. */
static void install_signals(void)
{
	static const int sigs[2] = { SIGBUS, SIGSEGV };
	struct sigaction sa, cur;

	pthread_mutex_lock(&sig_lock);
	for (int i = 0; i < 2; i++) {
		sigaction(sigs[i], NULL, &cur);
		if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, sigs[i] == SIGBUS ? &old_bus : &old_segv);
	}
	pthread_mutex_unlock(&sig_lock);
}

int dimm_pager_run(struct dimm_pager *p, void (*fn)(void *), void *arg, void **addr)
{
	sigjmp_buf jb;
	sigjmp_buf *volatile saved = tls_jb;

	install_signals();
	if (sigsetjmp(jb, 1)) {
		tls_jb = saved;
		if (addr)
			*addr = tls_addr;
		int e = atomic_load(&p->err);

		return e ? e : -EFAULT;
	}
	tls_jb = &jb;
	fn(arg);
	tls_jb = saved;
	if (addr)
		*addr = NULL;
	return 0;
}

/* ------------------------------------------------------------ setup */

bool dimm_uffd_off_by_env(void)
{
	const char *env = getenv("HTOE_DIMM_NO_UFFD");

	return env && *env && strcmp(env, "0") != 0;
}

int dimm_uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int e = errno;

	if (fd >= 0)
		return fd;
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

	if (dev >= 0) {
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		close(dev);
		if (fd >= 0)
			return fd;
	}
	errno = e;
	return -1;
}

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)
#define UNAVAIL "; the transparent mapping is off, the explicit API (dimm.h) still works"

/* The per-page arrays and the bounce buffers. */
static int pager_arrays(struct dimm_pager *p)
{
	if (dimm_policy_init(&p->pol, p->npages, p->cfg.budget, p->cfg.budget_pct))
		return -1;
	if (dimm_sync_init(&p->sync, p->npages))
		return -1;
	p->bufs = aligned_alloc(DIMM_PAGE, (size_t)N_FETCH * DIMM_PAGE);
	p->ebufs = aligned_alloc(DIMM_PAGE, (size_t)N_EVICT * DIMM_PAGE);
	if (!p->bufs || !p->ebufs)
		return -1;
	for (unsigned i = 0; i < N_FETCH; i++)
		p->fe[i].buf = p->bufs + (size_t)i * DIMM_PAGE;
	for (unsigned i = 0; i < N_EVICT; i++)
		p->ev.slot[i].buf = p->ebufs + (size_t)i * DIMM_PAGE;
	dimm_evicts_init(&p->ev);
	return 0;
}

static void budget_update(struct dimm_pager *p);

/* DIMM_PAGER_F_EXTERNAL (dimm_pager.h): the fd and the registration are
 * the other process's; the error path needs UFFDIO_POISON (the fallback
 * makes the region inaccessible, which only its own process can do). */
static struct dimm_pager *ext_new(const struct dimm_pager_cfg *cfg, char *err, size_t errlen)
{
	struct dimm_pager *p = calloc(1, sizeof(*p));
	uint64_t have = cfg->ext_features;

	if (!p) {
		close(cfg->ext_uffd);
		ERR("dimm pager: out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	p->ext = true;
	p->fd = cfg->ext_uffd;
	p->memfd = cfg->ext_memfd;
	p->pagemap = -1;
	p->pidfd = -1;
	p->registry_slot = -1;
	p->size = cfg->size;
	p->npages = (uint32_t)(cfg->size / DIMM_PAGE);
	if (!p->cfg.max_retries)
		p->cfg.max_retries = DIMM_PAGER_RETRIES;
	if (p->cfg.max_retries > UINT8_MAX)
		p->cfg.max_retries = UINT8_MAX;
	p->wp = !(cfg->flags & DIMM_PAGER_F_NO_WP) && (have & UFFD_FEATURE_PAGEFAULT_FLAG_WP);
	p->poison = have & UFFD_FEATURE_POISON;
	if (!p->poison || !(have & UFFD_FEATURE_EVENT_REMOVE)) {
		ERR("userfaultfd: the program's userfaultfd lacks %s (Linux 6.6 or later has it)",
		    p->poison ? "UFFD_FEATURE_EVENT_REMOVE" : "UFFD_FEATURE_POISON");
		goto fail;
	}
	if (pager_arrays(p)) {
		ERR("dimm pager: out of memory");
		goto fail;
	}
	dimm_policy_all_fresh(&p->pol);
	p->base = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED, p->memfd, 0);
	if (p->base == MAP_FAILED) {
		p->base = NULL;
		ERR("dimm pager: mmap of the program's memfd (%zu bytes): %s", p->size,
		    strerror(errno));
		goto fail;
	}
	madvise(p->base, p->size, MADV_NOHUGEPAGE);
	p->uaddr = cfg->ext_uaddr;
	budget_update(p);
	return p;
fail:
	dimm_pager_free(p);
	return NULL;
}

struct dimm_pager *dimm_pager_new(const struct dimm_pager_cfg *cfg, char *err, size_t errlen)
{
	struct dimm_pager *p;
	struct uffdio_api api;
	struct uffdio_register reg;
	uint64_t have;
	int fd;
	bool ext = cfg->flags & DIMM_PAGER_F_EXTERNAL;

	if (ext && (cfg->ext_memfd < 0 || cfg->ext_uffd < 0 || cfg->ext_uaddr % DIMM_PAGE)) {
		ERR("dimm pager: an external mapping needs its memfd, its userfaultfd and a "
		    "page-aligned address");
		if (cfg->ext_uffd >= 0)
			close(cfg->ext_uffd);
		return NULL;
	}
	if (!cfg->client || cfg->size == 0 || cfg->size % DIMM_PAGE || cfg->off % DIMM_PAGE ||
	    cfg->off > dimm_client_size(cfg->client) ||
	    cfg->size > dimm_client_size(cfg->client) - cfg->off) {
		ERR("dimm pager: the mapping (offset 0x%llx, 0x%zx bytes) must be whole pages "
		    "inside the lease",
		    (unsigned long long)cfg->off, cfg->size);
		return NULL;
	}
	if (cfg->size / DIMM_PAGE > UINT32_MAX - 1) {
		ERR("dimm pager: mapping too large");
		return NULL;
	}
	if (dimm_client_depth(cfg->client) < 3 * N_FETCH + 2 * N_EVICT + SYNC_MAX + 1) {
		ERR("dimm pager: the client needs a depth of at least %u",
		    3 * N_FETCH + 2 * N_EVICT + SYNC_MAX + 1);
		return NULL;
	}
	if (cfg->fetch_client &&
	    (dimm_client_depth(cfg->fetch_client) < 3 * N_FETCH + 1 ||
	     dimm_client_gaddr(cfg->fetch_client) != dimm_client_gaddr(cfg->client) ||
	     dimm_client_size(cfg->fetch_client) != dimm_client_size(cfg->client))) {
		ERR("dimm pager: the fetch client must be of the same lease (address and size) "
		    "and have a depth of at least %u", 3 * N_FETCH + 1);
		return NULL;
	}
	if ((cfg->flags & DIMM_PAGER_F_NO_UFFD) || dimm_uffd_off_by_env()) {
		ERR("userfaultfd unavailable: disabled (%s)" UNAVAIL,
		    (cfg->flags & DIMM_PAGER_F_NO_UFFD) ? "simulated" : "HTOE_DIMM_NO_UFFD is set");
		return NULL;
	}
	if (ext)
		return ext_new(cfg, err, errlen);
	/* which features does the kernel have? (one API handshake per fd) */
	fd = dimm_uffd_open();
	if (fd < 0) {
		int e = errno;

		ERR("userfaultfd unavailable: %s (%s)" UNAVAIL, strerror(e),
		    e == EPERM ? "needs root or CAP_SYS_PTRACE, vm.unprivileged_userfaultfd=1, "
				 "or access to /dev/userfaultfd"
				 : e == ENOSYS ? "kernel built without CONFIG_USERFAULTFD"
					       : "userfaultfd(2) failed");
		return NULL;
	}
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	if (ioctl(fd, UFFDIO_API, &api) != 0) {
		ERR("userfaultfd unavailable: UFFDIO_API: %s" UNAVAIL, strerror(errno));
		close(fd);
		return NULL;
	}
	have = api.features;
	close(fd);

	p = calloc(1, sizeof(*p));
	if (!p) {
		ERR("dimm pager: out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	p->fd = -1;
	p->registry_slot = -1;
	p->size = cfg->size;
	p->npages = (uint32_t)(cfg->size / DIMM_PAGE);
	if (!p->cfg.max_retries)
		p->cfg.max_retries = DIMM_PAGER_RETRIES;
	if (p->cfg.max_retries > UINT8_MAX) /* counted in a uint8_t per operation */
		p->cfg.max_retries = UINT8_MAX;
	p->wp = !(cfg->flags & DIMM_PAGER_F_NO_WP) && (have & UFFD_FEATURE_PAGEFAULT_FLAG_WP);
	p->poison = !(cfg->flags & DIMM_PAGER_F_NO_POISON) && (have & UFFD_FEATURE_POISON);
	p->pagemap = -1;
	p->pidfd = -1;
#ifdef SYS_pidfd_open
	p->pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
#endif
	p->wp_async = p->wp && (cfg->flags & DIMM_PAGER_F_WP_ASYNC) &&
		      (have & UFFD_FEATURE_WP_ASYNC) &&
		      (p->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) >= 0;
	/* SIGBUS for every userfault: only without write-protect faults */
	p->sigbus = (cfg->flags & DIMM_PAGER_F_SIGBUS) && cfg->drive &&
		    (have & UFFD_FEATURE_SIGBUS) && (p->wp_async || !p->wp);
	if (pager_arrays(p)) {
		ERR("dimm pager: out of memory");
		goto fail;
	}
	p->base = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->base == MAP_FAILED) {
		p->base = NULL;
		ERR("dimm pager: mmap of %zu bytes: %s", p->size, strerror(errno));
		goto fail;
	}
	madvise(p->base, p->size, MADV_NOHUGEPAGE);
	p->uaddr = (uintptr_t)p->base;

again:
	p->fd = dimm_uffd_open();
	if (p->fd < 0) {
		ERR("userfaultfd unavailable: %s" UNAVAIL, strerror(errno));
		goto fail;
	}
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	api.features = (p->wp ? UFFD_FEATURE_PAGEFAULT_FLAG_WP : 0) |
		       (p->poison ? UFFD_FEATURE_POISON : 0) |
		       (p->wp_async ? UFFD_FEATURE_WP_ASYNC : 0) |
		       (p->sigbus ? UFFD_FEATURE_SIGBUS : 0);
	if (ioctl(p->fd, UFFDIO_API, &api) != 0) {
		ERR("userfaultfd unavailable: UFFDIO_API(features 0x%llx): %s" UNAVAIL,
		    (unsigned long long)api.features, strerror(errno));
		goto fail;
	}
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)p->base;
	reg.range.len = p->size;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING | (p->wp ? UFFDIO_REGISTER_MODE_WP : 0);
	if (ioctl(p->fd, UFFDIO_REGISTER, &reg) != 0) {
		ERR("userfaultfd unavailable: UFFDIO_REGISTER: %s" UNAVAIL, strerror(errno));
		goto fail;
	}
	if (!(reg.ioctls & (1ull << _UFFDIO_COPY))) {
		ERR("userfaultfd unavailable: no UFFDIO_COPY on anonymous memory" UNAVAIL);
		goto fail;
	}
	if (p->wp && !(reg.ioctls & (1ull << _UFFDIO_WRITEPROTECT)))
		p->wp = false; /* cannot happen with MODE_WP accepted; be safe */
	if (p->poison && !(reg.ioctls & (1ull << _UFFDIO_POISON)))
		p->poison = false;
	/* the cleaner: only where clean is known (dirty tracking) and pages
	 * are ever evicted */
	p->clean_low = p->cfg.clean_low;
	if (p->clean_low > DIMM_PAGER_CLEAN_MAX)
		p->clean_low = DIMM_PAGER_CLEAN_MAX;
	if (!p->wp || p->pol.budget >= p->npages)
		p->clean_low = 0;
	if (p->wp_async && wp_scan_probe(p) != 0) {
		/* WP_ASYNC without a working PAGEMAP_SCAN: writes would go
		 * unnoticed. Start again with write-protect faults. */
		struct uffdio_range r = { .start = (uintptr_t)p->base, .len = p->size };

		ioctl(p->fd, UFFDIO_UNREGISTER, &r);
		close(p->fd);
		close(p->pagemap);
		p->pagemap = -1;
		p->wp_async = false;
		p->sigbus = false;
		goto again;
	}

	install_signals();
	for (int i = 0; i < REG_MAX; i++) {
		struct dimm_pager *none = NULL;

		if (atomic_compare_exchange_strong(&registry[i].p, &none, p)) {
			atomic_store(&registry[i].size, p->size);
			atomic_store(&registry[i].base, (uintptr_t)p->base);
			p->registry_slot = i;
			break;
		}
	}
	return p;
fail:
	dimm_pager_free(p);
	return NULL;
}

void dimm_pager_free(struct dimm_pager *p)
{
	if (!p)
		return;
	if (p->registry_slot >= 0) {
		atomic_store(&registry[p->registry_slot].base, 0);
		atomic_store(&registry[p->registry_slot].size, 0);
		atomic_store(&registry[p->registry_slot].p, NULL);
	}
	if (p->fd >= 0)
		close(p->fd);
	if (p->pagemap >= 0)
		close(p->pagemap);
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->base)
		munmap(p->base, p->size);
	dimm_policy_fini(&p->pol);
	dimm_sync_fini(&p->sync);
	free(p->bufs);
	free(p->ebufs);
	free(p);
}

unsigned dimm_pager_budget(const struct dimm_pager *p)
{
	return p->pol.budget;
}

/* budget_pct: the budget follows the pages in use (dimm_policy) */
static void budget_update(struct dimm_pager *p)
{
	unsigned b = dimm_policy_budget_update(&p->pol);

	if (b > p->st.budget_max)
		p->st.budget_max = b;
}

void *dimm_pager_base(const struct dimm_pager *p)
{
	return p->base;
}

int dimm_pager_fd(const struct dimm_pager *p)
{
	return p->fd;
}

const char *dimm_pager_mode(const struct dimm_pager *p)
{
	static const char *const m[] = { "no-wp,sigsegv", "no-wp,poison", "wp,sigsegv",
					 "wp,poison", "wp-async,sigsegv", "wp-async,poison" };

	static const char *const ms[] = { "no-wp,sigsegv,sigbus-rtc", "no-wp,poison,sigbus-rtc",
					  "", "", "wp-async,sigsegv,sigbus-rtc",
					  "wp-async,poison,sigbus-rtc" };
	unsigned i = (p->wp_async ? 4 : p->wp ? 2 : 0) + (p->poison ? 1 : 0);

	return p->sigbus ? ms[i] : m[i];
}

const struct dimm_pager_stats *dimm_pager_stats(const struct dimm_pager *p)
{
	return &p->st;
}

int dimm_pager_error(const struct dimm_pager *p, char *msg, size_t len)
{
	int e = atomic_load(&((struct dimm_pager *)p)->err);

	if (msg && len)
		snprintf(msg, len, "%s", e ? p->errmsg : "ok");
	return e;
}

/* ------------------------------------------------------------ page ops */

static uint8_t *page_addr(const struct dimm_pager *p, uint32_t pg)
{
	return p->base + (size_t)pg * DIMM_PAGE;
}

/* The page's address where its faults are (external: in the other process). */
static uintptr_t page_uaddr(const struct dimm_pager *p, uint32_t pg)
{
	return p->uaddr + (uintptr_t)pg * DIMM_PAGE;
}

static int uf_wake(struct dimm_pager *p, uint32_t pg)
{
	struct uffdio_range r = { .start = page_uaddr(p, pg), .len = DIMM_PAGE };

	return ioctl(p->fd, UFFDIO_WAKE, &r);
}

static int uf_wp(struct dimm_pager *p, uint32_t pg, bool on)
{
	struct uffdio_writeprotect w;

	memset(&w, 0, sizeof(w));
	w.range.start = page_uaddr(p, pg);
	w.range.len = DIMM_PAGE;
	w.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
	return ioctl(p->fd, UFFDIO_WRITEPROTECT, &w);
}

/*
 * Asynchronous dirty tracking (UFFD_FEATURE_WP_ASYNC, PAGEMAP_SCAN; Linux
 * 6.7+). Pages are installed write-protected as before, but a write to one
 * does not stop the thread: the kernel lifts the protection itself, and the
 * page reads as "written" in the pagemap. The pager asks when it needs to
 * know — a victim at eviction, every page at a sync — with one PAGEMAP_SCAN
 * that also protects again what it reports (PM_SCAN_WP_MATCHING), so a
 * later write is seen by the next scan.
 *
 * wp_scan: write-protect the written pages of [pg, pg + n) (not if
 * !protect: a scan that changes no page table needs no TLB flush), mark
 * them DIMM_PG_DIRTY (when resident) and return how many there were, or -errno.
 */
static long wp_scan(struct dimm_pager *p, uint32_t pg, uint32_t n, bool protect)
{
	struct page_region vec[64];
	struct pm_scan_arg a;
	uint64_t start = (uintptr_t)page_addr(p, pg), end = start + (uint64_t)n * DIMM_PAGE;
	long found = 0;

	while (start < end) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.flags = (protect ? PM_SCAN_WP_MATCHING : 0) | PM_SCAN_CHECK_WPASYNC;
		a.start = start;
		a.end = end;
		a.vec = (uintptr_t)vec;
		a.vec_len = sizeof(vec) / sizeof(vec[0]);
		a.category_mask = PAGE_IS_WRITTEN;
		a.return_mask = PAGE_IS_WRITTEN;
		int r = ioctl(p->pagemap, PAGEMAP_SCAN, &a);

		if (r < 0)
			return -errno;
		for (int i = 0; i < r; i++)
			for (uint64_t x = vec[i].start; x < vec[i].end; x += DIMM_PAGE) {
				uint32_t q = (uint32_t)((x - (uintptr_t)p->base) / DIMM_PAGE);

				if (p->pol.state[q] == DIMM_PG_CLEAN)
					p->pol.state[q] = DIMM_PG_DIRTY;
				/* being written back: the write is this scan's
				 * to remember (finish_evicts), not the next's */
				if (p->pol.state[q] == DIMM_PG_EVICTING)
					p->pol.pflags[q] |= DIMM_PF_WRITTEN;
				found++;
			}
		p->st.wp_scans++;
		if (a.walk_end <= start)
			break;
		start = a.walk_end;
	}
	p->st.scan_dirty += (uint64_t)found;
	return found;
}

/* Does PAGEMAP_SCAN work on this mapping in WP_ASYNC mode? 0 or -errno. */
static int wp_scan_probe(struct dimm_pager *p)
{
	long r = wp_scan(p, 0, 1, true);

	p->st.wp_scans = 0;
	return r < 0 ? (int)r : 0;
}

/* The bookkeeping of a page whose memory was given back. */
static void page_dropped(struct dimm_pager *p, uint32_t pg)
{
	dimm_policy_dropped(&p->pol, pg);
	p->clean_due = true;
}

/* The page's data into buf. External: read from the memfd, not through
 * this process's mapping of it, which then never maps the program's pages
 * (a hole punched later has no entry of ours to shoot down). */
static void copy_page_out(struct dimm_pager *p, uint8_t *buf, uint32_t pg)
{
	if (!p->ext || pread(p->memfd, buf, DIMM_PAGE, (off_t)pg * DIMM_PAGE) != DIMM_PAGE)
		memcpy(buf, page_addr(p, pg), DIMM_PAGE);
}

/* External: give back pages [pg, pg + n) of the memfd, for both mappings. */
static void punch(struct dimm_pager *p, uint32_t pg, uint32_t n)
{
	fallocate(p->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)pg * DIMM_PAGE,
		  (off_t)n * DIMM_PAGE);
}

static void drop_page(struct dimm_pager *p, uint32_t pg)
{
	if (p->ext)
		punch(p, pg, 1);
	else
		madvise(page_addr(p, pg), DIMM_PAGE, MADV_DONTNEED);
	page_dropped(p, pg);
}

/* Give back the memory of n pages (n <= DIMM_EVICT_BATCH) in one call: one
 * TLB flush of every CPU running a thread of this process instead of n
 * (process_madvise of the calling process, Linux >= 6.13 with MADV_DONTNEED;
 * one madvise per page where it is refused). True when n > 1 went in one
 * call. */
static bool drop_pages(struct dimm_pager *p, const uint32_t *pg, unsigned n)
{
	struct iovec iov[N_EVICT];
	size_t want = (size_t)n * DIMM_PAGE;
	long done = -1;

	if (p->ext) {
		/* one fallocate per run of adjacent pages */
		for (unsigned i = 0, j; i < n; i = j) {
			for (j = i + 1; j < n && pg[j] == pg[j - 1] + 1; j++)
				;
			punch(p, pg[i], j - i);
		}
		for (unsigned i = 0; i < n; i++)
			page_dropped(p, pg[i]);
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		iov[i].iov_base = page_addr(p, pg[i]);
		iov[i].iov_len = DIMM_PAGE;
	}
#ifdef SYS_process_madvise
	if (p->pidfd >= 0 && n > 1)
		done = syscall(SYS_process_madvise, p->pidfd, iov, (size_t)n, MADV_DONTNEED, 0u);
#endif
	if (done != (long)want) {
		if (done < 0 && n > 1 && errno != EINTR && p->pidfd >= 0) {
			close(p->pidfd); /* refused here: one madvise per page from now on */
			p->pidfd = -1;
		}
		for (unsigned i = 0; i < n; i++)
			madvise(iov[i].iov_base, DIMM_PAGE, MADV_DONTNEED);
	}
	for (unsigned i = 0; i < n; i++)
		page_dropped(p, pg[i]);
	return n > 1 && done == (long)want;
}

/* The error state: remember the first failure, then stop serving faults
 * with data. */
static void set_error(struct dimm_pager *p, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(struct dimm_pager *p, int e, const char *fmt, ...)
{
	va_list ap;

	if (atomic_load(&p->err))
		return;
	va_start(ap, fmt);
	vsnprintf(p->errmsg, sizeof(p->errmsg), fmt, ap);
	va_end(ap);
	atomic_store(&p->err, e ? e : -EIO);
	if (!p->poison && !p->dead && !p->ext) {
		/* fallback: no page of the region is served any more; threads
		 * waiting in a fault are woken by the unregister and fault
		 * again on PROT_NONE: SIGSEGV */
		struct uffdio_range r = { .start = (uintptr_t)p->base, .len = p->size };

		mprotect(p->base, p->size, PROT_NONE);
		ioctl(p->fd, UFFDIO_UNREGISTER, &r);
		p->dead = true;
	}
}

/* A page that cannot be served: the waiting threads get SIGBUS. */
static void poison_page(struct dimm_pager *p, uint32_t pg)
{
	struct uffdio_poison po;

	if (p->dead)
		return;
	memset(&po, 0, sizeof(po));
	po.range.start = page_uaddr(p, pg);
	po.range.len = DIMM_PAGE;
	if (ioctl(p->fd, UFFDIO_POISON, &po) == 0 || errno == EEXIST) {
		p->pol.state[pg] = DIMM_PG_POISONED;
		p->st.poisoned++;
	} else {
		uf_wake(p, pg);
	}
}

static uint64_t page_off(const struct dimm_pager *p, uint32_t pg)
{
	return p->cfg.off + (uint64_t)pg * DIMM_PAGE;
}

static uint64_t user_of(int kind, unsigned idx)
{
	return (uint64_t)kind << 32 | idx;
}

/* ------------------------------------------------------------ retries */

/* The client the pages are fetched through. */
static struct dimm_client *fetch_client(const struct dimm_pager *p)
{
	return p->cfg.fetch_client ? p->cfg.fetch_client : p->cfg.client;
}

/*
 * May an operation that ended with status/ht_err, already sent again
 * `tries` times, be sent again? Yes for what a warm VL reset does while the
 * lease is valid (dimm_reset_retryable: a request poisoned with a target
 * abort, or a flush saying -EPIPE: posted writes since the previous flush
 * may have been dropped). Reads and whole-page writes are idempotent, so
 * sending them again is safe. No when the lease is gone (-ENOLINK, or marked
 * lost meanwhile: the memory may be someone else's), for a master abort (no
 * answer within the request timeout, or unmapped), a data error, and after
 * max_retries.
 */
static bool lease_gone(struct dimm_pager *p)
{
	return atomic_load(&p->err) || dimm_client_lost(p->cfg.client) ||
	       dimm_client_lost(fetch_client(p));
}

static bool reset_retryable(struct dimm_pager *p, int status, uint8_t ht_err,
			    unsigned tries)
{
	return dimm_policy_may_retry(dimm_reset_retryable(status, ht_err), tries,
				     p->cfg.max_retries, lease_gone(p));
}

/* " after N retries" for an error message, "" when there was none. */
static const char *retries_text(char *buf, size_t len, unsigned tries)
{
	if (!tries)
		return "";
	snprintf(buf, len, " after %u retr%s", tries, tries == 1 ? "y" : "ies");
	return buf;
}


/* ------------------------------------------------------------ eviction */

static void finish_evicts(struct dimm_pager *p, struct dimm_evict **es, unsigned n);
static bool app_stopped(struct dimm_pager *p);

/* Send the pages of the write-backs es[0..n) (posted writes straight from
 * the mapping) and ONE flush that confirms them all: a Flush answered
 * TgtDone confirms every posted write before it on the VL, and the engine
 * answers it -EPIPE when a reset may have dropped one of the writes since
 * the previous flush (dimm.c takes the VL's loss count at the first of
 * them; they and the flush go into the client's queue back to back here).
 * The flush is es[0]'s (K_FL of its slot, e->lead). e->left: how many of
 * the page's write and that flush were submitted. */
static void evict_submit(struct dimm_pager *p, struct dimm_evict **es, unsigned n)
{
	struct dimm_client *c = p->cfg.client;
	int h;

	dimm_evict_submitting(&p->ev, es, n);
	for (unsigned k = 0; k < n; k++) {
		struct dimm_evict *e = es[k];

		h = dimm_write_async(c, page_off(p, e->page),
				     e->copied ? e->buf : page_addr(p, e->page), DIMM_PAGE, 0,
				     user_of(K_WB, (unsigned)(e - p->ev.slot)));
		if (h < 0)
			dimm_evict_write_unsent(e, h);
	}
	h = dimm_flush_async(c, user_of(K_FL, es[0]->lead));
	if (h < 0)
		dimm_evict_flush_unsent(es, n, h);
}

/* A write-back hit by a VL reset: the page is still resident and counts
 * as dirty (write-protected, or under wp-async rescanned when the write-back
 * is confirmed), send it again, alone with its own flush (a page of a batch
 * too: the batch's flush said -EPIPE for all of them). True if it is on its
 * way again. */
static bool evict_retry(struct dimm_pager *p, struct dimm_evict *e)
{
	if (!dimm_evict_retry(e, dimm_reset_retryable(e->status, e->ht_err), p->cfg.max_retries,
			      lease_gone(p)))
		return false;
	p->st.writeback_retries++;
	evict_submit(p, &e, 1);
	return e->left > 0;
}

/* Take an eviction slot for dirty page pg and make the page's content
 * stable (the caller submits: evict_go). NULL when no slot is free. keep:
 * the cleaner's (the page stays resident, clean, when the flush confirms
 * it). */
static struct dimm_evict *evict_claim(struct dimm_pager *p, uint32_t pg, bool keep)
{
	struct dimm_evict *e;
	int i = dimm_evict_free_slot(&p->ev);

	if (i < 0)
		return NULL;
	/* stable content while it is copied out: writers fault and wait
	 * (wp-async: make_room's scan protected it; a write meanwhile is seen
	 * by finish_evicts' scan). External: refused while the process's
	 * layout changes (EAGAIN until its remove event is read): not now */
	if (p->wp && !p->wp_async && uf_wp(p, pg, true) != 0 && p->ext)
		return NULL;
	e = dimm_evict_claim(&p->ev, (unsigned)i, &p->pol, pg, keep);
	dimm_sync_forget(&p->sync, pg);
	if (keep)
		p->st.cleaned++;
	else
		p->st.evictions++;
	p->st.writebacks++;
	p->st.bytes_out += DIMM_PAGE;
	return e;
}

/* Submit the claimed write-backs es[0..n) with one flush; those of which
 * nothing went out (the lease is lost) are over at once. */
static void evict_go(struct dimm_pager *p, struct dimm_evict **es, unsigned n)
{
	struct dimm_evict *over[N_EVICT];
	unsigned no = 0;

	evict_submit(p, es, n);
	for (unsigned k = 0; k < n; k++)
		if (es[k]->left == 0)
			over[no++] = es[k];
	if (no)
		finish_evicts(p, over, no);
}

/* Start writing back dirty page pg: returns the eviction slot, or -1 when
 * none is free (or nothing could be submitted). keep: as evict_claim. */
static int start_evict(struct dimm_pager *p, uint32_t pg, bool keep)
{
	struct dimm_evict *e = evict_claim(p, pg, keep);

	if (!e)
		return -1;
	evict_go(p, &e, 1);
	return e->used ? (int)(e - p->ev.slot) : -1;
}

/* The cleaner's write-back in flight for pg, or NULL. */
static struct dimm_evict *cleaning_of(struct dimm_pager *p, uint32_t pg)
{
	return dimm_evict_cleaning(&p->ev, pg);
}

/* wp-async: a page the cleaner wrote back that a scan found written
 * again is in use: a second chance (the reference a WP fault gives in wp
 * mode, where such a write sets ref), rather than a write-back now. */
static bool rewritten_after_clean(struct dimm_pager *p, uint32_t pg)
{
	if (!p->wp_async || p->pol.state[pg] != DIMM_PG_DIRTY ||
	    !(p->pol.pflags[pg] & DIMM_PF_WASHED))
		return false;
	p->pol.ref[pg] = 1;
	p->pol.pflags[pg] &= (uint8_t)~DIMM_PF_WASHED;
	return true;
}

/* A candidate victim for CLOCK (dimm_policy_clock, the cleaner's look
 * ahead): resident and not being evicted (a page the cleaner is writing
 * back is one). */
static bool victim_cand(void *arg, uint32_t pg)
{
	struct dimm_pager *p = arg;
	uint8_t s = p->pol.state[pg];

	return s == DIMM_PG_CLEAN || s == DIMM_PG_DIRTY ||
	       (s == DIMM_PG_EVICTING && cleaning_of(p, pg));
}

/* Evict the clean victim pg and, with it, the next clean unreferenced
 * pages after it up to `known` (the end of what this fault's scan saw),
 * as dimm_policy_clean_batch chooses them, in one drop_pages. */
static void drop_clean_victims(struct dimm_pager *p, uint32_t pg, uint32_t known)
{
	uint32_t v[DIMM_EVICT_BATCH];
	unsigned n = dimm_policy_clean_batch(&p->pol, pg, known, v);

	for (unsigned k = 0; k < n; k++)
		if (p->pol.pflags[v[k]] & DIMM_PF_WASHED)
			p->st.clean_hits++;
	if (drop_pages(p, v, n))
		p->st.batched_drops += n;
	p->st.evictions += n;
	p->st.drops_clean += n;
}

/* Evict the dirty victim pg and, with it, the next dirty unreferenced
 * pages after it up to `known` (as drop_clean_victims; free slots
 * permitting). copy: nothing writes them until they are dropped (the
 * application is stopped, or wp protected them): each is copied to its
 * slot's buffer, all are dropped in one drop_pages and written back from
 * the copies with one flush; the fault has its slot at once and waits for
 * no write-back, and a fault on one of them waits until its write-back is
 * confirmed (DIMM_PG_WRITING), then fetches it. Else the victim's write-back
 * goes with a flush of its own, which the fault waits for, then the
 * others' together with one flush, and the pages that flush confirms are
 * dropped together (finish_evicts): the next faults find free slots
 * instead of a write-back each. Only with dirty tracking: without it a
 * page written while its write-back is in flight would be dropped and the
 * write lost, so there the victim goes alone. wp-async: a page the cleaner
 * washed and that is dirty again waits for CLOCK to give it its second
 * chance (rewritten_after_clean). Returns -1 when the pages were copied
 * and dropped (a slot is free now), the victim's slot to wait for, or -2
 * when nothing is in flight. */
static int evict_dirty_victims(struct dimm_pager *p, uint32_t pg, uint32_t known, bool quiet,
			       unsigned res0, bool copy)
{
	struct dimm_evict *es[DIMM_EVICT_BATCH];
	uint32_t more[DIMM_EVICT_BATCH];
	unsigned n = 0, nmore = p->wp ? dimm_policy_dirty_batch(&p->pol, pg, known, p->wp_async,
							     more) : 0;

	es[n] = evict_claim(p, pg, false);
	if (!es[n])
		return -2;
	es[n]->quiet = quiet && pg < known;
	es[n]->res0 = res0;
	n++;
	for (unsigned k = 0; k < nmore; k++) {
		es[n] = evict_claim(p, more[k], false);
		if (!es[n])
			break;
		n++;
	}
	if (n > 1)
		p->st.batched_writebacks += n;
	if (copy) {
		uint32_t drop[DIMM_EVICT_BATCH];

		for (unsigned k = 0; k < n; k++) {
			copy_page_out(p, es[k]->buf, es[k]->page);
			es[k]->copied = true;
			drop[k] = es[k]->page;
		}
		drop_pages(p, drop, n);
		for (unsigned k = 0; k < n; k++)
			p->pol.state[drop[k]] = DIMM_PG_WRITING;
		p->st.copied_writebacks += n;
		evict_go(p, es, n);
		return -1;
	}
	/* the victim with a flush of its own first, which the fault waits
	 * for; the rest behind it with one flush, overlapped with the fault's
	 * install and the application's next steps (a later fault that needs
	 * room waits for one of them: make_room) */
	evict_go(p, es, 1);
	if (n > 1)
		evict_go(p, es + 1, n - 1);
	return es[0]->used ? (int)(es[0] - p->ev.slot) : -2;
}

/*
 * Make room for one more page: -1 when a slot is free now (the caller
 * reserves it), an eviction slot whose completion frees one, or -2 when
 * nothing can be evicted now (retry later). *why: for an eviction slot,
 * WAIT_VICTIM if this call began its write-back, WAIT_BATCH if it was in
 * flight before.
 */
static int make_room(struct dimm_pager *p, uint8_t *why)
{
	uint32_t scanned = 0, scanned_end = 0; /* pages [scanned, scanned_end) scanned by this call */
	bool quiet = false; /* ... while the application was stopped (quiet_since) */
	unsigned res0 = 0;
	bool copy;
	int w;

	if (!dimm_policy_full(&p->pol))
		return -1;
	/* may dirty victims be copied and dropped at once (evict_dirty_victims)?
	 * With wp the claim protects them (several application threads may
	 * run); else only while the application (one thread) is stopped,
	 * asked before any scan (app_stopped) */
	copy = (p->wp && !p->wp_async) || app_stopped(p);
	/* a write-back in flight that frees a slot sooner than a new one
	 * would (dimm_evict_to_wait_for) */
	w = dimm_evict_to_wait_for(&p->ev, copy);
	if (w >= 0) {
		*why = WAIT_BATCH;
		return w;
	}
	/* CLOCK: two sweeps find an unreferenced resident page if there is one */
	uint64_t left = 2ull * p->npages + 1;
	int64_t v;

	while ((v = dimm_policy_clock(&p->pol, &left, victim_cand, p)) >= 0) {
		uint32_t pg = (uint32_t)v;

		p->clean_due = true;
		if (p->pol.state[pg] == DIMM_PG_EVICTING) {
			/* the cleaner is writing it back: the slot frees when
			 * that flush confirms it */
			struct dimm_evict *e = cleaning_of(p, pg);

			e->keep = false;
			p->st.evictions++;
			p->st.clean_waits++;
			*why = WAIT_BATCH;
			return (int)(e - p->ev.slot);
		}
		if (p->wp_async && !(pg >= scanned && pg < scanned_end)) {
			/* one scan for this victim and the next ones (the
			 * faulting thread is stopped: nothing writes them
			 * before this call drops them or starts writing them
			 * back) */
			uint32_t span = dimm_policy_span(&p->pol, pg);

			res0 = atomic_load(&p->resumed);
			quiet = p->sigbus && app_stopped(p);
			/* (copy: the pages found written go at once, and the
			 * others stay dirty: nothing to protect) */
			if (wp_scan(p, pg, span, !copy) < 0) {
				p->pol.state[pg] = DIMM_PG_DIRTY; /* not known: write it back */
				span = 0;
			}
			scanned = pg;
			scanned_end = pg + span;
		}
		if (rewritten_after_clean(p, pg))
			continue;
		if (p->pol.state[pg] == DIMM_PG_CLEAN) {
			drop_clean_victims(p, pg, p->wp_async ? scanned_end : p->npages);
			return -1;
		}
		int e = evict_dirty_victims(p, pg, p->wp_async ? scanned_end : p->npages,
					    p->wp_async && quiet, res0, copy);

		*why = WAIT_VICTIM;
		return e;
	}
	return -2;
}

static void fetch_room(struct dimm_pager *p, struct fetch *f)
{
	uint8_t why = WAIT_NONE;
	int r;

	if (f->room != ROOM_NEED)
		return;
	/* wp-async: a write to a page between the scan that finds it clean
	 * and its drop would be lost, so pages are evicted only while the
	 * faulting thread is stopped: never for a readahead (see try_install) */
	if (p->wp_async && !f->waiter && dimm_policy_full(&p->pol))
		return;
	r = make_room(p, &why);
	if (r == -1) {
		p->pol.reserved++;
		f->room = ROOM_OK;
	} else if (r >= 0) {
		p->ev.slot[r].waiter = (int)(f - p->fe);
		f->room = ROOM_WAIT;
		if (f->room_why < why)
			f->room_why = why; /* a batch's wait is the longer one */
	} else if (!f->waited) {
		f->waited = true;
		p->st.room_waits++;
	}
}

/* Run to completion: does a thread in its SIGBUS handler wait for pg? A
 * fault posted by a thread that has left its handler since (it posts
 * again when it finds its post read but the page still absent) is stale:
 * serving it would count a fetch "a thread waits for" while the
 * application runs. True when a thread there has no stopped_at slot: it
 * may. */
static bool sigbus_waits_for(struct dimm_pager *p, uint32_t pg)
{
	if (atomic_load(&p->stopped_more))
		return true;
	for (unsigned i = 0; i < N_STOP; i++)
		if (atomic_load(&p->stopped_at[i]) == pg + 1)
			return true;
	return false;
}

/* wp-async (one application thread): is it stopped at a fault, and does
 * it stay stopped until the caller (the pager's thread) installs a page?
 * Then nothing writes a page between a scan that finds it clean and its
 * drop, if this is asked BEFORE the scan. Run to completion: a thread in
 * its SIGBUS handler waits for a page that is not resident — not merely
 * "a thread is in its handler": one whose page the loop thread installed
 * already (while the handler slept) leaves it at any moment and writes.
 * Otherwise: a fetch a thread waits for is in flight (the thread sleeps
 * in the kernel until it is installed). */
static bool app_stopped(struct dimm_pager *p)
{
	if (p->sigbus) {
		for (unsigned i = 0; i < N_STOP; i++) {
			uint32_t v = atomic_load(&p->stopped_at[i]);

			if (v && v <= p->npages &&
			    (p->pol.state[v - 1] == DIMM_PG_ABSENT ||
			     p->pol.state[v - 1] == DIMM_PG_FETCHING ||
			     p->pol.state[v - 1] == DIMM_PG_WRITING))
				return true;
		}
		return false;
	}
	for (unsigned i = 0; i < N_FETCH; i++)
		if (p->fe[i].used && p->fe[i].waiter)
			return true;
	return false;
}

/* Run to completion (wp-async): was every write-back of es[0..n) that
 * succeeded scanned while the application was stopped (a thread in its
 * SIGBUS handler: one application thread in this mode), and has it stayed
 * stopped since? Then nothing can have written those pages: no thread left
 * its handler (`resumed` unchanged) and one is still in it. A fault's dirty
 * victim, whose confirmation the fault waits for, is such a write-back:
 * its PAGEMAP_SCAN (a TLB flush of every CPU of the process) is saved. */
static bool quiet_since(struct dimm_pager *p, struct dimm_evict **es, unsigned n)
{
	return dimm_evict_quiet(es, n, atomic_load(&p->resumed)) && app_stopped(p);
}

/* The error state for a write-back that failed (status set): which page,
 * after how many resends, why. */
static void writeback_failed(struct dimm_pager *p, const struct dimm_evict *e)
{
	char rt[32];

	if (e->status)
		set_error(p, e->status, "write-back of page %u (lease offset 0x%llx) failed%s: %s",
			  e->page, (unsigned long long)page_off(p, e->page),
			  retries_text(rt, sizeof(rt), e->retries),
			  dimm_strerror(e->status, e->ht_err));
}

/* A copied write-back that failed for good (not a VL reset: the lease is
 * lost, or the error state): the page's data goes back into the mapping
 * from the copy, dirty, and the error is reported as for any write-back
 * (the region is then served no more; the data is not lost while the
 * mapping lives). */
static void copy_back(struct dimm_pager *p, struct dimm_evict *e)
{
	uint32_t pg = e->page;
	struct uffdio_copy cp;

	writeback_failed(p, e);
	if (p->dead)
		return; /* unregistered (no poisoning here): nothing maps it */
	memset(&cp, 0, sizeof(cp));
	cp.dst = page_uaddr(p, pg);
	cp.src = (uintptr_t)e->buf;
	cp.len = DIMM_PAGE;
	if (ioctl(p->fd, UFFDIO_COPY, &cp) == 0) {
		p->pol.state[pg] = DIMM_PG_DIRTY;
		p->pol.ref[pg] = 1;
		p->pol.mapped++;
		p->st.restored++;
	}
}

/*
 * The end of the write-backs es[0..n), every completion of which is in
 * (the pages of one flush, or one page): those a VL reset hit are sent
 * again; of the others, a page written meanwhile (wp-async: one scan for
 * them all) stays dirty, the cleaner's stay resident and clean, a failed
 * one stays here, writable (the error state), and the rest are dropped,
 * all in one drop_pages; a copied one (dropped already) is absent from now
 * on, or, failed, comes back from its copy (copy_back). wp-async while the application may run (a batch
 * confirmed after its fault went on, or a page of it retried alone after
 * a VL reset): kept resident and clean instead, the next fault's eviction
 * drops it. Then the fetches that waited for their slots go on.
 */
static void finish_evicts(struct dimm_pager *p, struct dimm_evict **es, unsigned n)
{
	uint32_t drop[N_EVICT], lo = UINT32_MAX, hi = 0;
	unsigned m = 0, nd = 0;
	long scan = 0;

	for (unsigned k = 0; k < n; k++) {
		struct dimm_evict *e = es[k];

		if (e->status && evict_retry(p, e))
			continue;
		dimm_evict_over(e);
		es[m++] = e;
		if (!e->status && !e->copied) {
			lo = e->page < lo ? e->page : lo;
			hi = e->page > hi ? e->page : hi;
		}
	}
	if (!m)
		return;
	p->clean_due = true;
	/* wp-async: may the pages go? Only if the application is stopped
	 * from before the scan until the drop (asked after the scan, a write
	 * made between the scan and a fault that stopped the thread would be
	 * dropped unseen) */
	bool may_drop = !p->wp_async || app_stopped(p);

	/* wp-async: written during the write-back? (the pages are still
	 * DIMM_PG_EVICTING: the scan remembers a write in DIMM_PF_WRITTEN) Not asked
	 * when none of them can have been: each one scanned while the
	 * application was stopped, and stopped ever since (quiet_since) */
	if (p->wp_async && lo <= hi && !atomic_load(&p->err) && !quiet_since(p, es, m))
		scan = wp_scan(p, lo, hi - lo + 1, true);

	for (unsigned k = 0; k < m; k++) {
		struct dimm_evict *e = es[k];

		switch (dimm_evict_end(e, &p->pol, atomic_load(&p->err), may_drop, p->wp_async,
				       scan < 0)) {
		case DIMM_EV_RESTORE:
			copy_back(p, e);
			break;
		case DIMM_EV_KEPT:
			p->st.evictions--; /* not evicted after all */
			break;
		case DIMM_EV_DROP:
			drop[nd++] = e->page;
			break;
		case DIMM_EV_FAILED:
			writeback_failed(p, e);
			if (p->wp && !p->dead)
				uf_wp(p, e->page, false);
			break;
		case DIMM_EV_ABSENT:
		case DIMM_EV_DIRTY:
		case DIMM_EV_WASHED:
			break;
		}
	}
	if (nd)
		drop_pages(p, drop, nd);
	for (unsigned k = 0; k < m; k++) {
		struct dimm_evict *e = es[k];

		if (e->waiter >= 0)
			p->fe[e->waiter].room = dimm_evict_room_for_waiter(e, &p->pol) ? ROOM_OK
										: ROOM_NEED;
	}
}

/* The flush of the write-backs that slot `lead` leads: it counts for
 * each of them. */
static void flush_done(struct dimm_pager *p, unsigned lead, const struct dimm_result *r)
{
	struct dimm_evict *done[N_EVICT];
	unsigned n = dimm_evict_flush_done(&p->ev, lead, r->status, r->ht_err, done);

	if (n)
		finish_evicts(p, done, n);
}

/* ------------------------------------------------------------ fetch */

static struct fetch *fetch_alloc(struct dimm_pager *p, unsigned keep)
{
	unsigned n_free = 0;
	struct fetch *f = NULL;

	for (unsigned i = 0; i < N_FETCH; i++)
		if (!p->fe[i].used) {
			n_free++;
			if (!f)
				f = &p->fe[i];
		}
	return n_free > keep ? f : NULL;
}

static struct fetch *fetch_of(struct dimm_pager *p, uint32_t pg)
{
	for (unsigned i = 0; i < N_FETCH; i++)
		if (p->fe[i].used && p->fe[i].page == pg)
			return &p->fe[i];
	return NULL;
}

/* Read f's page into its bounce buffer. */
static void fetch_submit(struct dimm_pager *p, struct fetch *f)
{
	int h;

	f->done = false;
	f->status = 0;
	f->ht_err = 0;
	h = dimm_read_async(fetch_client(p), page_off(p, f->page), f->buf, DIMM_PAGE,
			    user_of(K_FETCH, (unsigned)(f - p->fe)));
	if (h < 0) {
		f->done = true;
		f->status = h;
	}
}

/* A fetch hit by a VL reset: read the page again. True if it is on its way
 * again (or failed to be submitted: try_install sees that next). */
static bool fetch_retry(struct dimm_pager *p, struct fetch *f)
{
	if (!reset_retryable(p, f->status, f->ht_err, f->retries))
		return false;
	f->retries++;
	p->st.fetch_retries++;
	fetch_submit(p, f);
	return true;
}

static void start_fetch(struct dimm_pager *p, struct fetch *f, uint32_t pg, bool write,
			bool waiter, uint64_t t0)
{
	f->used = true;
	f->page = pg;
	f->write = write;
	f->waiter = waiter;
	f->t0 = t0;
	f->room = ROOM_NEED;
	f->room_why = WAIT_NONE;
	f->waited = false;
	f->retries = 0;
	p->pol.state[pg] = DIMM_PG_FETCHING;
	p->st.fetches++;
	if (!waiter)
		p->st.readaheads++;
	fetch_submit(p, f);
	fetch_room(p, f);
}

/* External: a fresh page's fault installs zeros (no fetch; dirty: the
 * lease holds something else). */
static void start_zero(struct dimm_pager *p, struct fetch *f, uint32_t pg, uint64_t t0)
{
	f->used = true;
	f->page = pg;
	f->write = true;
	f->waiter = true;
	f->t0 = t0;
	f->room = ROOM_NEED;
	f->room_why = WAIT_NONE;
	f->waited = false;
	f->retries = 0;
	f->done = true;
	f->status = 0;
	f->ht_err = 0;
	p->pol.state[pg] = DIMM_PG_FETCHING;
	fetch_room(p, f);
}

static void fetch_release(struct dimm_pager *p, struct fetch *f)
{
	if (f->room == ROOM_OK)
		p->pol.reserved--;
	if (f->room == ROOM_WAIT)
		dimm_evict_unwait(&p->ev, (int)(f - p->fe));
	f->used = false;
}

/* A finished fetch: install the page (or poison it). Returns true if done. */
static bool try_install(struct dimm_pager *p, struct fetch *f)
{
	uint32_t pg = f->page;
	struct uffdio_copy cp;
	char rt[32];

	if (!f->done)
		return false;
	if (p->pol.pflags[pg] & DIMM_PF_FRESH) {
		/* a fresh page: zeros for a thread that waits, else nothing */
		if (!f->waiter) {
			p->pol.state[pg] = DIMM_PG_ABSENT;
			p->st.readahead_dropped++;
			fetch_release(p, f);
			return true;
		}
		memset(f->buf, 0, DIMM_PAGE);
		f->status = 0;
		f->write = true;
	}
	if (f->status && fetch_retry(p, f))
		return false;
	if (f->status || atomic_load(&p->err)) {
		if (f->status)
			set_error(p, f->status,
				  "fetch of page %u (lease offset 0x%llx) failed%s: %s", pg,
				  (unsigned long long)page_off(p, pg),
				  retries_text(rt, sizeof(rt), f->retries),
				  dimm_strerror(f->status, f->ht_err));
		p->pol.state[pg] = DIMM_PG_ABSENT;
		if (f->waiter)
			poison_page(p, pg);
		fetch_release(p, f);
		return true;
	}
	fetch_room(p, f);
	if (f->room != ROOM_OK) {
		if (p->wp_async && !f->waiter && f->room == ROOM_NEED) {
			/* a readahead without a free slot: dropped (fetch_room) */
			p->pol.state[pg] = DIMM_PG_ABSENT;
			p->st.readahead_dropped++;
			fetch_release(p, f);
			return true;
		}
		return false;
	}
	memset(&cp, 0, sizeof(cp));
	cp.dst = page_uaddr(p, pg);
	cp.src = (uintptr_t)f->buf;
	cp.len = DIMM_PAGE;
	cp.mode = p->wp && !f->write ? UFFDIO_COPY_MODE_WP : 0;
	if (ioctl(p->fd, UFFDIO_COPY, &cp) != 0 && errno != EEXIST) {
		if (errno == EAGAIN)
			return false; /* the mm changed: try again */
		if (p->ext && errno == ESRCH) {
			/* the process exited or exec'd: nobody waits */
			p->pol.state[pg] = DIMM_PG_ABSENT;
			fetch_release(p, f);
			return true;
		}
		set_error(p, -errno, "UFFDIO_COPY of page %u: %s", pg, strerror(errno));
		p->pol.state[pg] = DIMM_PG_ABSENT;
		fetch_release(p, f);
		return true;
	}
	dimm_policy_installed(&p->pol, pg, !p->wp || f->write);
	p->clean_due = true;
	if (dimm_policy_in_use(&p->pol, pg)) {
		p->st.in_use = p->pol.in_use;
		if (p->pol.in_use > p->st.in_use_max)
			p->st.in_use_max = p->pol.in_use;
		p->st.zero_fills++;
		budget_update(p);
		fetch_release(p, f);
		return true;
	}
	p->st.bytes_in += DIMM_PAGE;
	if (f->waiter) {
		uint64_t ns = now_ns() - f->t0;

		p->st.faults++;
		lat_add(&p->st.hist, ns);
		if (f->room_why == WAIT_VICTIM) {
			p->st.victim_waits++;
			lat_add(&p->st.hist_victim, ns);
		} else if (f->room_why == WAIT_BATCH) {
			p->st.batch_waits++;
			lat_add(&p->st.hist_batch, ns);
		}
	}
	fetch_release(p, f);
	return true;
}

/*
 * Adaptive readahead, on a demand fault on pg (or on a page being read
 * ahead). The window [ra_lo, ra_hi] is the last fault and the pages read
 * ahead after it. A fault inside it or just past it continues a sequential
 * run: the window doubles, up to cfg.readahead and a quarter of the budget.
 * A fault elsewhere halves it; it starts again (one page) on a fault on
 * the page after the previous fault. Random access thus stops it after a
 * few faults, and a sweep reaches the full window in a few steps.
 * wp-async: only into free slots (a readahead never evicts, fetch_room).
 */
static void do_readahead(struct dimm_pager *p, uint32_t pg)
{
	unsigned w;

	if (!p->cfg.readahead || atomic_load(&p->err))
		return;
	w = dimm_policy_readahead(&p->pol, pg, p->cfg.readahead);
	for (unsigned k = 1; k <= w && pg + k < p->npages; k++) {
		struct fetch *f;

		p->pol.ra_hi = pg + k;
		if (p->pol.state[pg + k] != DIMM_PG_ABSENT ||
		    (p->pol.pflags[pg + k] & DIMM_PF_FRESH))
			continue;
		if (p->wp_async && dimm_policy_full(&p->pol))
			break;
		f = fetch_alloc(p, 4); /* keep some for demand faults */
		if (!f)
			break;
		start_fetch(p, f, pg + k, false, false, 0);
	}
}

/* ------------------------------------------------------------ faults */

/* Handle one fault message: true when done, false to keep it for later. */
static bool handle_fault(struct dimm_pager *p, const struct pend *m)
{
	uint32_t pg = m->page;
	bool wp = m->flags & UFFD_PAGEFAULT_FLAG_WP;
	bool write = m->flags & UFFD_PAGEFAULT_FLAG_WRITE;
	struct fetch *f;

	switch (dimm_policy_fault(&p->pol, pg, wp, atomic_load(&p->err) != 0)) {
	case DIMM_FA_POISON:
		poison_page(p, pg);
		return true;
	case DIMM_FA_FETCH:
	case DIMM_FA_ZERO:
		if (p->sigbus && !sigbus_waits_for(p, pg)) {
			p->st.spurious++; /* a stale post: nobody waits */
			return true;
		}
		f = fetch_alloc(p, 0);
		if (!f)
			return false;
		if (p->pol.pflags[pg] & DIMM_PF_FRESH) {
			start_zero(p, f, pg, m->t0);
			return true;
		}
		start_fetch(p, f, pg, write || wp, true, m->t0);
		do_readahead(p, pg);
		return true;
	case DIMM_FA_JOIN:
		f = fetch_of(p, pg);
		if (f) {
			if (write || wp)
				f->write = true;
			if (!f->waiter && (!p->sigbus || sigbus_waits_for(p, pg))) {
				f->waiter = true;
				f->t0 = m->t0;
				p->st.readahead_hits++;
			}
		}
		do_readahead(p, pg);
		return true;
	case DIMM_FA_FIRST_WRITE:
		uf_wp(p, pg, false);
		dimm_sync_forget(&p->sync, pg);
		p->clean_due = true;
		p->st.wp_faults++;
		lat_add(&p->st.hist_wp, now_ns() - m->t0);
		return true;
	case DIMM_FA_REWRITE:
		/* written while a sync copied it: dirty again */
		dimm_sync_forget(&p->sync, pg);
		uf_wp(p, pg, false);
		return true;
	case DIMM_FA_WAIT:
		return false;
	case DIMM_FA_SPURIOUS:
		break;
	}
	/* handled already (stale message, or a poisoned page): let it retry */
	p->st.spurious++;
	uf_wake(p, pg);
	return true;
}

/*
 * External: the process gives back [start, end) (madvise MADV_REMOVE, which
 * waits until this event is read and then punches the hole itself). Its
 * pages are fresh from now on: a resident one leaves the resident set, a
 * fetch in flight is discarded or installs zeros (try_install), a
 * write-back in flight finishes (its data no longer matters) and leaves
 * the page absent and fresh.
 */
static void given_back(struct dimm_pager *p, uint64_t start, uint64_t end)
{
	uint64_t lo = start > p->uaddr ? start - p->uaddr : 0;
	uint64_t hi = end > p->uaddr ? end - p->uaddr : 0;

	if (hi > p->size)
		hi = p->size;
	for (uint64_t o = (lo + DIMM_PAGE - 1) / DIMM_PAGE * DIMM_PAGE; o + DIMM_PAGE <= hi;
	     o += DIMM_PAGE) {
		uint32_t pg = (uint32_t)(o / DIMM_PAGE);

		int r = dimm_policy_given_back(&p->pol, pg);

		if (!r)
			continue;
		if (r == 2) {
			dimm_sync_forget(&p->sync, pg);
			p->clean_due = true;
		}
		p->st.removed++;
	}
	p->st.in_use = p->pol.in_use;
	budget_update(p);
}

static unsigned read_faults(struct dimm_pager *p)
{
	struct uffd_msg msg[16];
	unsigned room = N_PEND - p->n_pend, got = 0;

	while (room > 0) {
		unsigned want = room < 16 ? room : 16;
		ssize_t n = read(p->fd, msg, want * sizeof(msg[0]));

		if (n <= 0)
			break;
		uint64_t t = now_ns();

		for (unsigned i = 0; i < (unsigned)n / sizeof(msg[0]); i++) {
			uintptr_t a;

			if (msg[i].event == UFFD_EVENT_REMOVE && p->ext) {
				given_back(p, msg[i].arg.remove.start, msg[i].arg.remove.end);
				got++;
				continue;
			}
			if (msg[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			a = (uintptr_t)msg[i].arg.pagefault.address;
			if (a < p->uaddr || a - p->uaddr >= p->size)
				continue;
			struct pend *e = &p->pend[p->n_pend++];

			e->page = (uint32_t)((a - p->uaddr) / DIMM_PAGE);
			e->flags = (uint32_t)msg[i].arg.pagefault.flags;
			e->t0 = t;
			room--;
			got++;
		}
	}
	return got;
}

static unsigned handle_pending(struct dimm_pager *p)
{
	unsigned done = 0, j = 0;

	for (unsigned i = 0; i < p->n_pend; i++) {
		if (handle_fault(p, &p->pend[i]))
			done++;
		else
			p->pend[j++] = p->pend[i];
	}
	p->n_pend = j;
	return done;
}

/* ------------------------------------------------------------ sync */

static bool evictions_in_flight(const struct dimm_pager *p)
{
	return dimm_evict_in_flight(&p->ev, false) > 0;
}

int dimm_pager_sync(struct dimm_pager *p, bool drop, void (*idle)(void *), void *arg)
{
	unsigned seq;

	atomic_store(&p->sync_drop, drop);
	seq = atomic_fetch_add(&p->sync_req, 1) + 1;
	while ((int)(atomic_load(&p->sync_done) - seq) < 0) {
		if (idle)
			idle(arg);
		else
			sched_yield();
	}
	return atomic_load(&p->sync_status);
}

/* The sync requested by an application thread (dimm_pager_sync), as
 * dimm_sync decides it: this performs the write-backs, the flush and the
 * end it asks for. */
static unsigned sync_step(struct dimm_pager *p)
{
	struct dimm_client *c = p->cfg.client;
	struct dimm_sync *s = &p->sync;
	unsigned work = 0;
	uint32_t pg;
	bool evicting = evictions_in_flight(p); /* nothing here starts one */

	if (s->phase == DIMM_SYNC_IDLE) {
		unsigned req = atomic_load(&p->sync_req);

		if (req == atomic_load(&p->sync_done) ||
		    !dimm_sync_begin(s, atomic_load(&p->err), p->wp_async, evicting))
			return 0;
		p->sync_serving = req;
		p->st.syncs++;
		if (p->wp_async && !s->st) {
			long r = wp_scan(p, 0, p->npages, true);

			if (r < 0)
				dimm_sync_fail(s, (int)r);
		}
		work++;
	}
	for (;;) {
		enum dimm_sync_do d = dimm_sync_next(s, &p->pol, SYNC_MAX, evicting, &pg);

		if (d == DIMM_SYNC_WRITE) {
			if (p->wp && !p->wp_async)
				uf_wp(p, pg, true);
			int h = dimm_write_async(c, page_off(p, pg), page_addr(p, pg), DIMM_PAGE, 0,
						 user_of(K_SWB, pg));

			if (h < 0) {
				if (p->wp && !p->wp_async)
					uf_wp(p, pg, false);
				dimm_sync_unsent(s, h);
				if (h == -EAGAIN)
					return work; /* no descriptor now: later */
				continue;
			}
			dimm_sync_sent(s, &p->pol, pg);
			p->st.writebacks++;
			p->st.bytes_out += DIMM_PAGE;
			work++;
		} else if (d == DIMM_SYNC_FLUSH) {
			if (dimm_flush_async(c, user_of(K_SFL, 0)) < 0)
				return work; /* asked again later */
			dimm_sync_flush_sent(s);
			work++;
		} else if (d == DIMM_SYNC_END) {
			break;
		} else {
			return work;
		}
	}
	/* a VL reset hit a write-back or the flush: all of it again */
	if (s->st && dimm_sync_retry(s, dimm_reset_retryable(s->st, s->ht_err), p->cfg.max_retries,
				     lease_gone(p))) {
		p->st.writeback_retries++;
		return work + 1;
	}
	bool drop = atomic_load(&p->sync_drop);

	for (pg = 0; pg < p->npages; pg++) {
		switch (dimm_sync_page(s, &p->pol, pg, p->wp, drop)) {
		case DIMM_SYNC_PG_UNPROTECT:
			if (!p->dead)
				uf_wp(p, pg, false);
			break;
		case DIMM_SYNC_PG_DROP:
			drop_page(p, pg);
			break;
		case DIMM_SYNC_PG_KEEP:
			break;
		}
	}
	if (s->st && !atomic_load(&p->err)) {
		char rt[32];

		set_error(p, s->st, "sync: write-back failed%s: %s",
			  retries_text(rt, sizeof(rt), s->retries), dimm_strerror(s->st, s->ht_err));
	}
	/* an eviction's or the cleaner's write-back that failed meanwhile
	 * left its page here, not in the remote memory: not synced */
	int st = dimm_sync_finish(s);

	atomic_store(&p->sync_status, st ? st : atomic_load(&p->err));
	atomic_store(&p->sync_done, p->sync_serving);
	return work + 1;
}

/* ------------------------------------------------------------ cleaner */

/* A fetch a faulting thread waits for is on its way. */
static bool demand_in_flight(const struct dimm_pager *p)
{
	for (unsigned i = 0; i < N_FETCH; i++)
		if (p->fe[i].used && p->fe[i].waiter && !p->fe[i].done)
			return true;
	return false;
}

/* wp-async: scan (and protect again) the written pages among the n pages
 * the CLOCK hand reaches next, wrapping around. */
static long scan_ahead(struct dimm_pager *p, uint64_t n)
{
	uint32_t to_end = p->npages - p->pol.hand;
	long r;

	if (n >= p->npages)
		return wp_scan(p, 0, p->npages, true);
	if (n <= to_end)
		return wp_scan(p, p->pol.hand, (uint32_t)n, true);
	r = wp_scan(p, p->pol.hand, to_end, true);
	return r < 0 ? r : wp_scan(p, 0, (uint32_t)(n - to_end), true);
}

/*
 * Write-back ahead of eviction (dimm_pager.h, "Cleaner"). When fewer than
 * clean_low slots are free, walk the pages in the order make_room will
 * evict them (the hand's two CLOCK sweeps, without moving it or clearing a
 * reference bit: unreferenced pages on the first, the others on the
 * second) until free slots plus victims found make clean_low, and start
 * the write-back of the dirty ones among them (at most CLEAN_BURST now,
 * N_CLEAN in flight). Only after the faults read are handled (their
 * fetches are on their way first; run to completion: only while a fetch
 * a thread waits for is in flight), not during a sync, and only when
 * something changed since the last look (clean_due). Returns the
 * write-backs started.
 */
static unsigned clean_step(struct dimm_pager *p)
{
	uint32_t cand[DIMM_PAGER_CLEAN_MAX];
	unsigned want, nc, started = 0, busy = 0;
	uint32_t used = p->pol.mapped + p->pol.reserved;
	uint64_t n;

	if (!p->clean_low || !p->clean_due || p->n_pend || p->sync.phase || p->dead ||
	    atomic_load(&p->sync_req) != atomic_load(&p->sync_done) || atomic_load(&p->err))
		return 0;
	/* run to completion: nobody polls once the faulting thread goes on,
	 * so write-backs started then would wait in the queue, in front of
	 * the next fault's reads: only behind a fetch that a thread waits for */
	if (p->sigbus && !demand_in_flight(p))
		return 0;
	p->clean_due = false;
	want = dimm_policy_clean_want(&p->pol, p->clean_low);
	if (!want)
		return 0;
	nc = dimm_policy_next_victims(&p->pol, want, victim_cand, p, cand, &n);
	/* wp-async: a scan costs an ioctl (and a TLB flush when it protects
	 * a page again), so scan in bursts: only when fewer than half the
	 * watermark are known ready, then every victim up to it at once. A
	 * page written after the cleaner saw it is the eviction's to find. */
	if (p->wp_async) {
		unsigned ready = p->pol.budget > used ? p->pol.budget - used : 0, unseen = 0;

		for (unsigned i = 0; i < nc; i++) {
			if (p->pol.state[cand[i]] == DIMM_PG_EVICTING ||
			    (p->pol.pflags[cand[i]] & DIMM_PF_SEEN))
				ready++;
			else
				unseen++;
		}
		if (unseen && 2 * ready < p->clean_low) {
			if (scan_ahead(p, n) < 0)
				return 0; /* not known: the eviction writes it back */
			for (unsigned i = 0; i < nc; i++) {
				uint32_t pg = cand[i];

				if (rewritten_after_clean(p, pg)) {
					cand[i] = UINT32_MAX;
					continue;
				}
				p->pol.pflags[pg] |= DIMM_PF_SEEN;
			}
		}
	}
	busy = dimm_evict_in_flight(&p->ev, true);
	for (unsigned i = 0; i < nc && started < CLEAN_BURST && busy < N_CLEAN; i++) {
		if (cand[i] == UINT32_MAX || p->pol.state[cand[i]] != DIMM_PG_DIRTY)
			continue;
		if (start_evict(p, cand[i], true) < 0)
			break;
		started++;
		busy++;
	}
	if (started)
		p->clean_due = true; /* more next time if the burst was not enough */
	return started;
}

/* ------------------------------------------------------------ poll */

static void dispatch(struct dimm_pager *p, const struct dimm_result *r)
{
	unsigned kind = (unsigned)(r->user >> 32), idx = (unsigned)r->user;

	switch (kind) {
	case K_FETCH: {
		struct fetch *f = &p->fe[idx];

		f->done = true;
		f->status = r->status;
		f->ht_err = r->ht_err;
		break;
	}
	case K_WB: {
		struct dimm_evict *e = &p->ev.slot[idx];

		if (dimm_evict_write_done(e, r->status, r->ht_err))
			finish_evicts(p, &e, 1);
		break;
	}
	case K_FL:
		flush_done(p, idx, r);
		break;
	case K_SWB:
	case K_SFL:
		dimm_sync_done(&p->sync, r->status, r->ht_err);
		break;
	default:
		break;
	}
}

/*
 * Read the userfaultfd now? Every read is a system call, and most return
 * nothing: a poll loop that read it on every pass spent more than half its
 * CPU there (perf, docs/dimm.md "Measurements"). While a demand fetch is in
 * flight the thread that faulted is stopped, so a new fault can only come
 * from another thread: the fd is then read on every FAULT_READ_EVERY-th
 * pass only. With nothing demanded, on every pass.
 */
#define FAULT_READ_EVERY 16u

static bool fault_read_due(struct dimm_pager *p)
{
	if (p->dead)
		return false;
	if (++p->polls % FAULT_READ_EVERY == 0)
		return true;
	for (unsigned i = 0; i < N_FETCH; i++)
		if (p->fe[i].used && p->fe[i].waiter)
			return false;
	return true;
}

/*
 * Run to completion, in the faulting thread's SIGBUS handler: post the
 * page for whoever polls the pager next and drive the node (cfg.drive)
 * until the page is resident. False (the signal goes on to the error path)
 * when the pager is in the error state. Calls only what cfg.drive calls,
 * atomics and clock_gettime: see dimm_pager.h for the constraints.
 */
static bool sigbus_wait(struct dimm_pager *p, uint32_t pg)
{
	int slot = -1;

	for (;;) {
		uint8_t st = __atomic_load_n(&p->pol.state[pg], __ATOMIC_ACQUIRE);

		if (atomic_load(&p->err) || st == DIMM_PG_POISONED)
			return false;
		if (st == DIMM_PG_CLEAN || st == DIMM_PG_DIRTY || st == DIMM_PG_EVICTING)
			return true;
		/* (again if it was read and the page is absent anyway: a
		 * duplicate is harmless, a lost one would wait for ever) */
		if (slot >= 0 && st == DIMM_PG_ABSENT && atomic_load(&p->sigq[slot]) != pg + 1)
			slot = -1;
		for (unsigned i = 0; slot < 0 && i < N_SIGQ; i++) {
			uint32_t none = 0;

			if (atomic_compare_exchange_strong(&p->sigq[i], &none, pg + 1)) {
				slot = (int)i;
				atomic_fetch_add(&p->sigq_posts, 1);
			}
		}
		p->cfg.drive(p->cfg.drive_arg);
	}
}

/* sigbus_wait, its page posted in stopped_at meanwhile (app_stopped). */
static bool sigbus_serve(struct dimm_pager *p, uintptr_t a)
{
	uint32_t pg = (uint32_t)((a - (uintptr_t)p->base) / DIMM_PAGE);
	int slot = -1;
	bool r;

	if (!p->sigbus)
		return false;
	/* waits for pg, stopped while pg is absent (sigbus_waits_for,
	 * app_stopped); without a free slot not counted as stopped (the pager
	 * then keeps pages instead of dropping them), and every post served */
	for (unsigned i = 0; slot < 0 && i < N_STOP; i++) {
		uint32_t none = 0;

		if (atomic_compare_exchange_strong(&p->stopped_at[i], &none, pg + 1))
			slot = (int)i;
	}
	if (slot < 0)
		atomic_fetch_add(&p->stopped_more, 1);
	r = sigbus_wait(p, pg);
	atomic_fetch_add(&p->resumed, 1); /* (before it counts as running: quiet_since) */
	if (slot >= 0)
		atomic_store(&p->stopped_at[slot], 0);
	else
		atomic_fetch_sub(&p->stopped_more, 1);
	return r;
}

/* Faults posted by SIGBUS handlers -> pend[]. The slots are read only
 * when something was posted since they were all read last (a waiting
 * thread drives the node in a tight loop: this runs in every turn). */
static unsigned read_sigq(struct dimm_pager *p)
{
	unsigned got = 0, i, posts = atomic_load_explicit(&p->sigq_posts, memory_order_acquire);
	uint64_t t = 0;

	if (posts == p->sigq_seen)
		return 0;
	for (i = 0; i < N_SIGQ && p->n_pend < N_PEND; i++) {
		uint32_t v = atomic_load_explicit(&p->sigq[i], memory_order_relaxed);

		if (!v)
			continue;
		atomic_store_explicit(&p->sigq[i], 0, memory_order_relaxed);
		if (!t)
			t = now_ns();
		p->pend[p->n_pend].page = v - 1;
		p->pend[p->n_pend].flags = 0;
		p->pend[p->n_pend].t0 = t;
		p->n_pend++;
		got++;
	}
	if (i == N_SIGQ)
		p->sigq_seen = posts;
	return got;
}

unsigned dimm_pager_poll(struct dimm_pager *p)
{
	struct dimm_result r[32];
	unsigned work = 0, n;

	while ((n = dimm_reap(p->cfg.client, r, 32)) > 0) {
		for (unsigned i = 0; i < n; i++)
			dispatch(p, &r[i]);
		work += n;
	}
	while (p->cfg.fetch_client && (n = dimm_reap(p->cfg.fetch_client, r, 32)) > 0) {
		for (unsigned i = 0; i < n; i++)
			dispatch(p, &r[i]);
		work += n;
	}
	for (unsigned i = 0; i < N_FETCH; i++)
		if (p->fe[i].used && try_install(p, &p->fe[i]))
			work++;
	if (p->sigbus)
		work += read_sigq(p);
	else if (fault_read_due(p))
		work += read_faults(p);
	work += handle_pending(p);
	work += sync_step(p);
	work += clean_step(p);
	atomic_store_explicit(&p->idle,
			      !dimm_pager_busy(p) && dimm_inflight(p->cfg.client) == 0 &&
				      dimm_inflight(fetch_client(p)) == 0,
			      memory_order_release);
	return work;
}

bool dimm_pager_idle(const struct dimm_pager *p)
{
	return atomic_load_explicit(&((struct dimm_pager *)p)->idle, memory_order_acquire);
}

bool dimm_pager_busy(const struct dimm_pager *p)
{
	if (p->n_pend || p->sync.phase)
		return true;
	for (unsigned i = 0; i < N_FETCH; i++)
		if (p->fe[i].used)
			return true;
	return dimm_evict_in_flight(&p->ev, false) > 0;
}
