// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the HTML page (output/html/): the escaping of what traced processes wrote
 * (markup, quotes, control bytes, invalid UTF-8, bidirectional controls), a poison-fork job's
 * page (the verdict and fix as the analysis words them, the incident's processes highlighted,
 * fork without exec marked, the timeline's marks, a policy naming the page's own style by its
 * hash and allowing no script), a hostile trace's page (no markup of the process's survives),
 * and a 10,000-process trace folded to a bounded page.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/sha256.h"
#include "model/analysis.h"
#include "output/html/html.h"
#include "output/html/html_esc.h"

#include "builders.h"
#include "output_helpers.h"

static char *esc(const char *s, size_t n)
{
	struct capture c;

	capture_begin(&c);
	gctx_html_esc(c.f, s, n);
	return capture_end(&c);
}

static void test_escape(void **state)
{
	static const char in[] = "<script>alert('x')</script> \"a\" & b\x1b[31m\x7f"
				 "\xe2\x80\xae"	     /* U+202E RIGHT-TO-LEFT OVERRIDE */
				 "\xe2\x81\xa6"	     /* U+2066 LEFT-TO-RIGHT ISOLATE */
				 "\xef\xbb\xbf"	     /* U+FEFF */
				 "\xc3\xa9"	     /* e acute: kept */
				 "\xff\xc3"	     /* invalid */
				 "\xf0\x9f\x98\x80"; /* an emoji: kept */
	char *out = esc(in, sizeof(in));

	assert_string_equal(out, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &quot;a&quot; "
				 "&amp; b\\x1b[31m\\x7f\\u{202e}\\u{2066}\\u{feff}\xc3\xa9"
				 "\xef\xbf\xbd\xef\xbf\xbd\xf0\x9f\x98\x80");
	free(out);
	/* bounded by n and by the first NUL */
	out = esc("abc<def", 4);
	assert_string_equal(out, "abc&lt;");
	free(out);
	out = esc("ab\0<", 4);
	assert_string_equal(out, "ab");
	free(out);
	/* a sequence cut by n is invalid, not read past n */
	out = esc("x\xe2\x80\xae", 3);
	assert_string_equal(out, "x\xef\xbf\xbd");
	free(out);
}

/* bash 4000 forks 4100, which execs argv, opens nvidiactl and builds an RM client, then forks
 * nkids children named kid_comm that use the inherited file; the last one dies by SIGSEGV (all
 * of them with all_crash). */
static struct gctx_model *poison_crash(const char *argv, size_t argv_len, const char *kid_comm,
				       __u32 nkids, bool all_crash)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_ev_fork f;
	struct gctx_ev_exec x;
	struct gctx_ev_open o;
	struct gctx_ev_ioctl io;
	struct gctx_ev_exit e;
	struct gctx_rec_end end = {.end_ns = T0 + 9000000000ULL, .exit_status = 0};

	assert_non_null(m);
	f = ev_fork(4000, 4100, T0 + 100000000, "bash", false);
	feed(m, GCTX_EV_FORK, &f, sizeof(f));
	x = ev_exec(4100, T0 + 200000000, "python3", "/usr/bin/python3", argv, argv_len);
	feed(m, GCTX_EV_EXEC, &x, sizeof(x));
	o = ev_open(4100, T0 + 1200000000, "python3", CTL_FILE, 3, O_RDWR_K);
	feed(m, GCTX_EV_OPEN, &o, sizeof(o));
	io = ev_rm_alloc(4100, T0 + 1200001000, "python3", 3, NV_CLIENT, NV_CLIENT, NV_CLIENT, 0x41,
			 0, 0);
	feed(m, GCTX_EV_IOCTL, &io, sizeof(io));
	for (__u32 k = 0; k < nkids; k++) {
		__u32 pid = 4101 + k;
		__u64 ts = T0 + 2000000000ULL + k * 1000000ULL;

		f = ev_fork(4100, pid, ts, "python3", false);
		feed(m, GCTX_EV_FORK, &f, sizeof(f));
		io = ev_rm_alloc(pid, ts + 1000, kid_comm, 3, NV_CLIENT, NV_CLIENT, NV_DEVICE + k,
				 0x80, 0, 0);
		feed(m, GCTX_EV_IOCTL, &io, sizeof(io));
		e = ev_exit(pid, pid, ts + 500000, kid_comm, all_crash || k == nkids - 1 ? 11 : 0,
			    true);
		feed(m, GCTX_EV_EXIT, &e, sizeof(e));
	}
	e = ev_exit(4100, 4100, T0 + 8000000000ULL, "python3", 0, true);
	feed(m, GCTX_EV_EXIT, &e, sizeof(e));
	feed(m, GCTX_REC_END, &end, sizeof(end));
	gctx_model__finish(m);
	return m;
}

