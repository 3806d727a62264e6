/* SPDX-License-Identifier: BSD-3-Clause
 * impair: a seeded network impairment stage, sans-I/O. See impair.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impair.h"

#define IMPAIR_QUEUE_DEFAULT 4096u

void impair_cfg_default(struct impair_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->burst_len = 4;
	c->reorder_ns = 50000;
	c->queue = IMPAIR_QUEUE_DEFAULT;
}

bool impair_cfg_active(const struct impair_cfg *c)
{
	return c->loss > 0 || c->burst_loss > 0 || c->reorder > 0 || c->dup > 0 ||
	       c->corrupt > 0 || c->delay_ns || c->jitter_ns || c->outage_len_ns;
}

static bool prob_ok(double p)
{
	return p >= 0 && p <= 1; /* false for NaN too */
}

int impair_cfg_check(const struct impair_cfg *c, char *err, size_t errlen)
{
	static const char *names[] = { "loss", "burst_loss", "reorder", "dup", "corrupt" };
	const double p[] = { c->loss, c->burst_loss, c->reorder, c->dup, c->corrupt };

	for (unsigned i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (!prob_ok(p[i])) {
			snprintf(err, errlen, "%s %g is not a probability (0..1)", names[i], p[i]);
			return -EINVAL;
		}
	if (!(c->burst_len >= 1)) {
		snprintf(err, errlen, "burst_len %g must be >= 1", c->burst_len);
		return -EINVAL;
	}
	if (c->burst_us > 60000000) {
		snprintf(err, errlen, "burst_us %llu is longer than a minute",
			 (unsigned long long)c->burst_us);
		return -EINVAL;
	}
	if (c->queue > (1u << 24)) {
		snprintf(err, errlen, "queue %u is larger than %u", c->queue, 1u << 24);
		return -EINVAL;
	}
	return 0;
}

/* p in [0, 1] -> threshold on a uniform 64-bit draw (draw < thr). */
static uint64_t threshold(double p)
{
	if (p <= 0)
		return 0;
	if (p >= 1)
		return UINT64_MAX;
	return (uint64_t)(p * 18446744073709551616.0);
}

struct impair *impair_new(const struct impair_cfg *cfg)
{
	char err[128];
	struct impair *im;

	if (impair_cfg_check(cfg, err, sizeof(err)) != 0)
		return NULL;
	im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->cfg = *cfg;
	im->cap = cfg->queue ? cfg->queue : IMPAIR_QUEUE_DEFAULT;
	im->heap = calloc(im->cap, sizeof(*im->heap));
	if (!im->heap) {
		free(im);
		return NULL;
	}
	ht_rand_seed(&im->rng, cfg->seed);
	im->thr_loss = threshold(cfg->loss);
	im->thr_burst = threshold(cfg->burst_loss);
	im->thr_burst_end = threshold(1.0 / cfg->burst_len);
	im->thr_reorder = threshold(cfg->reorder);
	im->thr_dup = threshold(cfg->dup);
	im->thr_corrupt = threshold(cfg->corrupt);
	im->p_loss = cfg->loss > 0;
	im->p_burst = cfg->burst_loss > 0;
	im->p_reorder = cfg->reorder > 0;
	im->p_dup = cfg->dup > 0;
	im->p_corrupt = cfg->corrupt > 0;
	return im;
}

void impair_free(struct impair *im)
{
	if (!im)
		return;
	free(im->heap);
	free(im);
}

static bool draw(struct impair *im, uint64_t thr)
{
	uint64_t x = ht_rand_u64(&im->rng);

	return thr == UINT64_MAX || x < thr;
}

void impair_decide(struct impair *im, size_t len, uint64_t now, struct impair_verdict *v)
{
	const struct impair_cfg *c = &im->cfg;
	uint64_t t = now;

	memset(v, 0, sizeof(*v));
	im->st.frames++;
	if (!im->started) {
		im->started = true;
		im->t0 = now;
	}
	/* outage window: every frame dropped, no random draw consumed */
	if (c->outage_len_ns && now - im->t0 >= c->outage_start_ns &&
	    now - im->t0 - c->outage_start_ns < c->outage_len_ns) {
		im->st.outage_dropped++;
		im->st.dropped++;
		return;
	}
	/* loss: a burst in progress ends with probability 1/burst_len per
	 * frame (that frame passes), so a burst drops burst_len frames on
	 * average, the one that started it included; a burst in time drops
	 * every frame until burst_us after its start */
	if (im->in_burst) {
		if (c->burst_us ? now < im->burst_until : !draw(im, im->thr_burst_end)) {
			im->st.burst_dropped++;
			return;
		}
		im->in_burst = false;
	} else if (im->p_burst && draw(im, im->thr_burst)) {
		im->in_burst = true;
		im->burst_until = now + c->burst_us * 1000;
		im->st.bursts++;
		im->st.burst_dropped++;
		return;
	}
	if (im->p_loss && draw(im, im->thr_loss)) {
		im->st.dropped++;
		return;
	}
	if (im->p_corrupt && len && draw(im, im->thr_corrupt)) {
		v->corrupt = true;
		v->bit = ht_rand_below(&im->rng, (uint64_t)len * 8);
		im->st.corrupted++;
	}
	t += c->delay_ns;
	if (c->jitter_ns)
		t += ht_rand_below(&im->rng, c->jitter_ns + 1);
	if (im->p_reorder && draw(im, im->thr_reorder)) {
		/* held back long enough for the frames behind it to overtake */
		t += c->reorder_ns + ht_rand_below(&im->rng, c->reorder_ns + 1);
		im->st.reordered++;
	}
	if (t > now)
		im->st.delayed++;
	v->copies = 1;
	v->at[0] = t;
	if (im->p_dup && draw(im, im->thr_dup)) {
		v->copies = 2;
		v->at[1] = t;
		im->st.duplicated++;
	}
}

/* ------------------------------------------------------------ hold queue */

static bool before(const struct impair_item *a, const struct impair_item *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

int impair_hold(struct impair *im, void *item, uint64_t at)
{
	struct impair_item e = { .at = at, .seq = im->seq++, .item = item };
	unsigned i;

	if (im->n == im->cap) {
		im->st.overflow++;
		return -ENOSPC;
	}
	i = im->n++;
	while (i > 0) {
		unsigned p = (i - 1) / 2;

		if (!before(&e, &im->heap[p]))
			break;
		im->heap[i] = im->heap[p];
		i = p;
	}
	im->heap[i] = e;
	im->st.held++;
	return 0;
}

static void *pop(struct impair *im)
{
	struct impair_item top = im->heap[0], last = im->heap[--im->n];
	unsigned i = 0;

	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;
		const struct impair_item *mv = &last;

		if (l < im->n && before(&im->heap[l], mv)) {
			m = l;
			mv = &im->heap[l];
		}
		if (r < im->n && before(&im->heap[r], mv))
			m = r;
		if (m == i)
			break;
		im->heap[i] = im->heap[m];
		i = m;
	}
	if (im->n)
		im->heap[i] = last;
	im->st.released++;
	return top.item;
}

void *impair_release(struct impair *im, uint64_t now)
{
	if (!im->n || im->heap[0].at > now)
		return NULL;
	return pop(im);
}

void *impair_drain(struct impair *im)
{
	return im->n ? pop(im) : NULL;
}

uint64_t impair_next(const struct impair *im)
{
	return im->n ? im->heap[0].at : UINT64_MAX;
}
