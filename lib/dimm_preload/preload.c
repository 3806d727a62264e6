/* SPDX-License-Identifier: BSD-3-Clause
 * libhtoe-dimm-preload.so: the part of htoe-dimm --run that lives inside
 * the program (LD_PRELOAD). It puts the program's large allocations
 * (malloc and friends of at least the threshold, anonymous private mmaps
 * of at least the threshold) into one region: a MAP_SHARED mapping of a
 * memfd that htoe-dimm maps too, registered with a userfaultfd made here
 * and handed to htoe-dimm (dimm_preload.h). htoe-dimm's pager serves the
 * region's faults from remote memory and evicts by punching holes in the
 * memfd. What is given back (free, munmap, madvise DONTNEED) is punched
 * here with MADV_REMOVE, which the pager sees (UFFD_EVENT_REMOVE): those
 * pages read as zeros again, as fresh anonymous memory does.
 *
 * glibc's malloc calls its own internal mmap, which an interposed mmap does
 * not see, so the allocation functions themselves are interposed; small
 * requests go to glibc's (__libc_malloc etc.). The region is not inherited
 * by a forked child (MADV_DONTFORK): fork() gives the child a local copy
 * of the blocks in use instead, and the child's own allocations are local
 * (a child made otherwise, e.g. by clone, has no large blocks; exec is
 * fine).
 * When htoe-dimm is gone (the parent-death signal) the program ends at
 * once with a message and DIMM_PRELOAD_LOST_STATUS: its memory is gone.
 * No DPDK here; nothing allocates through malloc.
 */
/* mmap and mmap64 are both defined below, under their own names */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dimm_preload.h"

#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
#endif

#define PG 4096u
#define HDR_MAGIC 0x64696d6du /* "dimm" */
#define MAX_FREE 65536u       /* free extents of the region */

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* the header in front of a large malloc block (16 bytes, the block's
 * alignment is 16 or more) */
struct hdr {
	uint32_t magic;
	uint32_t start;  /* first page of the extent */
	uint32_t npages;
	uint32_t pad;
};

struct ext {
	uint32_t start, n;
};

static bool active;              /* the region serves allocations */
static uint8_t *rbase;
static size_t rsize, threshold = 128 * 1024;
static int sock = -1, uffd = -1, memfd = -1;
static pid_t main_pid;           /* the process htoe-dimm serves (exec keeps it) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ext freel[MAX_FREE]; /* sorted by start, coalesced */
static unsigned nfree;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char b[400];
	va_list ap;
	int n = snprintf(b, sizeof(b), "htoe-dimm preload (pid %d): ", (int)getpid());

	va_start(ap, fmt);
	n += vsnprintf(b + n, sizeof(b) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(b) - 2)
		n = (int)sizeof(b) - 2;
	b[n++] = '\n';
	if (write(2, b, (size_t)n) < 0)
		return;
}

static bool in_region(const void *p)
{
	return rbase && (const uint8_t *)p >= rbase && (const uint8_t *)p < rbase + rsize;
}

/* ------------------------------------------------------------ the region */

static long region_alloc(uint32_t n)
{
	long got = -1;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nfree; i++)
		if (freel[i].n >= n) {
			got = freel[i].start;
			freel[i].start += n;
			freel[i].n -= n;
			if (!freel[i].n) {
				memmove(&freel[i], &freel[i + 1], (nfree - i - 1) * sizeof(freel[0]));
				nfree--;
			}
			break;
		}
	pthread_mutex_unlock(&lock);
	return got;
}

/* Pages [start, start + n) back to the free list, punched first (the pager
 * forgets them; they read as zeros when used again). */
