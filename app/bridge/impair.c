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

static void params_of(const struct impair_cfg *c, struct impair_params *p)
{
	*p = (struct impair_params){
		.loss = c->loss, .burst_loss = c->burst_loss, .burst_len = c->burst_len,
		.burst_ns = c->burst_us * 1000, .reorder = c->reorder,
		.reorder_ns = c->reorder_ns, .dup = c->dup, .corrupt = c->corrupt,
		.delay_ns = c->delay_ns, .jitter_ns = c->jitter_ns,
	};
}

int impair_cfg_check(const struct impair_cfg *c, char *err, size_t errlen)
{
	struct impair_params p;
	struct impair_model m;
	int rc;

	params_of(c, &p);
	rc = impair_model_init(&m, &p, err, errlen);
	if (rc)
		return rc;
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

struct impair *impair_new(const struct impair_cfg *cfg)
{
	char err[128];
	struct impair_params p;
	struct impair *im;

	if (impair_cfg_check(cfg, err, sizeof(err)) != 0)
		return NULL;
	im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->cfg = *cfg;
	if (time_heap_init(&im->hold, cfg->queue ? cfg->queue : IMPAIR_QUEUE_DEFAULT, false)) {
		free(im);
		return NULL;
	}
	ht_rand_seed(&im->rng, cfg->seed);
	params_of(cfg, &p);
	impair_model_init(&im->model, &p, err, sizeof(err)); /* checked above */
	return im;
}

void impair_free(struct impair *im)
{
	if (!im)
		return;
	time_heap_fini(&im->hold);
	free(im);
}

void impair_decide(struct impair *im, size_t len, uint64_t now, struct impair_verdict *v)
{
	const struct impair_cfg *c = &im->cfg;

	im->st.frames++;
	if (!im->started) {
		im->started = true;
		im->t0 = now;
	}
	/* outage window: every frame dropped, no random draw consumed */
	if (c->outage_len_ns && now - im->t0 >= c->outage_start_ns &&
	    now - im->t0 - c->outage_start_ns < c->outage_len_ns) {
		memset(v, 0, sizeof(*v));
		im->st.outage_dropped++;
		im->st.dropped++;
		return;
	}
	impair_model_decide(&im->model, &im->link, &im->rng, len, now, v);
	switch (v->fate) {
	case IMPAIR_BURST_START:
		im->st.bursts++;
		/* fall through */
	case IMPAIR_BURST:
		im->st.burst_dropped++;
		return;
	case IMPAIR_LOSS:
		im->st.dropped++;
		return;
	case IMPAIR_PASS:
		break;
	}
	im->st.corrupted += v->corrupt;
	im->st.reordered += v->reordered;
	im->st.delayed += v->at[0] > now;
	im->st.duplicated += v->copies == 2;
}

/* ------------------------------------------------------------ hold queue */

int impair_hold(struct impair *im, void *item, uint64_t at)
{
	if (time_heap_push(&im->hold, item, at) != 0) {
		im->st.overflow++;
		return -ENOSPC;
	}
	im->st.held++;
	return 0;
}

void *impair_release(struct impair *im, uint64_t now)
{
	void *item = time_heap_pop_due(&im->hold, now);

	im->st.released += item != NULL;
	return item;
}

void *impair_drain(struct impair *im)
{
	void *item = time_heap_pop(&im->hold);

	im->st.released += item != NULL;
	return item;
}

uint64_t impair_next(const struct impair *im)
{
	return time_heap_next(&im->hold);
}
