// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's counters (--metrics FILE) in Prometheus text format, for node_exporter's
 * textfile collector: rewritten whole and atomically, never fsynced (it is rewritten in 5 s).
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "agent/spool.h"
#include "collect/discover.h"
#include "lib/outfile.h"
#include "model/analysis.h"
#include "model/model.h"
#include "trace/window.h"

/* NAME_seconds_total and NAME_max_seconds: a stall of the event loop, during which nothing
 * drains the ring buffer (what a --ring-size must absorb) */
static void metric_seconds(FILE *f, const char *name, const char *doing, __u64 total_ns,
			   __u64 max_ns)
{
	fprintf(f,
		"# HELP gpuctx_%s_seconds_total Time spent %s (no event read meanwhile).\n"
		"# TYPE gpuctx_%s_seconds_total counter\ngpuctx_%s_seconds_total %.6f\n",
		name, doing, name, name, total_ns / 1e9);
	fprintf(f,
		"# HELP gpuctx_%s_max_seconds The longest %s.\n"
		"# TYPE gpuctx_%s_max_seconds gauge\ngpuctx_%s_max_seconds %.6f\n",
		name, name, name, name, max_ns / 1e9);
}

/* What the model left out of the live processes it keeps (model.h, GCTX_KEEP_*). */
static void write_left_out(FILE *f, const struct gctx_model_trim *t)
{
	const struct {
		const char *kind;
		__u64 n;
	} k[] = {{"exited_thread", t->threads},	   {"exec", t->execs},
		 {"destroyed_object", t->objs},	   {"freed_allocation", t->mems},
		 {"context_current", t->currents}, {"closed_file", t->files}};

	fprintf(f, "# HELP gpuctx_model_left_out_total What live processes accumulated that the "
		   "model left out (the oldest), by kind.\n"
		   "# TYPE gpuctx_model_left_out_total counter\n");
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		fprintf(f, "gpuctx_model_left_out_total{kind=\"%s\"} %llu\n", k[i].kind,
			(unsigned long long)k[i].n);
}

/* The agent's own cost, for an admin's alert on it: CPU (all its threads) and resident
 * memory. Named gpuctx_agent_* (node_exporter has process_* of its own). */