static void region_free(uint32_t start, uint32_t n)
{
	unsigned lo = 0, hi;

	if (!n)
		return;
	madvise(rbase + (size_t)start * PG, (size_t)n * PG, MADV_REMOVE);
	pthread_mutex_lock(&lock);
	hi = nfree;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (freel[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo: the first extent after it */
	bool prev = lo > 0 && freel[lo - 1].start + freel[lo - 1].n == start;
	bool next = lo < nfree && start + n == freel[lo].start;

	if (prev && next) {
		freel[lo - 1].n += n + freel[lo].n;
		memmove(&freel[lo], &freel[lo + 1], (nfree - lo - 1) * sizeof(freel[0]));
		nfree--;
	} else if (prev) {
		freel[lo - 1].n += n;
	} else if (next) {
		freel[lo].start = start;
		freel[lo].n += n;
	} else if (nfree < MAX_FREE) {
		memmove(&freel[lo + 1], &freel[lo], (nfree - lo) * sizeof(freel[0]));
		freel[lo].start = start;
		freel[lo].n = n;
		nfree++;
	} /* else: too fragmented, the pages stay unused */
	pthread_mutex_unlock(&lock);
}

static bool big(size_t n)
{
	return active && n >= threshold && n < rsize;
}

/* A large block aligned to `align` (16 or more, a power of two), or NULL
 * (the region is full: the caller falls back to glibc). */
static void *big_alloc(size_t size, size_t align)
{
	size_t need = size + sizeof(struct hdr) + (align > 16 ? align : 0);
	uint32_t n = (uint32_t)((need + PG - 1) / PG);
	long start = region_alloc(n);
	uintptr_t a, u;
	struct hdr *h;

	if (start < 0)
		return NULL;
	a = (uintptr_t)rbase + (uintptr_t)start * PG;
	u = (a + sizeof(struct hdr) + align - 1) & ~(uintptr_t)(align - 1);
	h = (struct hdr *)u - 1;
	h->magic = HDR_MAGIC;
	h->start = (uint32_t)start;
	h->npages = n;
	return (void *)u;
}

static const struct hdr *hdr_of(const void *p)
{
	const struct hdr *h = (const struct hdr *)p - 1;

	return h->magic == HDR_MAGIC ? h : NULL;
}

static size_t big_usable(const void *p)
{
	const struct hdr *h = hdr_of(p);

	return h ? (size_t)h->start * PG + (size_t)h->npages * PG - (size_t)((const uint8_t *)p - rbase)
		 : 0;
}

static void big_free(void *p)
{
	const struct hdr *h = hdr_of(p);

	if (!active)
		return; /* a forked child: the parent's block is not here */
	if (!h) {
		say("free(%p): not a block of the region; ignored", p);
		return;
	}
	region_free(h->start, h->npages);
}

/* ------------------------------------------------------------ malloc */

void *malloc(size_t n)
{
	void *p;

	if (big(n) && (p = big_alloc(n, 16)))
		return p;
	return __libc_malloc(n);
}

void free(void *p)
{
	if (in_region(p))
		big_free(p);
	else
		__libc_free(p);
}

void *calloc(size_t a, size_t b)
{
	size_t n;
	void *p;

	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	/* region pages not in use are holes: they read as zeros */
	if (big(n) && (p = big_alloc(n, 16)))
		return p;
	return __libc_calloc(a, b);
}

static size_t libc_usable(void *p)
{
	static size_t (*real)(void *);

	if (!real)
		real = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	return real ? real(p) : 0;
}

void *realloc(void *p, size_t n)
{
	void *q;
	size_t have;

	if (!p)
		return malloc(n);
	if (in_region(p)) {
		/* (a forked child: its copy of the block moves to its own heap) */
		have = big_usable(p);
		if (active && n <= have && n >= have / 2)
			return p;
		if (!n) {
			free(p);
			return NULL;
		}
	} else {
		if (!big(n))
			return __libc_realloc(p, n);
		have = libc_usable(p);
	}
	q = malloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, have < n ? have : n);
	free(p);
	return q;
}

void *reallocarray(void *p, size_t a, size_t b)
{
	size_t n;

	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
	void *p;

	if (big(n) && align <= PG && !(align & (align - 1)) && (p = big_alloc(n, align < 16 ? 16 : align)))
		return p;
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return memalign(PG, n);
}

void *pvalloc(size_t n)
{
	return memalign(PG, (n + PG - 1) / PG * PG);
}

size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (in_region(p))
		return big_usable(p);
	return libc_usable(p);
}

/* ------------------------------------------------------------ mmap */

static void *sys_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off);
}

