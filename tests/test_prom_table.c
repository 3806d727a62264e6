/* SPDX-License-Identifier: BSD-3-Clause
 * The table writer of the Prometheus families (app/common/metrics_http.c,
 * htoe_prom_table): every column a family with its HELP and TYPE, one
 * sample per row in row order, nanoseconds as seconds, a labelled column
 * one sample per word, rows left out by `only`, telemetry-only columns
 * (no family) skipped; checked against the exact text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics_http.h"

struct snap {
	uint64_t frames;
	uint64_t rtt_ns;
	uint64_t by_vc[3];
	uint64_t hidden;
};

static const char *vc(unsigned k)
{
	static const char *const n[3] = { "P", "NP", "R" };

	return n[k];
}

static const struct htoe_prom_col cols[] = {
	{ "frames", "t_frames_total", "frames", offsetof(struct snap, frames), 0, 0, 0, 0, NULL,
	  NULL },
	{ "hidden", NULL, NULL, offsetof(struct snap, hidden), 0, 0, 0, 0, NULL, NULL },
	{ "rtt_ns", "t_rtt_seconds", "round trip", offsetof(struct snap, rtt_ns), 1, 1, 1, 0, NULL,
	  NULL },
	{ NULL, "t_packets_total", "by channel", offsetof(struct snap, by_vc), 0, 0, 0, 3, "vc",
	  vc },
};

static void test_table(void **state)
{
	struct snap s[2] = { { 7, 1500, { 1, 2, 3 }, 99 }, { 8, 0, { 4, 5, 6 }, 99 } };
	struct htoe_prom_row rows[2] = { { "node=\"1\"", &s[0], 1 }, { "node=\"2\"", &s[1], 0 } };
	struct htoe_prom p = { 0 };
	static const char want[] =
		"# HELP t_frames_total frames\n# TYPE t_frames_total counter\n"
		"t_frames_total{node=\"1\"} 7\nt_frames_total{node=\"2\"} 8\n"
		"# HELP t_rtt_seconds round trip\n# TYPE t_rtt_seconds gauge\n"
		"t_rtt_seconds{node=\"1\"} 1.5e-06\n"
		"# HELP t_packets_total by channel\n# TYPE t_packets_total counter\n"
		"t_packets_total{node=\"1\",vc=\"P\"} 1\nt_packets_total{node=\"1\",vc=\"NP\"} 2\n"
		"t_packets_total{node=\"1\",vc=\"R\"} 3\nt_packets_total{node=\"2\",vc=\"P\"} 4\n"
		"t_packets_total{node=\"2\",vc=\"NP\"} 5\nt_packets_total{node=\"2\",vc=\"R\"} 6\n";

	(void)state;
	htoe_prom_table(&p, cols, sizeof(cols) / sizeof(cols[0]), rows, 2);
	assert_false(p.oom);
	assert_non_null(p.buf);
	assert_string_equal(p.buf, want);
	free(p.buf);
}

/* A row without labels: a labelled column's samples carry only their own label. */
static void test_no_labels(void **state)
{
	struct snap s = { 0, 0, { 9, 0, 0 }, 0 };
	struct htoe_prom_row row = { "", &s, 0 };
	struct htoe_prom p = { 0 };

	(void)state;
	htoe_prom_table(&p, &cols[3], 1, &row, 1);
	assert_non_null(p.buf);
	assert_non_null(strstr(p.buf, "t_packets_total{vc=\"P\"} 9\n"));
	free(p.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_no_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
