/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_evict: the pager's write-backs in flight, sans-I/O (dimm_evict.h).
 */
#include <string.h>

#include "dimm_evict.h"

void dimm_evicts_init(struct dimm_evicts *t)
{
	for (unsigned i = 0; i < DIMM_N_EVICT; i++) {
		uint8_t *buf = t->slot[i].buf;

		memset(&t->slot[i], 0, sizeof(t->slot[i]));
		t->slot[i].buf = buf;
		t->slot[i].waiter = -1;
	}
	t->seq = 0;
}

int dimm_evict_free_slot(const struct dimm_evicts *t)
{
	for (unsigned i = 0; i < DIMM_N_EVICT; i++)
		if (!t->slot[i].used)
			return (int)i;
	return -1;
}

struct dimm_evict *dimm_evict_claim(struct dimm_evicts *t, unsigned i, struct dimm_policy *pol,
				    uint32_t pg, bool keep)
{
	struct dimm_evict *e = &t->slot[i];

	e->used = true;
	e->keep = keep;
	e->copied = false;
	e->seq = ++t->seq;
	e->page = pg;
	e->waiter = -1;
	e->retries = 0;
	e->quiet = false;
	pol->state[pg] = DIMM_PG_EVICTING;
	pol->pflags[pg] = 0;
	return e;
}

unsigned dimm_evict_in_flight(const struct dimm_evicts *t, bool keep_only)
{
	unsigned n = 0;

	for (unsigned i = 0; i < DIMM_N_EVICT; i++)
		n += t->slot[i].used && (t->slot[i].keep || !keep_only);
	return n;
}

struct dimm_evict *dimm_evict_cleaning(struct dimm_evicts *t, uint32_t pg)
{
	for (unsigned i = 0; i < DIMM_N_EVICT; i++)
		if (t->slot[i].used && t->slot[i].keep && t->slot[i].page == pg)
			return &t->slot[i];
	return NULL;
}

void dimm_evict_unwait(struct dimm_evicts *t, int waiter)
{
	for (unsigned i = 0; i < DIMM_N_EVICT; i++)
		if (t->slot[i].used && t->slot[i].waiter == waiter)
			t->slot[i].waiter = -1;
}

int dimm_evict_to_wait_for(const struct dimm_evicts *t, bool copy)
{
	bool slot_free = false;
	int oldest = -1; /* of the copied write-backs that nobody waits for */

	for (unsigned i = 0; i < DIMM_N_EVICT; i++) {
		const struct dimm_evict *e = &t->slot[i];

		if (!e->used) {
			slot_free = true;
			continue;
		}
		if (e->keep || e->waiter >= 0)
			continue;
		if (!e->copied)
			return (int)i;
		if (oldest < 0 || e->seq < t->slot[oldest].seq)
			oldest = (int)i;
	}
	return copy && !slot_free ? oldest : -1;
}

void dimm_evict_submitting(struct dimm_evicts *t, struct dimm_evict *const *es, unsigned n)
{
	uint8_t lead = (uint8_t)(es[0] - t->slot);

	for (unsigned k = 0; k < n; k++) {
		struct dimm_evict *e = es[k];

		e->status = 0;
		e->ht_err = 0;
		e->left = 2;
		e->lead = lead;
		e->flushing = true;
	}
}

void dimm_evict_write_unsent(struct dimm_evict *e, int err)
{
	e->left--;
	e->status = err;
}

void dimm_evict_flush_unsent(struct dimm_evict *const *es, unsigned n, int err)
{
	for (unsigned k = 0; k < n; k++) {
		es[k]->left--;
		es[k]->flushing = false;
		if (!es[k]->status)
			es[k]->status = err;
	}
}

bool dimm_evict_write_done(struct dimm_evict *e, int status, uint8_t ht_err)
{
	if (status && !e->status) {
		e->status = status;
		e->ht_err = ht_err;
	}
	return --e->left == 0;
}

unsigned dimm_evict_flush_done(struct dimm_evicts *t, unsigned lead, int status, uint8_t ht_err,
			       struct dimm_evict **done)
{
	unsigned n = 0;

	for (unsigned i = 0; i < DIMM_N_EVICT; i++) {
		struct dimm_evict *e = &t->slot[i];

		if (!e->used || !e->flushing || e->lead != lead)
			continue;
		e->flushing = false;
		if (dimm_evict_write_done(e, status, ht_err))
			done[n++] = e;
	}
	return n;
}

bool dimm_evict_retry(struct dimm_evict *e, bool reset, unsigned max, bool gone)
{
	if (!dimm_policy_may_retry(reset, e->retries, max, gone))
		return false;
	e->retries++;
	return true;
}

bool dimm_evict_quiet(struct dimm_evict *const *es, unsigned n, unsigned resumed)
{
	for (unsigned k = 0; k < n; k++)
		if (!es[k]->status && (!es[k]->quiet || es[k]->res0 != resumed))
			return false;
	return true;
}

void dimm_evict_over(struct dimm_evict *e)
{
	e->used = false;
}

enum dimm_evict_end dimm_evict_end(const struct dimm_evict *e, struct dimm_policy *pol, bool err,
				   bool may_drop, bool wp_async, bool scan_failed)
{
	uint32_t pg = e->page;
	bool ok = e->status == 0 && !err;

	if (e->copied) {
		/* dropped already: absent from now on, or, failed, its data
		 * back from the copy (the shell installs it: DIRTY then) */
		pol->state[pg] = DIMM_PG_ABSENT;
		return ok ? DIMM_EV_ABSENT : DIMM_EV_RESTORE;
	}
	if (!ok) {
		/* the data stays here */
		pol->state[pg] = DIMM_PG_DIRTY;
		return DIMM_EV_FAILED;
	}
	if (wp_async && (scan_failed || (pol->pflags[pg] & DIMM_PF_WRITTEN))) {
		pol->state[pg] = DIMM_PG_DIRTY;
		pol->ref[pg] = 1;
		return DIMM_EV_DIRTY;
	}
	if (e->keep) {
		/* a write from now on is seen, by a WP fault or the next scan */
		pol->state[pg] = DIMM_PG_CLEAN;
		pol->pflags[pg] = DIMM_PF_WASHED | DIMM_PF_SEEN;
		return DIMM_EV_WASHED;
	}
	if (!may_drop) {
		pol->state[pg] = DIMM_PG_CLEAN;
		return DIMM_EV_KEPT;
	}
	return DIMM_EV_DROP;
}

bool dimm_evict_room_for_waiter(const struct dimm_evict *e, struct dimm_policy *pol)
{
	/* a copied one's slot was free already: the fetch makes room again */
	if (e->copied || pol->state[e->page] != DIMM_PG_ABSENT)
		return false;
	pol->reserved++;
	return true;
}
