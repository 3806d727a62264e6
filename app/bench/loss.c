/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: goodput against loss for both retry modes. For
 * each mode, a lossless reference run and one run per loss profile of
 * 64-byte posted writes over net_ring (htoe-bridge, [impair]); goodput is
 * divided by that mode's reference, retransmissions by the frames the
 * impairment dropped. JSON: fig.loss_sweep = { gbn: {...}, selective: {...} },
 * each profile { loss, goodput_frac, mbps, dropped, retransmits,
 * resent_per_lost }. See docs/benchmarks.md.
 */
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
};

void bench_loss_sweep(json_t *fig, bench_write_fn run)
{
	static const char *const modes[] = { "gbn", "selective" };
	json_t *sweep = json_object();

	printf("htoe-bench: goodput against loss, 64-byte posted writes, both retry modes\n");
	for (unsigned m = 0; m < 2; m++) {
		json_t *mj = json_object();
		struct bench_write ref, w;

		if (run(modes[m], NULL, &ref) != 0 || ref.mbps <= 0) {
			printf("  %-9s reference run failed\n", modes[m]);
			json_object_set_new(sweep, modes[m], mj);
			continue;
		}
		json_object_set_new(mj, "reference_mbps", json_real(ref.mbps));
		for (unsigned i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
			if (run(modes[m], profiles[i].impair, &w) != 0)
				continue;
			double frac = w.mbps / ref.mbps;
			double per = w.dropped > 0 ? w.retransmits / w.dropped : 0;

			printf("  %-9s %-8s %7.1f MB/s = %5.1f %% of lossless, %.0f dropped, "
			       "%.2f resent per lost\n", modes[m], profiles[i].name, w.mbps,
			       100 * frac, w.dropped, per);
			json_object_set_new(mj, profiles[i].name,
				json_pack("{s:f, s:f, s:f, s:f, s:f}", "goodput_frac", frac,
					  "mbps", w.mbps, "dropped", w.dropped, "retransmits",
					  w.retransmits, "resent_per_lost", per));
		}
		json_object_set_new(sweep, modes[m], mj);
	}
	json_object_set_new(fig, "loss_sweep", sweep);
}