/* An anonymous private read-write mapping anywhere: from the region. */
static bool mmap_ours(void *a, size_t len, int prot, int flags, int fd)
{
	return !a && fd == -1 && big(len) && prot == (PROT_READ | PROT_WRITE) &&
	       (flags & (MAP_PRIVATE | MAP_ANONYMOUS)) == (MAP_PRIVATE | MAP_ANONYMOUS) &&
	       !(flags & (MAP_SHARED | MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_GROWSDOWN |
			  MAP_STACK | MAP_HUGETLB));
}

static void *do_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	if (mmap_ours(a, len, prot, flags, fd)) {
		long s = region_alloc((uint32_t)((len + PG - 1) / PG));

		if (s >= 0)
			return rbase + (size_t)s * PG;
	}
	return sys_mmap(a, len, prot, flags, fd, off);
}

void *mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(a, len, prot, flags, fd, off);
}

void *mmap64(void *a, size_t len, int prot, int flags, int fd, off64_t off)
{
	return do_mmap(a, len, prot, flags, fd, (off_t)off);
}

int munmap(void *a, size_t len)
{
	if (in_region(a)) {
		if ((uintptr_t)a % PG || (uint8_t *)a + len > rbase + rsize) {
			errno = EINVAL;
			return -1;
		}
		if (active)
			region_free((uint32_t)(((uint8_t *)a - rbase) / PG),
				    (uint32_t)((len + PG - 1) / PG));
		return 0;
	}
	return (int)syscall(SYS_munmap, a, len);
}

void *mremap(void *old, size_t oldlen, size_t len, int flags, ...)
{
	void *want = NULL;
	va_list ap;

	va_start(ap, flags);
	if (flags & MREMAP_FIXED)
		want = va_arg(ap, void *);
	va_end(ap);
	if (in_region(old) && active) {
		uint32_t o = (uint32_t)((oldlen + PG - 1) / PG), n = (uint32_t)((len + PG - 1) / PG);
		uint32_t s = (uint32_t)(((uint8_t *)old - rbase) / PG);
		void *q;

		if ((uintptr_t)old % PG || (flags & MREMAP_FIXED) || !len) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (n <= o) {
			region_free(s + n, o - n);
			return old;
		}
		if (!(flags & MREMAP_MAYMOVE)) {
			errno = ENOMEM;
			return MAP_FAILED;
		}
		q = do_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED)
			return q;
		memcpy(q, old, oldlen);
		region_free(s, o);
		return q;
	}
	return (void *)syscall(SYS_mremap, old, oldlen, len, flags, want);
}

/* Giving memory back: in the region the pages must become holes (a
 * DONTNEED of a shared mapping keeps the data). */
int madvise(void *a, size_t len, int advice)
{
	if (in_region(a) && active && (advice == MADV_DONTNEED || advice == MADV_FREE)) {
		uintptr_t lo = ((uintptr_t)a + PG - 1) / PG * PG, hi = ((uintptr_t)a + len) / PG * PG;

		return hi > lo ? (int)syscall(SYS_madvise, lo, hi - lo, MADV_REMOVE) : 0;
	}
	return (int)syscall(SYS_madvise, a, len, advice);
}

/* ------------------------------------------------------------ exec */

/* An exec of the process htoe-dimm serves: the new image speaks to
 * htoe-dimm again (its constructor), so the socket and the memfd stay open
 * across it (only then: a child's exec must not take them). */
