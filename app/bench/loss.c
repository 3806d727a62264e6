/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: goodput against loss for both retry modes. For each mode and
 * loss profile, `slices` lossless reference runs and as many runs with the
 * profile, taking turns (reference, lossy, reference, lossy, ...), of
 * 64-byte posted writes over net_ring (htoe-bridge, [impair]), each of
 * secs / slices; goodput is the median of the lossy runs divided by the
 * median of their references (a burst of other load on a shared machine
 * hits one slice of one side, and the drift of the load over the sweep
 * cancels), retransmissions are divided by the frames the impairment
 * dropped over all lossy slices. Both sides count goodput alike: posted
 * writes node 2 applied (in order) per second of node 1's workload. JSON:
 * fig.loss_sweep = { gbn: {...}, selective: {...} }, each with
 * reference_mbps (the median of all its references) and per profile {
 * goodput_frac, mbps, reference_mbps, mbps_slices, reference_slices,
 * frames, dropped, retransmits, timeouts, resent_per_lost }. See
 * docs/benchmarks.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (n > 0; v is sorted). */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static json_t *array_of(const double *v, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

#define SLICES_MAX 9

void bench_loss_sweep(json_t *fig, double secs, unsigned slices, bench_write_fn run)
{
	static const char *const modes[] = { "gbn", "selective" };
	json_t *sweep = json_object();
	double slice;

	if (slices > SLICES_MAX)
		slices = SLICES_MAX;
	slice = secs / slices;
	printf("htoe-bench: goodput against loss, 64-byte posted writes, both retry modes "
	       "(per row, lossless and lossy runs of %.2f s taking turns, %u of each; medians)\n",
	       slice, slices);
	for (unsigned m = 0; m < 2; m++) {
		json_t *mj = json_object();
		double all_ref[SLICES_MAX * sizeof(profiles) / sizeof(profiles[0])];
		unsigned nall = 0;

		for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
			double ref[SLICES_MAX], got[SLICES_MAX], dropped = 0, rtx = 0, frames = 0,
			       tos = 0;
			unsigned nr = 0, ng = 0;

			for (unsigned k = 0; k < slices; k++) {
				struct bench_write w = { 0 };

				if (run(modes[m], NULL, slice, &w) == 0 && w.mbps > 0)
					ref[nr++] = w.mbps;
				if (run(modes[m], profiles[i].impair, slice, &w) != 0)
					continue;
				got[ng++] = w.mbps;
				dropped += w.dropped;
				rtx += w.retransmits;
				frames += w.frames;
				tos += w.timeouts;
			}
			if (!nr || !ng) {
				printf("  %-9s %-8s %s runs failed\n", modes[m], profiles[i].name,
				       nr ? "lossy" : "reference");
				continue;
			}
			json_t *rs = array_of(ref, nr), *gs = array_of(got, ng);

			for (unsigned k = 0; k < nr; k++)
				all_ref[nall++] = ref[k];
			double rmed = median(ref, nr), gmed = median(got, ng);
			double frac = gmed / rmed, per = dropped > 0 ? rtx / dropped : 0;

			printf("  %-9s %-8s %7.1f MB/s = %5.1f %% of lossless (%.1f MB/s), %.0f dropped, "
			       "%.2f resent per lost, %.0f timeouts\n", modes[m], profiles[i].name,
			       gmed, 100 * frac, rmed, dropped, per, tos);
			json_object_set_new(mj, profiles[i].name,
				json_pack("{s:f, s:f, s:f, s:o, s:o, s:f, s:f, s:f, s:f, s:f}",
					  "goodput_frac", frac, "mbps", gmed, "reference_mbps", rmed,
					  "mbps_slices", gs, "reference_slices", rs, "frames", frames,
					  "dropped", dropped, "retransmits", rtx, "timeouts", tos,
					  "resent_per_lost", per));
		}
		if (nall)
			json_object_set_new(mj, "reference_mbps", json_real(median(all_ref, nall)));
		json_object_set_new(sweep, modes[m], mj);
	}
	json_object_set_new(fig, "loss_sweep", sweep);
}
