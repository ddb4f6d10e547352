// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JUnit XML for CI (GitLab, Jenkins, GitHub test reporters): each incident a testcase named by
 * its kind and source pid, failing at or above --fail-on with the summary as message and the
 * fix in the body.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/outfile.h"
#include "lib/utf8.h"
#include "output/report/junit.h"
#include "output/report/report_priv.h"

/* XML 1.0 text: markup escaped, control bytes (not allowed in XML 1.0) as '?', invalid UTF-8
 * (argv and names are the traced program's bytes) as U+FFFD. */
static void xml_text(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, len, bad;

	while (i < n) {
		unsigned char ch = s[i];

		if (ch >= 0x80) {
			len = gctx_utf8_seq(s + i, n - i, &bad);
			if (len)
				fwrite(s + i, 1, len, out);
			else
				fputs("\xef\xbf\xbd", out);
			i += len ? len : bad;
			continue;
		}
		i++;
		switch (ch) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fputc(ch < 0x20 && ch != '\n' && ch != '\t' ? '?' : ch, out);
		}
	}
}

static void testcase(FILE *out, const struct gctx_incident *in, bool fails)
{
	char name[96];

	snprintf(name, sizeof(name), "#%u %s pid %u", in->id, gctx_incident_title(in->kind),
		 in->src_pid);
	fprintf(out, "    <testcase classname=\"gpuctx.%s\" name=\"",
		gctx_incident_kind_name(in->kind));
	xml_text(out, name);
	fputs("\" time=\"0\">\n", out);
	if (fails) {
		fprintf(out, "      <failure type=\"%s\" message=\"",
			gctx_incident_kind_name(in->kind));
		xml_text(out, in->summary);
		fputs("\">", out);
	} else {
		fputs("      <system-out>", out);
	}
	xml_text(out, in->summary);
	fputs("\nFix: ", out);
	xml_text(out, in->fix);
	fprintf(out, "\nSeverity: %s\n", gctx_severity_name(in->severity));
	for (int r = 0; r < GCTX_SITE_MAX; r++) {
		if (!in->where[r].text[0])
			continue;
		fprintf(out, "Where: %s at ", gctx_site_role_name(r));
		xml_text(out, in->where[r].text);
		fputc('\n', out);
	}
	fputs(fails ? "</failure>\n" : "</system-out>\n", out);
	fputs("    </testcase>\n", out);
}

int gctx_junit__write(FILE *out, const struct gctx_analysis *an, enum gctx_severity fail_on,
		      const char *suite)
{
	const struct gctx_job_summary *s = gctx_analysis__summary(an);
	__u32 n = gctx_analysis__nincidents(an), nfail = 0;

	for (__u32 i = 0; i < n; i++)
		nfail += gctx_analysis__incident(an, i)->severity >= fail_on;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"gpuctx\" tests=\"%u\" failures=\"%u\">\n", n ? n : 1,
		nfail);
	fputs("  <testsuite name=\"", out);
	xml_text(out, suite ? suite : "gpuctx check");
	fprintf(out, "\" tests=\"%u\" failures=\"%u\" errors=\"0\" skipped=\"0\">\n", n ? n : 1,
		nfail);
	for (__u32 i = 0; i < n; i++) {
		const struct gctx_incident *in = gctx_analysis__incident(an, i);

		testcase(out, in, in->severity >= fail_on);
	}
	if (!n) {
		fputs("    <testcase classname=\"gpuctx.clean\" name=\"no GPU state passed on "
		      "through fork\" time=\"0\">\n      <system-out>",
		      out);
		xml_text(out, s->verdict);
		fputs("</system-out>\n    </testcase>\n", out);
	}
	fputs("    <system-out>", out);
	xml_text(out, s->verdict);
	fputs("</system-out>\n  </testsuite>\n</testsuites>\n", out);
	return rep_finish(out);
}

struct junit_args {
	const struct gctx_analysis *an;
	enum gctx_severity fail_on;
	const char *suite;
};

static int write_junit(FILE *out, const void *arg)
{
	const struct junit_args *a = arg;

	return gctx_junit__write(out, a->an, a->fail_on, a->suite);
}

int gctx_junit__write_file(const char *path, const struct gctx_analysis *an,
			   enum gctx_severity fail_on, const char *suite, char *err, size_t errlen)
{
	/* the rules of every output: no symlink, device, FIFO or directory at path; a private
	 * temporary file renamed over it only when complete */
	struct junit_args a = {an, fail_on, suite};

	return gctx_outfile__write(path, write_junit, &a, err, errlen);
}