static struct gctx_model *poison(const char *argv, size_t argv_len, const char *kid_comm,
				 __u32 nkids)
{
	return poison_crash(argv, argv_len, kid_comm, nkids, false);
}

/* No tag of the page has an event handler attribute (on...=). */
static void no_event_attr(const char *html)
{
	for (const char *p = html; (p = strchr(p, '<')); p++) {
		const char *e = strchr(p, '>'), *q;

		assert_non_null(e);
		for (q = p; q < e; q++) {
			if ((q[0] == ' ' || q[0] == '\t' || q[0] == '\n') && q[1] == 'o' &&
			    q[2] == 'n') {
				const char *r = q + 3;

				while (r < e && *r >= 'a' && *r <= 'z')
					r++;
				if (*r == '=') {
					print_error("event attribute in: %.*s\n", (int)(e - p + 1),
						    p);
					fail();
				}
			}
		}
	}
}

static char *page(const struct gctx_model *m, const struct gctx_trace_meta *meta)
{
	struct gctx_html_host h = {.m = m, .meta = meta, .source = "job.gctx"};
	struct capture c;

	capture_begin(&c);
	assert_int_equal(gctx_html__write(c.f, &h, 1), 0);
	return capture_end(&c);
}

static void test_poison_page(void **state)
{
	static const char args[] = "python3\0train.py";
	struct gctx_model *m = poison(args, sizeof(args), "pt_data_worker", 3);
	struct gctx_analysis *an = gctx_analysis__new(m, T0);
	struct gctx_trace_meta meta;
	const struct gctx_incident *in;
	char *html, *style, *end, b64[45], csp[128];
	struct capture c;

	meta_fill(&meta, "-- python3 train.py");
	html = page(m, &meta);
	assert_non_null(an);
	assert_int_equal(gctx_analysis__nincidents(an), 1);
	in = gctx_analysis__incident(an, 0);
	/* the verdict and the fix, as the analysis words them (escaped as the page does) */
	capture_begin(&c);
	gctx_html_str(c.f, gctx_analysis__summary(an)->verdict);
	style = capture_end(&c);
	assert_contains(html, style);
	free(style);
	capture_begin(&c);
	gctx_html_str(c.f, in->fix);
	style = capture_end(&c);
	assert_contains(html, style);
	free(style);
	assert_contains(html, "<section class=\"verdict error\" id=\"h0-verdict\">");
	assert_contains(html, "id=\"h0-inc1\" data-incident=\"1\"");
	assert_contains(html, "<h3>#1 error poison-fork: POISON FORK, pid 4100, 3 processes");
	/* the tree: the source and its three children highlighted, forked without exec, the
	 * inherited file, the crash */
	assert_contains(html, "<g class=\"proc inc gpu\" data-pid=\"4100\" data-incident=\"1\">");
	assert_contains(html, "incident #1 (source)");
	for (__u32 pid = 4101; pid <= 4103; pid++) {
		char want[96];

		snprintf(want, sizeof(want), "class=\"proc inc gpu%s\" data-pid=\"%u\"",
			 pid == 4103 ? " crashed" : "", pid);
		assert_contains(html, want);
	}
	assert_contains(html, "fork, no exec; inherited #1 from 4100 (used)");
	assert_contains(html, "killed by SIGSEGV");
	assert_contains(html, "class=\"edge noexec\"");
	/* the timeline's marks: the incident's moments and its findings */
	assert_contains(html, "<g class=\"mark\" data-incident=\"1\">");
	assert_contains(html, "data-at=\"init\"");
	assert_contains(html, "data-at=\"first\"");
	assert_contains(html, "class=\"find\" data-finding=\"1\"");
	assert_contains(html, "Timeline around the incidents");
	/* the policy: the page's own style by hash, no script, nothing fetched */
	style = strstr(html, "<style>");
	assert_non_null(style);
	style += strlen("<style>");
	end = strstr(style, "</style>");
	assert_non_null(end);
	gctx_sha256_b64(style, end - style, b64);
	snprintf(csp, sizeof(csp), "default-src 'none'; style-src 'sha256-%s'; script-src 'none'",
		 b64);
	assert_contains(html, csp);
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "href"));
	assert_null(strstr(html, " style="));
	no_event_attr(html);
	free(html);
	gctx_analysis__free(an);
	gctx_model__free(m);
}

