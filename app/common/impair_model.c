/* SPDX-License-Identifier: BSD-3-Clause
 * impair_model: the one network impairment model. See impair_model.h.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impair_model.h"

static bool prob_ok(double p)
{
	return p >= 0 && p <= 1; /* false for NaN too */
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

int impair_model_init(struct impair_model *m, const struct impair_params *p,
		      char *err, size_t errlen)
{
	static const char *names[] = { "loss", "burst_loss", "reorder", "dup", "corrupt" };
	const double pr[] = { p->loss, p->burst_loss, p->reorder, p->dup, p->corrupt };

	for (unsigned i = 0; i < sizeof(pr) / sizeof(pr[0]); i++)
		if (!prob_ok(pr[i])) {
			snprintf(err, errlen, "%s %g is not a probability (0..1)", names[i], pr[i]);
			return -EINVAL;
		}
	if (!(p->burst_len >= 1)) {
		snprintf(err, errlen, "burst_len %g must be >= 1", p->burst_len);
		return -EINVAL;
	}
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->thr_loss = threshold(p->loss);
	m->thr_burst = threshold(p->burst_loss);
	m->thr_burst_end = threshold(1.0 / p->burst_len);
	m->thr_reorder = threshold(p->reorder);
	m->thr_dup = threshold(p->dup);
	m->thr_corrupt = threshold(p->corrupt);
	return 0;
}

/* true with the probability thr stands for; a zero threshold draws nothing,
 * so an unused impairment does not move the RNG */
static bool draw(struct ht_rand *rng, uint64_t thr)
{
	uint64_t x;

	if (!thr)
		return false;
	x = ht_rand_u64(rng);
	return thr == UINT64_MAX || x < thr;
}

void impair_model_decide(const struct impair_model *m, struct impair_link *l,
			 struct ht_rand *rng, size_t len, uint64_t now,
			 struct impair_verdict *v)
{
	const struct impair_params *p = &m->p;
	uint64_t t = now;

	memset(v, 0, sizeof(*v));
	if (l->in_burst) {
		if (p->burst_ns ? now < l->burst_until : !draw(rng, m->thr_burst_end)) {
			v->fate = IMPAIR_BURST;
			return;
		}
		l->in_burst = false;
	} else if (draw(rng, m->thr_burst)) {
		l->in_burst = true;
		l->burst_until = now + p->burst_ns;
		v->fate = IMPAIR_BURST_START;
		return;
	}
	if (draw(rng, m->thr_loss)) {
		v->fate = IMPAIR_LOSS;
		return;
	}
	if (len && draw(rng, m->thr_corrupt)) {
		v->corrupt = true;
		v->bit = ht_rand_below(rng, (uint64_t)len * 8);
	}
	t += p->delay_ns;
	if (p->jitter_ns)
		t += ht_rand_below(rng, p->jitter_ns + 1);
	if (draw(rng, m->thr_reorder)) {
		t += p->reorder_ns + ht_rand_below(rng, p->reorder_ns + 1);
		v->reordered = true;
	}
	v->copies = 1;
	v->at[0] = t;
	if (draw(rng, m->thr_dup)) {
		v->copies = 2;
		v->at[1] = t;
	}
}

int htoe_parse_prob(const char *s, double *out, char *why, size_t whylen)
{
	char *end;
	double x;

	/* decimal only: strtod would also take hex floats ("0x1p-3") */
	if (!s || !(isdigit((unsigned char)*s) || *s == '.') || strpbrk(s, "xX"))
		goto bad;
	errno = 0;
	x = strtod(s, &end);
	if (end == s || !isfinite(x) || errno == ERANGE)
		goto bad;
	if (*end == '%' && !end[1]) {
		x /= 100;
	} else if (*end) {
		goto bad;
	} else if (x == 1) {
		snprintf(why, whylen, "a bare 1 would mean 100%% (every frame): write 100%% "
			 "if you mean it, or 1%% for one in a hundred");
		return -1;
	}
	if (x < 0 || x > 1)
		goto bad;
	*out = x;
	return 0;
bad:
	snprintf(why, whylen, "not a probability (0..1, or a percentage like 1%%)");
	return -1;
}