static void write_self(FILE *f)
{
	struct rusage ru;
	unsigned long long resident;
	FILE *sm;

	if (!getrusage(RUSAGE_SELF, &ru))
		fprintf(f,
			"# HELP gpuctx_agent_cpu_seconds_total CPU time of the agent (user and "
			"system, all its threads).\n# TYPE gpuctx_agent_cpu_seconds_total "
			"counter\ngpuctx_agent_cpu_seconds_total %.3f\n",
			ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	sm = fopen("/proc/self/statm", "re");
	if (sm && fscanf(sm, "%*s %llu", &resident) == 1)
		fprintf(f,
			"# HELP gpuctx_agent_resident_memory_bytes Resident memory of the "
			"agent.\n# TYPE gpuctx_agent_resident_memory_bytes gauge\n"
			"gpuctx_agent_resident_memory_bytes %llu\n",
			resident * (unsigned long long)sysconf(_SC_PAGESIZE));
	if (sm)
		fclose(sm);
}

void agent_metrics__write(struct agent *a, const struct gctx_model *m)
{
	struct spool_usage su = {};
	struct gctx_outfile *out;
	char err[512];
	FILE *f;
	__u64 lost = a->drops.missed_stash + a->drops.unfollowed, dumps, sync_errors;

	if (!a->o.metrics)
		return;
	for (int i = 0; i < GCTX_EV_KERNEL_MAX; i++)
		lost += a->drops.drops[i];
	/* tried: a failure is said once per METRICS_EVERY_NS, not every turn of the loop */
	a->metrics_dirty = false;
	a->last_metrics = gctx_now_mono();
	a->synced_seen = spool_sync__finished(a->sync); /* before the counts below */
	spool_usage(a->spool_fd, &su);
	out = gctx_outfile__new(a->o.metrics, err, sizeof(err));
	if (!out) {
		agent_log(a, "cannot write metrics: %s", err);
		return;
	}
	fchmod(gctx_outfile__fd(out), 0644);
	gctx_outfile__no_fsync(out); /* rewritten in 5 s: not worth a stall of the loop */
	f = fdopen(dup(gctx_outfile__fd(out)), "w");
	if (!f) {
		gctx_outfile__free(out);
		return;
	}
	fprintf(f, "# HELP gpuctx_incidents_total Incidents in the dumps written, by kind and "
		   "severity.\n# TYPE gpuctx_incidents_total counter\n");
	for (int k = 0; k < GCTX_INC_MAX; k++)
		for (int s = GCTX_SEV_WARNING; s <= GCTX_SEV_ERROR; s++)
			fprintf(f, "gpuctx_incidents_total{kind=\"%s\",severity=\"%s\"} %llu\n",
				gctx_incident_kind_name(k), gctx_severity_name(s),
				(unsigned long long)a->incidents[k][s]);
	fprintf(f,
		"# HELP gpuctx_crashes_total Processes with GPU state killed by a signal.\n"
		"# TYPE gpuctx_crashes_total counter\ngpuctx_crashes_total %llu\n",
		(unsigned long long)a->crashes);
	fprintf(f,
		"# HELP gpuctx_events_total Events recorded.\n# TYPE gpuctx_events_total "
		"counter\ngpuctx_events_total %llu\n",
		(unsigned long long)a->records);
	fprintf(f,
		"# HELP gpuctx_events_lost_total Events the kernel could not deliver.\n"
		"# TYPE gpuctx_events_lost_total counter\ngpuctx_events_lost_total %llu\n",
		(unsigned long long)lost);
	fprintf(f,
		"# HELP gpuctx_window_evicted_total Events older than the window, "
		"forgotten.\n# TYPE gpuctx_window_evicted_total counter\n"
		"gpuctx_window_evicted_total %llu\n",
		(unsigned long long)gctx_window__evicted(a->win));
	fprintf(f,
		"# HELP gpuctx_window_bytes Memory the window's events take.\n"
		"# TYPE gpuctx_window_bytes gauge\ngpuctx_window_bytes %llu\n",
		(unsigned long long)gctx_window__bytes(a->win));
	spool_sync__counts(a->sync, &dumps, &sync_errors);
	fprintf(f,
		"# HELP gpuctx_dumps_total Dumps written.\n# TYPE gpuctx_dumps_total counter\n"
		"gpuctx_dumps_total %llu\n",
		(unsigned long long)dumps);
	fprintf(f,
		"# HELP gpuctx_dumps_folded_total Dumps not written: one owner's repeats of one "
		"kind of failure past 5 in 10 minutes.\n# TYPE gpuctx_dumps_folded_total counter\n"
		"gpuctx_dumps_folded_total %llu\n",
		(unsigned long long)a->same.folded);
	fprintf(f,
		"# HELP gpuctx_incidents_dropped_total Incidents not dumped: their owner had the "
		"most trees pending (16 at most each, 256 in all).\n"
		"# TYPE gpuctx_incidents_dropped_total counter\n"
		"gpuctx_incidents_dropped_total %llu\n",
		(unsigned long long)a->pend.dropped);
	fprintf(f,
		"# HELP gpuctx_dump_errors_total Dumps that could not be written, or "
		"incidents past the pending limit.\n# TYPE gpuctx_dump_errors_total counter\n"
		"gpuctx_dump_errors_total %llu\n",
		(unsigned long long)(a->dump_errors + sync_errors + a->pend.dropped));
	fprintf(f,
		"# HELP gpuctx_dump_stacks_late_total Dumps written with stacks still being "
		"resolved (after waiting 10 s): lines of code may be missing.\n"
		"# TYPE gpuctx_dump_stacks_late_total counter\n"
		"gpuctx_dump_stacks_late_total %llu\n",
		(unsigned long long)a->stacks_waits);
	fprintf(f,
		"# HELP gpuctx_spool_bytes Bytes of dumps in the spool.\n"
		"# TYPE gpuctx_spool_bytes gauge\ngpuctx_spool_bytes %llu\n",
		(unsigned long long)su.bytes);
	fprintf(f,
		"# HELP gpuctx_spool_files Dumps in the spool.\n"
		"# TYPE gpuctx_spool_files gauge\ngpuctx_spool_files %u\n",
		su.files);
	fprintf(f,
		"# HELP gpuctx_processes Processes the agent's model holds.\n"
		"# TYPE gpuctx_processes gauge\ngpuctx_processes %u\n",
		gctx_model__nlive_slots(m));
	fprintf(f,
		"# HELP gpuctx_processes_folded_total Exited processes that never touched a "
		"GPU, forgotten.\n# TYPE gpuctx_processes_folded_total counter\n"
		"gpuctx_processes_folded_total %llu\n",
		(unsigned long long)gctx_model__folded(m));
	fprintf(f,
		"# HELP gpuctx_compactions_total Compactions of the model (exited GPU jobs "
		"dropped).\n# TYPE gpuctx_compactions_total counter\n"
		"gpuctx_compactions_total %llu\n",
		(unsigned long long)a->compactions);
	metric_seconds(f, "compaction", "compacting the model", a->compact_ns, a->compact_max_ns);
	metric_seconds(f, "dump", "writing dumps", a->dump_ns, a->dump_max_ns);
	write_left_out(f, gctx_model__trimmed(m));
	write_self(f);
	if (fclose(f) || gctx_outfile__commit(out, err, sizeof(err)))
		agent_log(a, "cannot write metrics %s", a->o.metrics);
	gctx_outfile__free(out);
}