/* Every string the processes control is hostile: comm, argv, the exec's file name. */
static void test_hostile_page(void **state)
{
	static const char args[] = "python3\0</script><script>alert(1)</script>\0\"><img src=x "
				   "onerror=alert(2)>\0javascript:alert(3)\0\xe2\x80\xaegpj.exe\0"
				   "<svg onload=alert(4)>\0'\0&amp;";
	struct gctx_model *m = poison(args, sizeof(args), "<b onclick=x>", 2);
	struct gctx_trace_meta meta;
	char *html;

	meta_fill(&meta, "-- </title><script>alert(5)</script>");
	strcpy(meta.hostname, "<i>host\"'");
	html = page(m, &meta);
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<img"));
	assert_null(strstr(html, "<svg onload"));
	assert_null(strstr(html, "<b "));
	assert_null(strstr(html, "<i>"));
	assert_null(strstr(html, "\xe2\x80\xae"));
	assert_null(strstr(html, "href"));
	/* attributes: every quote of theirs is an entity, so none can close ours */
	assert_contains(html, "<h2 class=\"hostname\">&lt;i&gt;host&quot;&#39;</h2>");
	no_event_attr(html);
	assert_contains(html, "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
	assert_contains(html, "&lt;b onclick=x&gt;");
	assert_contains(html, "\\u{202e}gpj.exe");
	assert_contains(html, "&amp;amp;");
	assert_contains(html, "<title>gpuctx: &lt;i&gt;host&quot;&#39; (1 host)</title>");
	free(html);
	gctx_model__free(m);
}

/* Two hosts of one job: side by side, the job's verdict over them first. */
static void test_two_hosts(void **state)
{
	static const char args[] = "python3\0train.py";
	struct gctx_model *m = poison(args, sizeof(args), "pt_data_worker", 2);
	struct gctx_model *clean = gctx_model__new();
	struct gctx_ev_fork f = ev_fork(1, 2, T0 + 1000, "init", false);
	struct gctx_html_host h[2] = {{.m = m, .label = "nodea"}, {.m = clean, .label = "nodeb"}};
	struct gctx_trace_meta meta[2];
	struct capture c;
	char *html;

	feed(clean, GCTX_EV_FORK, &f, sizeof(f));
	gctx_model__finish(clean);
	meta_fill(&meta[0], "-- python3 train.py");
	meta_fill(&meta[1], "-- true");
	h[0].meta = &meta[0];
	h[1].meta = &meta[1];
	capture_begin(&c);
	assert_int_equal(gctx_html__write(c.f, h, 2), 0);
	html = capture_end(&c);
	assert_contains(html, "<section class=\"verdict error\" id=\"job-verdict\"><b>Job:</b> 2 "
			      "hosts, side by side below; 1 with incidents (1 error, 0 warnings).");
	assert_contains(html, "<li><b>nodea</b>: POISON FORK: pid 4100");
	assert_contains(html, "<li><b>nodeb</b>: NO PROBLEM FOUND");
	assert_contains(html, "<section class=\"host\" id=\"h0\">\n<h2 class=\"hostname\">nodea");
	assert_contains(html, "<section class=\"host\" id=\"h1\">\n<h2 class=\"hostname\">nodeb");
	assert_contains(html, "<section class=\"verdict clean\" id=\"h1-verdict\">");
	free(html);
	gctx_model__free(clean);
	gctx_model__free(m);
}

/* An agent's dump: the window it covers (wall clock) and the job of its processes, from their
 * cgroups; what the agent's window had forgotten. */
static void test_agent_dump(void **state)
{
	static const char args[] = "python3\0train.py";
	struct gctx_model *m = poison(args, sizeof(args), "pt_data_worker", 2);
	struct gctx_rec_cgroup cg = {.pid = 4100, .ts_ns = T0 + 300000000};
	struct gctx_rec_drops d = {0};
	struct gctx_trace_meta meta;
	char *html;

	snprintf(cg.path, sizeof(cg.path),
		 "/system.slice/slurmstepd.scope/job_77/step_1/user/task_0");
	feed(m, GCTX_REC_CGROUP, &cg, sizeof(cg));
	d.window_evicted = 1234;
	feed(m, GCTX_REC_DROPS, &d, sizeof(d));
	meta_fill(&meta, "agent: python3 train.py");
	html = page(m, &meta);
	assert_contains(html, "<dt>window</dt><dd class=\"window\">2025-11-21 06:03:12 UTC to "
			      "2025-11-21 06:03:21 UTC (9.000 s)</dd>");
	assert_contains(html, "<dt>job</dt><dd class=\"jobs\">slurm job 77 step 1</dd>");
	assert_contains(html, "the agent's window had forgotten 1234 older records");
	free(html);
	gctx_model__free(m);
}

/* 30 trainers, each with a worker that used what it inherited: 30 incidents. The first 20 in
 * full, their sources and workers in the tree; the other 10 a line each. */
static void test_many_incidents(void **state)
{
	struct gctx_model *m = gctx_model__new();
	struct gctx_trace_meta meta;
	char *html, *p, want[64];
	size_t n = 0;

	assert_non_null(m);
	for (__u32 k = 0; k < 30; k++) {
		__u32 pid = 5000 + 2 * k, kid = pid + 1;
		__u64 ts = T0 + 100000000ULL * (k + 1), file = CTL_FILE + 0x1000 * k;
		struct gctx_ev_fork f = ev_fork(4000, pid, ts, "bash", false);
		struct gctx_ev_open o = ev_open(pid, ts + 1000, "trainer", file, 3, O_RDWR_K);
		struct gctx_ev_ioctl io;

		feed(m, GCTX_EV_FORK, &f, sizeof(f));
		feed(m, GCTX_EV_OPEN, &o, sizeof(o));
		f = ev_fork(pid, kid, ts + 2000, "trainer", false);
		feed(m, GCTX_EV_FORK, &f, sizeof(f));
		io = ev_rm_alloc(kid, ts + 3000, "worker", 3, NV_CLIENT, NV_CLIENT, NV_CLIENT, 0x41,
				 0, 0);
		io.file = file;
		feed(m, GCTX_EV_IOCTL, &io, sizeof(io));
	}
	gctx_model__finish(m);
	meta_fill(&meta, "-- many");
	html = page(m, &meta);
	for (p = html; (p = strstr(p, "<article class=\"incident")); p++)
		n++;
	assert_int_equal(n, 20);
	assert_contains(html, "<details class=\"more\"><summary>10 more incidents</summary>");
	assert_contains(html, "<li>#30 error poison-fork, pid ");
	for (__u32 k = 0; k < 20; k++) {
		snprintf(want, sizeof(want), "data-pid=\"%u\" data-incident=", 5000 + 2 * k + 1);
		assert_contains(html, want);
	}
	n = 0;
	for (p = html; (p = strstr(p, "<g class=\"mark\" data-incident=")); p++)
		n++;
	assert_true(n <= 2 * 20);
	free(html);
	gctx_model__free(m);
}

/* 10,000 short-lived processes that never touched the GPU beside a poison fork of 200
 * workers: the pictures keep their size, and say what they folded. */
static void test_big_folded(void **state)
{
	static const char args[] = "python3\0train.py";
	struct gctx_model *m = poison(args, sizeof(args), "pt_data_worker", 200);
	struct gctx_trace_meta meta;
	char *html, *p;
	size_t rows = 0;

	for (__u32 k = 0; k < 10000; k++) {
		struct gctx_ev_fork f = ev_fork(4000, 20000 + k, T0 + 300000000ULL + k, "bash", 0);
		struct gctx_ev_exit e =
		    ev_exit(20000 + k, 20000 + k, T0 + 300000500ULL + k, "sh", 0, true);

		feed(m, GCTX_EV_FORK, &f, sizeof(f));
		feed(m, GCTX_EV_EXIT, &e, sizeof(e));
	}
	gctx_model__finish(m);
	meta_fill(&meta, "-- make");
	html = page(m, &meta);
	for (p = html; (p = strstr(p, "<g class=\"proc")); p++)
		rows++;
	/* the source, its parent and grandparent (not in the trace: bash 4000 is a root), 40
	 * members and the crashed one */
	if (rows < 43 || rows > 50) {
		print_error("%zu rows\n", rows);
		fail();
	}
	assert_contains(html, "10000 folded");
	/* the timeline's row of the folded processes: their forks over time */
	assert_contains(html, "<g class=\"tlfolded\"><text class=\"fold\" x=\"4\" y=\"");
	assert_contains(html, " folded</text><title>processes folded (no GPU state");
	assert_contains(html, "<rect class=\"foldbar\"");
	assert_contains(html, "folded: no GPU state, or past the first members of an incident");
	assert_contains(html, "4300 pt_data_worker"); /* the crashed one, past the first 40 */
	assert_true(strlen(html) < 400 * 1024);
	free(html);
	gctx_model__free(m);
}

/* A poison fork of 3,000 workers that all crashed: every one is worth a row, the budget
 * holds. */
static void test_all_crashed(void **state)
{
	static const char args[] = "python3\0train.py";
	struct gctx_model *m = poison_crash(args, sizeof(args), "pt_data_worker", 3000, true);
	struct gctx_trace_meta meta;
	char *html, *p;
	size_t rows = 0;

	meta_fill(&meta, "-- python3 train.py");
	html = page(m, &meta);
	for (p = html; (p = strstr(p, "<g class=\"proc")); p++)
		rows++;
	assert_int_equal(rows, 300);
	assert_contains(html, "Processes (3002; 300 shown, 2702 folded");
	assert_true(strlen(html) < 500 * 1024);
	free(html);
	gctx_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_escape),	 cmocka_unit_test(test_poison_page),
	    cmocka_unit_test(test_hostile_page), cmocka_unit_test(test_agent_dump),
	    cmocka_unit_test(test_two_hosts),	 cmocka_unit_test(test_many_incidents),
	    cmocka_unit_test(test_big_folded),	 cmocka_unit_test(test_all_crashed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
