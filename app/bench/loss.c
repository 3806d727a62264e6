/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: goodput against loss for both retry modes. For
 * each mode and loss profile, a lossless reference run and then the run
 * with the profile, of 64-byte posted writes over net_ring (htoe-bridge,
 * [impair]); goodput is divided by the reference made just before it (on a
 * shared machine the load drifts over the sweep), retransmissions by the
 * frames the impairment dropped. JSON: fig.loss_sweep = { gbn: {...},
 * selective: {...} }, each with reference_mbps (the mean of its references)
 * and per profile { goodput_frac, mbps, reference_mbps, frames, dropped,
 * retransmits, resent_per_lost }. See docs/benchmarks.md.
 */
#include <math.h>
#include <stdio.h>

#include "bench/bench.h"

static const struct {
	const char *name, *impair;
} profiles[] = {
	{ "0.1%", "[impair]\nloss = 0.001\n" },
	{ "1%", "[impair]\nloss = 0.01\n" },
	{ "5%", "[impair]\nloss = 0.05\n" },
	{ "10%", "[impair]\nloss = 0.1\n" },
	{ "1% burst", "[impair]\nburst_loss = 0.00125\nburst_len = 8\n" },
	{ "burst 100us", "[impair]\nburst_loss = 0.001\nburst_us = 100\n" },
};

static double num_or_nan(json_t *o, const char *k)
{
	json_t *v = o ? json_object_get(o, k) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Selective retry's goodput under loss, as a fraction of its lossless run,
 * and what it resends per frame lost, in every row. */
void bench_loss_targets(json_t *sweep, bench_target_fn target, const char *why)
{
	static const struct {
		const char *row, *name;
		double goal;
	} goals[] = {
		{ "1%", "selective: goodput at 1% loss / lossless", 0.9 },
		{ "5%", "selective: goodput at 5% loss / lossless", 0.7 },
		{ "10%", "selective: goodput at 10% loss / lossless", 0.5 },
		{ "1% burst", "selective: goodput at 1% burst loss / lossless", 0.7 },
	};
	json_t *sel = json_object_get(sweep, "selective"), *row;
	const char *key;
	double worst = NAN;

	for (unsigned i = 0; i < sizeof(goals) / sizeof(goals[0]); i++)
		target(goals[i].name, num_or_nan(json_object_get(sel, goals[i].row),
		       "goodput_frac"), goals[i].goal, false, 100, "%", why);
	json_object_foreach(sel, key, row) {
		double v = num_or_nan(row, "resent_per_lost");

		if (json_is_object(row) && (isnan(worst) || v > worst))
			worst = v;
	}
	target("selective: resent per lost frame, worst row", worst, 1.5, true, 1, "", why);
}

void bench_loss_sweep(json_t *fig, bench_write_fn run)
{
	static const char *const modes[] = { "gbn", "selective" };
	json_t *sweep = json_object();

	printf("htoe-bench: goodput against loss, 64-byte posted writes, both retry modes\n");
	for (unsigned m = 0; m < 2; m++) {
		json_t *mj = json_object();
		struct bench_write ref, w;
		double ref_sum = 0;
		unsigned nref = 0;

		for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
			if (run(modes[m], NULL, &ref) != 0 || ref.mbps <= 0) {
				printf("  %-9s %-8s reference run failed\n", modes[m], profiles[i].name);
				continue;
			}
			ref_sum += ref.mbps;
			nref++;
			if (run(modes[m], profiles[i].impair, &w) != 0)
				continue;
			double frac = w.mbps / ref.mbps;
			double per = w.dropped > 0 ? w.retransmits / w.dropped : 0;

			printf("  %-9s %-8s %7.1f MB/s = %5.1f %% of lossless (%.1f MB/s), %.0f dropped, "
			       "%.2f resent per lost\n", modes[m], profiles[i].name, w.mbps,
			       100 * frac, ref.mbps, w.dropped, per);
			json_object_set_new(mj, profiles[i].name,
				json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "goodput_frac", frac,
					  "mbps", w.mbps, "reference_mbps", ref.mbps, "frames", w.frames,
					  "dropped", w.dropped, "retransmits", w.retransmits,
					  "resent_per_lost", per));
		}
		if (nref)
			json_object_set_new(mj, "reference_mbps", json_real(ref_sum / nref));
		json_object_set_new(sweep, modes[m], mj);
	}
	json_object_set_new(fig, "loss_sweep", sweep);
}