static void exec_fds(bool keep)
{
	if (!active || getpid() != main_pid)
		return;
	fcntl(sock, F_SETFD, keep ? 0 : FD_CLOEXEC);
	fcntl(memfd, F_SETFD, keep ? 0 : FD_CLOEXEC);
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

int execve(const char *path, char *const argv[], char *const envp[])
{
	static execve_fn real;
	int r;

	if (!real)
		real = (execve_fn)dlsym(RTLD_NEXT, "execve");
	exec_fds(true);
	r = real(path, argv, envp);
	exec_fds(false);
	return r;
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static execve_fn real;
	int r;

	if (!real)
		real = (execve_fn)dlsym(RTLD_NEXT, "execvpe");
	exec_fds(true);
	r = real(file, argv, envp);
	exec_fds(false);
	return r;
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* ------------------------------------------------------------ fork */

typedef pid_t (*fork_fn)(void);

/* Copy the blocks in use of the region into the child, which has mapped
 * private memory in its place: the parent reads its own region (its
 * faults served as always), process_vm_writev writes the child's. */
static int copy_to_child(pid_t pid)
{
	uint32_t at = 0, npages = (uint32_t)(rsize / PG);

	for (unsigned i = 0; i <= nfree; i++) {
		uint32_t end = i < nfree ? freel[i].start : npages;

		for (uint32_t pg = at; pg < end;) {
			uint32_t n = end - pg < 256 ? end - pg : 256;
			struct iovec v = { .iov_base = rbase + (size_t)pg * PG, .iov_len = (size_t)n * PG };

			if (process_vm_writev(pid, &v, 1, &v, 1, 0) != (ssize_t)v.iov_len)
				return -1;
			pg += n;
		}
		if (i < nfree)
			at = freel[i].start + freel[i].n;
	}
	return 0;
}

/*
 * fork(): the child gets a private, local copy of the region (its large
 * blocks are where they were, in memory of its own; fork semantics), made
 * before fork returns in either process. Threads of the parent that write
 * large blocks meanwhile may be seen by the child's copy.
 */
pid_t fork(void)
{
	static fork_fn real;
	int c2p[2], p2c[2];
	bool was = active;
	char b = 0;
	pid_t pid;

	if (!real)
		real = (fork_fn)dlsym(RTLD_NEXT, "fork");
	if (!was || pipe2(c2p, O_CLOEXEC))
		return real();
	if (pipe2(p2c, O_CLOEXEC)) {
		close(c2p[0]);
		close(c2p[1]);
		return real();
	}
	pthread_mutex_lock(&lock); /* the free list stays as it is during the copy */
	pid = real();
	if (pid == 0) {
		/* (at_fork_child has run: not active, no socket) */
		void *m = sys_mmap(rbase, rsize, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);

		b = m == MAP_FAILED ? 1 : 0;
		if (write(c2p[1], &b, 1) != 1 || read(p2c[0], &b, 1) != 1 || b) {
			say("fork: no copy of the large memory for the child: it ends");
			_exit(DIMM_PRELOAD_LOST_STATUS);
		}
		pthread_mutex_init(&lock, NULL);
	} else if (pid > 0) {
		if (read(c2p[0], &b, 1) != 1 || b || copy_to_child(pid))
			b = 1;
		if (b)
			say("fork: the child (pid %d) cannot have a copy of the large memory: %s", (int)pid,
			    strerror(errno));
		if (write(p2c[1], &b, 1) != 1)
			b = 1;
		pthread_mutex_unlock(&lock);
	} else {
		pthread_mutex_unlock(&lock);
	}
	close(c2p[0]);
	close(c2p[1]);
	close(p2c[0]);
	close(p2c[1]);
	return pid;
}

/* ------------------------------------------------------------ set-up */

/* htoe-dimm (the thread that started this process) is gone: the kernel
 * sends DEATH_SIG (PR_SET_PDEATHSIG). No thread of our own: a process with
 * an extra thread cannot change its user ids (glibc's setxid). */
#define DEATH_SIG (SIGRTMAX - 1)

static void on_death(int sig)
{
	(void)sig;
	say("htoe-dimm, which holds this program's memory, is gone: the program ends (status %d)",
	    DIMM_PRELOAD_LOST_STATUS);
	_exit(DIMM_PRELOAD_LOST_STATUS);
}

static void watch_htoe_dimm(void)
{
	struct sigaction sa;
	char b;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_death;
	sigaction(DEATH_SIG, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, DEATH_SIG);
	/* gone already? (before the prctl) */
	if (recv(sock, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		on_death(DEATH_SIG);
}

/* A forked child: the region is not inherited (MADV_DONTFORK; fork()
 * above puts a local copy in its place); its own allocations are local, and
 * it does not talk to htoe-dimm. */
static void at_fork_child(void)
{
	active = false;
	if (sock >= 0)
		close(sock);
	if (uffd >= 0)
		close(uffd);
	if (memfd >= 0)
		close(memfd);
	sock = uffd = memfd = -1;
}

static void hello_fail(struct dimm_preload_hello *h, int e, const char *what)
{
	h->error = e;
	snprintf(h->msg, sizeof(h->msg), "%s: %s%s", what, strerror(e),
		 e == EPERM ? " (userfaultfd needs root or CAP_SYS_PTRACE, or "
			      "vm.unprivileged_userfaultfd=1)"
			    : "");
}

static int setup(struct dimm_preload_hello *h)
{
	struct uffdio_api api;
	struct uffdio_register reg;

	rbase = sys_mmap(NULL, rsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd, 0);
	if (rbase == MAP_FAILED) {
		rbase = NULL;
		hello_fail(h, errno, "mmap of the region");
		return -1;
	}
	syscall(SYS_madvise, rbase, rsize, MADV_DONTFORK);
	syscall(SYS_madvise, rbase, rsize, MADV_NOHUGEPAGE);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		hello_fail(h, errno, "userfaultfd");
		return -1;
	}
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	api.features = UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_POISON |
		       UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	if (ioctl(uffd, UFFDIO_API, &api) != 0) {
		hello_fail(h, errno, "UFFDIO_API (write-protect of shared memory, poison and remove "
				     "events: Linux 6.6 or later)");
		return -1;
	}
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)rbase;
	reg.range.len = rsize;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
		hello_fail(h, errno, "UFFDIO_REGISTER of the region");
		return -1;
	}
	h->base = (uintptr_t)rbase;
	h->features = api.features;
	return 0;
}

__attribute__((constructor)) static void preload_init(void)
{
	const char *env = getenv(HTOE_DIMM_PRELOAD_ENV);
	struct dimm_preload_hello h;
	struct dimm_preload_ack ack;
	unsigned long long size = 0, thr = 0;
	int pid = 0, nf;
	char mine[160];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (!env)
		return; /* not started by htoe-dimm */
	nf = sscanf(env, "%d,%d,%llu,%llu,%d", &sock, &memfd, &size, &thr, &pid);
	if (nf < 4 || sock < 0 || memfd < 0 || !size || size % PG) {
		say("%s='%s': not SOCK,MEMFD,SIZE,THRESHOLD; running without remote memory",
		    HTOE_DIMM_PRELOAD_ENV, env);
		sock = memfd = -1;
		return;
	}
	if (nf == 5 && pid != (int)getpid()) {
		/* a program the program started (it inherited the environment):
		 * its memory is local */
		sock = memfd = -1;
		return;
	}
	/* the first image: the pid, so that an exec of this process finds its
	 * way back and its children do not */
	main_pid = getpid();
	snprintf(mine, sizeof(mine), "%d,%d,%llu,%llu,%d", sock, memfd, size, thr, (int)main_pid);
	setenv(HTOE_DIMM_PRELOAD_ENV, mine, 1);
	fcntl(sock, F_SETFD, FD_CLOEXEC);
	fcntl(memfd, F_SETFD, FD_CLOEXEC);
	rsize = (size_t)size;
	if (thr)
		threshold = (size_t)thr;
	memset(&h, 0, sizeof(h));
	h.magic = DIMM_PRELOAD_MAGIC;
	h.size = rsize;
	h.pid = (int32_t)getpid();
	if (setup(&h) == 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &uffd, sizeof(int));
	}
	if (sendmsg(sock, &mh, 0) != (ssize_t)sizeof(h) ||
	    recv(sock, &ack, sizeof(ack), 0) != (ssize_t)sizeof(ack) ||
	    ack.magic != DIMM_PRELOAD_MAGIC) {
		say("no answer from htoe-dimm on fd %d: the program does not run", sock);
		_exit(DIMM_PRELOAD_LOST_STATUS);
	}
	if (h.error || ack.error)
		_exit(DIMM_PRELOAD_LOST_STATUS); /* htoe-dimm said why */
	freel[0].start = 0;
	freel[0].n = (uint32_t)(rsize / PG);
	nfree = 1;
	pthread_atfork(NULL, NULL, at_fork_child);
	watch_htoe_dimm();
	active = true;
}
