// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpuctx for Slurm: a SPANK plugin. `srun --gpuctx=check|record[:DIR]` (or #SBATCH --gpuctx=...)
 * runs ONE `gpuctx record` per node per step, following the step's cgroup from before its
 * first task execs to after its last task exits; the trace lands in DIR (default: the submit
 * directory) as gpuctx-JOBID.STEPID-HOST.gctx. With check, each node's verdict goes to the
 * step's stderr and srun exits 86 when a node's trace holds an error incident.
 *
 * plugstack.conf:  optional /usr/lib/x86_64-linux-gnu/slurm-wlm/gpuctx_spank.so [gpuctx=PATH]
 *                  [record-opt=ARG]... [run-dir=DIR] [check-timeout=S]   (PATH: the gpuctx
 *                  binary; each ARG one more argument of gpuctx record, such as --no-stacks or
 *                  --device PATH:KIND as two; DIR: the agent's --run-dir, default /run/gpuctx,
 *                  the node's; S: seconds a check may take, on the node and in srun, default
 *                  300, from 1 to 86400)
 *
 * Where each part runs (spank.h's order):
 *   slurmstepd (remote, root), init_post_opt: the step's cgroup (Slurm's own under cgroup v2,
 *     else one of ours in the cgroup v2 hierarchy, named as Slurm would), then the tracer,
 *     waited for until it says it is attached: where `gpuctx agent` runs on the node, a
 *     `record --from-agent --cgroup` that takes the step from the agent (no second set of BPF
 *     programs), else, or when the agent does not serve it, a `record --cgroup` of its own
 *   slurmstepd, task_post_fork (root, before any task execs): a task joins our cgroup when it
 *     is ours; the first task's stderr is kept for the verdict
 *   slurmstepd, task_exit of the last local task: the tracer stopped (SIGINT: it writes the end
 *     of the trace), `gpuctx check` of the trace file the tracer wrote (its descriptor, kept:
 *     never what is at the path by then) writes the verdict to the kept stderr
 *   srun (local), exit: with check, `gpuctx check` of the step's traces decides srun's exit
 *     status (86 on an error incident; 1 when a trace cannot be read: no verdict is no pass)
 * The trace is the job's user's: a helper with the user's uid, gid and groups creates it
 * (O_CREAT|O_EXCL|O_NOFOLLOW, 0600) in DIR as the user could, and hands the descriptor to
 * the tracer (record -o /dev/fd/3); a DIR the user cannot write gets no trace. Root never
 * creates, replaces or opens a file by a path in the user's directory. Every helper the
 * plugin runs has a deadline and is killed past it.
 * The plugin never runs the user's code and never fails a step because gpuctx could not
 * start: it says why in the step's stderr and the slurmd log, and the job runs untraced.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "agent/proto.h"
#include "model/jobattr.h"

SPANK_PLUGIN(gpuctx, 1);

#ifndef GPUCTX_BIN
#define GPUCTX_BIN "/usr/local/bin/gpuctx"
#endif
#define EXIT_INCIDENT 86	     /* gpuctx check's exit status on an incident */
#define ATTACH_WAIT_S 60	     /* a tracer not attached by then is given up */
#define STOP_WAIT_S   60	     /* a tracer not done by then is killed */
#define CHECK_WAIT_S  300	     /* a check not done by then is killed (a trace of GiBs) */
#define CHECK_MAX_S   86400	     /* check-timeout= at most: a day */
#define CREATE_WAIT_S 30	     /* the helper creating the trace (a hung NFS directory) */
#define TRACE_FD      3		     /* where the tracer and the check find the trace */
#define CG_OURS	      "slurm_gpuctx" /* our cgroup v2 directory, _CLUSTER: job_N/step_M below */

enum mode { MODE_OFF, MODE_RECORD, MODE_CHECK };

static struct {
	enum mode mode;
	char dir[1024];	    /* where traces go, "" = the submit directory */
	char bin[1024];	    /* the gpuctx binary */
	char *rec_opts[16]; /* record options from plugstack.conf (record-opt=ARG) */
	int nrec_opts;
	const char *run_dir; /* the agent asked (run-dir=DIR), NULL: the node's */
	int check_wait;	     /* seconds a check may take (check-timeout=S) */
	char cgroup[2200];   /* the cgroup the tracer follows */
	bool cg_ours;	     /* made by us: tasks are moved into it */
	char trace[1600];
	char name[160]; /* the trace's file name in its directory */
	char step[32];	/* "0", "batch", ... */
	pid_t tracer;
	int err_fd;   /* the first task's stderr, for the verdict */
	int trace_fd; /* the trace, created as the job's user */
	int dir_fd;   /* its directory, opened as the job's user */
	uint32_t ntasks, nexited;
} g = {.tracer = -1, .err_fd = -1, .trace_fd = -1, .dir_fd = -1};

static int opt_cb(int val, const char *optarg, int remote);

static struct spank_option opt = {
    "gpuctx",
    "check|record[:DIR]",
    "trace GPU state across fork with gpuctx, one tracer per node: 'check' also prints each "
    "node's verdict and fails the step (exit 86) on an error incident; traces go to DIR "
    "(default: the submit directory) as gpuctx-JOB.STEP-HOST.gctx",
    1,
    0,
    opt_cb,
};

static int opt_cb(int val, const char *optarg, int remote)
{
	const char *colon = optarg ? strchr(optarg, ':') : NULL;
	size_t n = colon ? (size_t)(colon - optarg) : (optarg ? strlen(optarg) : 0);

	(void)val;
	(void)remote;
	if (n == 5 && !strncmp(optarg, "check", 5))
		g.mode = MODE_CHECK;
	else if (n == 6 && !strncmp(optarg, "record", 6))
		g.mode = MODE_RECORD;
	else {
		slurm_error("gpuctx: --gpuctx=%s: want check or record, optionally :DIR",
			    optarg ? optarg : "");
		return -1;
	}
	if (colon && (!colon[1] || colon[1] != '/' || strlen(colon + 1) >= sizeof(g.dir))) {
		slurm_error("gpuctx: --gpuctx=%s: DIR must be an absolute path", optarg);
		return -1;
	}
	snprintf(g.dir, sizeof(g.dir), "%s", colon ? colon + 1 : "");
	return 0;
}

/* check-timeout=S: whole seconds from 1 to CHECK_MAX_S, else the default, said. */
static void check_timeout_arg(const char *arg)
{
	char *end;
	long s;

	errno = 0;
	s = strtol(arg, &end, 10);
	if (errno || end == arg || *end || s < 1 || s > CHECK_MAX_S) {
		slurm_error("gpuctx: check-timeout=%s: want seconds from 1 to %d (%d s kept)", arg,
			    CHECK_MAX_S, g.check_wait);
		return;
	}
	g.check_wait = (int)s;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	snprintf(g.bin, sizeof(g.bin), "%s", GPUCTX_BIN);
	g.check_wait = CHECK_WAIT_S;
	for (int i = 0; i < ac; i++) {
		if (!strncmp(av[i], "check-timeout=", 14))
			check_timeout_arg(av[i] + 14);
		else if (!strncmp(av[i], "gpuctx=", 7))
			snprintf(g.bin, sizeof(g.bin), "%s", av[i] + 7);
		else if (!strncmp(av[i], "run-dir=", 8) && av[i][8] == '/')
			g.run_dir = av[i] + 8;
		else if (!strncmp(av[i], "record-opt=", 11) && g.nrec_opts < 16)
			g.rec_opts[g.nrec_opts++] =
			    av[i] + 11; /* plugstack.conf's, kept by Slurm */
		else
			slurm_error("gpuctx: unknown plugstack.conf argument '%s'", av[i]);
	}
	return spank_option_register(sp, &opt) == ESPANK_SUCCESS ? 0 : -1;
}

/* Say it in the slurmd log and, when we have it, in the step's stderr. */
static void say(const char *fmt, const char *a, const char *b)
{
	char line[2048];

	snprintf(line, sizeof(line), fmt, a, b);
	slurm_info("gpuctx: %s", line);
	if (g.err_fd >= 0)
		dprintf(g.err_fd, "gpuctx: %s\n", line);
}

/* The cgroup v2 mount point ("" when none). */
static void v2_root(char *buf, size_t len)
{
	char dev[256], mnt[1024], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");

	buf[0] = '\0';
	if (!f)
		return;
	while (fscanf(f, "%255s %1023s %63s %*[^\n]", dev, mnt, type) == 3)
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", mnt);
			break;
		}
	fclose(f);
}

/* The cgroup the tracer follows: Slurm's step cgroup when slurmstepd is in one (cgroup/v2),
 * else ours, made now (cgroup v1 or no cgroup plugin: tasks join it before they exec). */
static int step_cgroup(spank_t sp, uint32_t job, uint32_t stepid)
{
	char cluster[64] = "", ours[80];
	char root[1024], self[4096] = "", path[1024];
	struct gctx_job_attr a;
	int fd;
	ssize_t n;

	v2_root(root, sizeof(root));
	if (!root[0])
		return -ENOENT;
	fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, self, sizeof(self) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0 && gctx_job_cgroup_pick(self, (size_t)n, path, sizeof(path)) &&
	    !strncmp(self, "0::", 3) && gctx_job_attr_parse(path, &a) == GCTX_JOB_SLURM &&
	    a.step[0]) {
		/* .../job_N/step_M/slurm: follow .../job_N/step_M */
		char *cut = strstr(path, "/step_");
		char *end = cut ? strchr(cut + 1, '/') : NULL;

		if (end)
			*end = '\0';
		snprintf(g.cgroup, sizeof(g.cgroup), "%s%s", root, path);
		return 0;
	}
	/* job ids are per cluster: two clusters' slurmds on one machine keep apart */
	snprintf(ours, sizeof(ours), "%s", CG_OURS);
	if (spank_getenv(sp, "SLURM_CLUSTER_NAME", cluster, sizeof(cluster)) == ESPANK_SUCCESS &&
	    cluster[0] &&
	    strspn(cluster, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(cluster))
		snprintf(ours, sizeof(ours), "%s_%s", CG_OURS, cluster);
	snprintf(g.cgroup, sizeof(g.cgroup), "%s/%s/job_%u/step_%s", root, ours, job, g.step);
	for (char *p = g.cgroup + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(g.cgroup, 0755) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(g.cgroup, 0755) && errno != EEXIST)
		return -errno;
	g.cg_ours = true;
	(void)stepid;
	return 0;
}

/* Our cgroup and its empty parents (.../slurm_gpuctx_CLUSTER/job_N/step_M), once the step is
 * over. */
static void cgroup_remove(void)
{
	char *p;

	for (int i = 0; g.cg_ours && i < 3 && !rmdir(g.cgroup); i++) {
		p = strrchr(g.cgroup, '/');
		if (!p)
			break;
		*p = '\0';
	}
	g.cg_ours = false;
}

/* The tracer's output, in a file only we and it know. */
static int log_file(void)
{
	char tmpl[] = "/tmp/gpuctx-spank.XXXXXX";
	int fd = mkostemp(tmpl, O_CLOEXEC);

	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

/* A child in a session of its own (killed as a group past its deadline), with clean signals. */
static pid_t child(void)
{
	pid_t pid = fork();
	sigset_t none;

	if (pid)
		return pid;
	/* slurmstepd blocks signals its threads do not take: a blocked mask outlives exec */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	return 0;
}

/* Run argv with stdout and stderr to out_fd (-1: /dev/null) and, when trace_fd >= 0, the
 * trace as descriptor TRACE_FD. */
static pid_t spawn(char *const argv[], int out_fd, int trace_fd)
{
	pid_t pid = child();
	int nul;

	if (pid)
		return pid;
	nul = open("/dev/null", O_RDWR);
	if (trace_fd >= 0 && (trace_fd = fcntl(trace_fd, F_DUPFD, 10)) < 0)
		_exit(127);
	if (out_fd >= 0 && out_fd <= TRACE_FD)
		out_fd = fcntl(out_fd, F_DUPFD, 10);
	dup2(nul, 0);
	dup2(out_fd >= 0 ? out_fd : nul, 1);
	dup2(out_fd >= 0 ? out_fd : nul, 2);
	if (trace_fd >= 0)
		dup2(trace_fd, TRACE_FD); /* dup2 clears close-on-exec */
	execv(argv[0], argv);
	_exit(127);
}

/* Wait for pid at most secs; past that, kill its session. Its wait status, or -1 killed. */
static int wait_deadline(pid_t pid, int secs)
{
	int st = 0;

	for (int i = 0; i < secs * 20; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return r == pid ? st : -1;
		usleep(50000);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	/* a child stuck in the kernel (a hung NFS server) dies only when it returns: we do not
	 * wait for that either */
	for (int i = 0; i < 100 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(50000);
	return -1;
}

static bool attached(int fd)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "gpuctx: attached to") != NULL;
}

static const char *step_name(uint32_t stepid, char *buf, size_t len)
{
	if (stepid == SLURM_BATCH_SCRIPT)
		return "batch";
	if (stepid == SLURM_EXTERN_CONT)
		return "extern";
	if (stepid == SLURM_INTERACTIVE_STEP)
		return "interactive";
	snprintf(buf, len, "%u", stepid);
	return buf;
}

static int trace_dir(spank_t sp, char *buf, size_t len)
{
	if (g.dir[0]) {
		snprintf(buf, len, "%s", g.dir);
		return 0;
	}
	return spank_getenv(sp, "SLURM_SUBMIT_DIR", buf, (int)len) == ESPANK_SUCCESS ? 0 : -1;
}

/* The job's user, as the helpers below become it. */
static struct {
	uid_t uid;
	gid_t gid;
	gid_t *gids;
	int ngids;
} user;

/* In a child: become the job's user (groups, gid, uid: in that order, as root may). */
static int become_user(void)
{
	umask(077);
	if (setgroups(user.ngids, user.gids) || setgid(user.gid) || setuid(user.uid))
		return -errno;
	return 0;
}

/* The helper's answer: errno and which step failed, then the directory's and the trace's
 * descriptors when it created the trace. */
struct made {
	int err;
	int stage; /* 0 become the user, 1 open DIR, 2 create the trace */
};

static void send_made(int sock, struct made m, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds) {
		struct cmsghdr *c;

		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	sendmsg(sock, &msg, MSG_NOSIGNAL);
}

/* The helper's side: DIR opened as the user could open it (a symlink in DIR is followed as
 * the user's rights allow: nothing the user could not reach), the trace created in it, never
 * through a symlink, never over an existing file. */
static void make_as_user(int sock, const char *dir)
{
	struct made m = {0};
	int fds[2];

	m.err = become_user();
	if (!m.err) {
		m.stage = 1;
		fds[0] = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		m.err = fds[0] < 0 ? -errno : 0;
	}
	if (!m.err) {
		m.stage = 2;
		fds[1] = openat(fds[0], g.name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
		m.err = fds[1] < 0 ? -errno : 0;
	}
	send_made(sock, m, fds, m.err ? 0 : 2);
	_exit(0);
}

/* Create DIR/NAME as the job's user could (make_as_user in a child), keeping the directory's
 * and the trace's descriptors in g. 0, or -1 with why. */
static int create_trace(spank_t sp, const char *dir, char *why, size_t whylen)
{
	static const char *const what[] = {"cannot become the job's user", "cannot open",
					   "cannot create the trace in"};
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct made m = {.err = -ETIMEDOUT, .stage = 2};
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct pollfd p = {.events = POLLIN};
	int sv[2];
	pid_t pid;

	if (spank_get_item(sp, S_JOB_UID, &user.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &user.gid) != ESPANK_SUCCESS) {
		snprintf(why, whylen, "the job's user is not known");
		return -1;
	}
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &user.gids, &user.ngids) !=
	    ESPANK_SUCCESS) {
		user.gids = NULL; /* the primary group's rights alone */
		user.ngids = 0;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		snprintf(why, whylen, "socketpair: %s", strerror(errno));
		return -1;
	}
	pid = child();
	if (!pid) {
		close(sv[0]);
		make_as_user(sv[1], dir);
	}
	close(sv[1]);
	p.fd = sv[0];
	if (pid > 0 && poll(&p, 1, CREATE_WAIT_S * 1000) == 1 &&
	    recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC) == sizeof(m) && !m.err) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		int fds[2];

		if (c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(fds))) {
			memcpy(fds, CMSG_DATA(c), sizeof(fds));
			g.dir_fd = fds[0];
			g.trace_fd = fds[1];
		} else {
			m.err = -EPROTO;
		}
	} else if (!m.err) {
		m.err = -EPROTO;
	}
	close(sv[0]);
	if (pid > 0)
		wait_deadline(pid, 1);
	if (g.trace_fd >= 0)
		return 0;
	snprintf(why, whylen, "%s %s as uid %u: %s", what[m.stage < 3 ? m.stage : 2], dir,
		 (unsigned)user.uid,
		 m.err == -EEXIST ? "a file of the trace's name is there (not replaced)"
				  : strerror(-m.err));
	return -1;
}

/* The trace we created, removed when no tracer wrote it (as the user: root deletes nothing in
 * the user's directory), so that no empty trace stands for a step nobody traced. */
static void trace_remove(void)
{
	struct stat a, b;
	pid_t pid;

	if (g.trace_fd < 0 || g.dir_fd < 0)
		return;
	pid = child();
	if (!pid) {
		if (!become_user() && !fstat(g.trace_fd, &a) &&
		    !fstatat(g.dir_fd, g.name, &b, AT_SYMLINK_NOFOLLOW) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			unlinkat(g.dir_fd, g.name, 0);
		_exit(0);
	}
	if (pid > 0)
		wait_deadline(pid, CREATE_WAIT_S);
}

static void trace_close(void)
{
	if (g.trace_fd >= 0)
		close(g.trace_fd);
	if (g.dir_fd >= 0)
		close(g.dir_fd);
	g.trace_fd = g.dir_fd = -1;
}

/* Whether a gpuctx agent listens on this node (its socket is root's: so are we). */
static bool agent_answers(void)
{
	struct sockaddr_un sa;
	int fd;
	bool ok;

	if (agent_sock_addr(&sa, g.run_dir))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Start argv as the step's tracer and wait until it says it is attached: no task may exec
 * before it follows the cgroup. false, with why, when it did not. */
static bool tracer_start(char *const argv[], char *why, size_t whylen)
{
	int fd = log_file(), waited;

	g.tracer = spawn(argv, fd, g.trace_fd);
	if (g.tracer < 0) {
		snprintf(why, whylen, "cannot start %s: %s", g.bin, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	for (waited = 0; waited < ATTACH_WAIT_S * 20; waited++) {
		int st;

		if (attached(fd))
			break;
		if (waitpid(g.tracer, &st, WNOHANG) == g.tracer) {
			g.tracer = -1;
			break;
		}
		usleep(50000);
	}
	if (g.tracer < 0 || waited == ATTACH_WAIT_S * 20) {
		ssize_t n = fd >= 0 ? pread(fd, why, whylen - 1, 0) : 0;

		why[n > 0 ? n : 0] = '\0';
		why[strcspn(why, "\n")] = '\0';
		if (g.tracer > 0) {
			wait_deadline(g.tracer, 0); /* its session killed, reaped if it dies */
			g.tracer = -1;
		}
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	return true;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	char *argv[32], dir[1024], host[64] = "", sbuf[16], errs[256], why[1100];
	uint32_t job = 0, stepid = 0;
	bool from_agent = false;
	int err;

	(void)ac;
	(void)av;
	if (g.mode == MODE_OFF || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
		return 0;
	if (stepid == SLURM_EXTERN_CONT)
		return 0; /* no task of the user's: nothing to trace */
	snprintf(g.step, sizeof(g.step), "%s", step_name(stepid, sbuf, sizeof(sbuf)));
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &g.ntasks);
	gethostname(host, sizeof(host) - 1);
	if (trace_dir(sp, dir, sizeof(dir))) {
		say("no trace directory (SLURM_SUBMIT_DIR unset): job %s untraced", "", "");
		return 0;
	}
	snprintf(g.name, sizeof(g.name), "gpuctx-%u.%s-%s.gctx", job, g.step, host);
	snprintf(g.trace, sizeof(g.trace), "%s/%s", dir, g.name);
	if (create_trace(sp, dir, why, sizeof(why))) {
		say("%s: step %s untraced", why, g.step);
		return 0;
	}
	err = step_cgroup(sp, job, stepid);
	if (err) {
		snprintf(errs, sizeof(errs), "%s", strerror(-err));
		say("no cgroup v2 directory for the step (%s): step %s untraced", errs, g.step);
		trace_remove();
		trace_close();
		return 0;
	}
	argv[0] = g.bin;
	argv[1] = "record";
	argv[2] = "-q";
	argv[3] = "--silent";
	argv[4] = "-o";
	argv[5] = "/dev/fd/3"; /* TRACE_FD: the file made as the user */
	argv[6] = "--cgroup";
	argv[7] = g.cgroup;
	if (agent_answers()) {
		/* the node's agent already follows every process: the step's history and records
		 * from it (its own devices and options), not a second set of BPF programs */
		argv[8] = "--from-agent";
		argv[9] = g.run_dir ? "--run-dir" : NULL;
		argv[10] = (char *)g.run_dir;
		argv[11] = NULL;
		from_agent = tracer_start(argv, why, sizeof(why));
		if (!from_agent)
			say("the agent did not serve step %s (%s): a tracer of its own follows it",
			    g.step, why);
	}
	if (!from_agent) {
		/* what the agent's client may have begun is not a trace: the file is ours, empty
		 * again for our own tracer (its offset is shared with the client's) */
		if (ftruncate(g.trace_fd, 0) || lseek(g.trace_fd, 0, SEEK_SET)) {
			say("cannot empty the trace %s: step %s untraced", g.trace, g.step);
			cgroup_remove();
			trace_remove();
			trace_close();
			return 0;
		}
		for (int i = 0; i < g.nrec_opts; i++)
			argv[8 + i] = g.rec_opts[i];
		argv[8 + g.nrec_opts] = NULL;
		if (!tracer_start(argv, why, sizeof(why))) {
			say("the tracer did not attach (%s): step %s untraced", why, g.step);
			cgroup_remove();
			trace_remove();
			trace_close();
			return 0;
		}
	}
	slurm_info("gpuctx: tracer pid %d follows %s for job %u step %s into %s%s", (int)g.tracer,
		   g.cgroup, job, g.step, g.trace, from_agent ? " (from the agent)" : "");
	return 0;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	pid_t pid = 0;
	uint32_t task = 0;
	char path[2300];
	int fd;

	(void)ac;
	(void)av;
	if (g.tracer <= 0 || spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS)
		return 0;
	spank_get_item(sp, S_TASK_ID, &task);
	if (g.cg_ours) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", g.cgroup);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || dprintf(fd, "%d\n", (int)pid) < 0)
			slurm_error("gpuctx: task %u (pid %d) could not join %s: %s", task,
				    (int)pid, g.cgroup, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (g.mode == MODE_CHECK && g.err_fd < 0) {
		/* the task's stderr (a pipe to srun, the job's output file): the verdict's place */
		snprintf(path, sizeof(path), "/proc/%d/fd/2", (int)pid);
		g.err_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
	}
	return 0;
}

/* Stop the tracer and, with check, write the verdict; once, after the last local task. */
static void finish(void)
{
	char *argv[4];
	int st = 0;

	if (g.tracer <= 0)
		return;
	kill(g.tracer, SIGINT);
	st = wait_deadline(g.tracer, STOP_WAIT_S);
	g.tracer = -1;
	cgroup_remove();
	slurm_info("gpuctx: tracer stopped (status %d), trace %s", st, g.trace);
	if (g.mode == MODE_CHECK && g.err_fd >= 0) {
		pid_t pid;

		fcntl(g.err_fd, F_SETFL, O_APPEND); /* blocking: the verdict is written whole */
		argv[0] = g.bin;
		argv[1] = "check";
		argv[2] = "/dev/fd/3"; /* the file the tracer wrote, whatever is at its path now */
		argv[3] = NULL;
		pid = spawn(argv, g.err_fd, g.trace_fd);
		if (pid > 0 && wait_deadline(pid, g.check_wait) == -1) {
			fcntl(g.err_fd, F_SETFL, O_APPEND | O_NONBLOCK);
			slurm_error("gpuctx: check of %s killed after %d s", g.trace, g.check_wait);
			dprintf(g.err_fd, "gpuctx: no verdict: the check of %s took over %d s\n",
				g.trace, g.check_wait);
		}
	}
	trace_close();
	if (g.err_fd >= 0)
		close(g.err_fd);
	g.err_fd = -1;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (g.tracer > 0 && ++g.nexited >= g.ntasks)
		finish();
	return 0;
}

/* srun: with check, the step's traces (one per node) decide the exit status. */
static int local_exit(spank_t sp)
{
	char dir[1024], pat[1400], sbuf[16], **argv;
	uint32_t job = 0, stepid = 0;
	glob_t gl;
	pid_t pid;
	int st = 0, errfd, code = 0;

	const char *ej = getenv("SLURM_JOB_ID"), *es = getenv("SLURM_STEP_ID");

	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS) {
		/* srun's own environment names the step it ran */
		if (!ej || !es) {
			fprintf(stderr, "gpuctx: srun does not say its job step: no verdict\n");
			return 0;
		}
		job = (uint32_t)strtoul(ej, NULL, 10);
		stepid = (uint32_t)strtoul(es, NULL, 10);
	}
	/* where the nodes put them: as init_post_opt chose (an srun inside a batch script has
	 * the batch job's submit directory in its environment, whatever its own directory) */
	if (g.dir[0])
		snprintf(dir, sizeof(dir), "%s", g.dir);
	else if (getenv("SLURM_SUBMIT_DIR"))
		snprintf(dir, sizeof(dir), "%s", getenv("SLURM_SUBMIT_DIR"));
	else if (!getcwd(dir, sizeof(dir))) /* srun's own allocation: its directory */
		return 0;
	snprintf(pat, sizeof(pat), "%s/gpuctx-%u.%s-*.gctx", dir, job,
		 step_name(stepid, sbuf, sizeof(sbuf)));
	if (glob(pat, 0, NULL, &gl) || !gl.gl_pathc) {
		fprintf(stderr, "gpuctx: no trace of job %u step %u in %s\n", job, stepid, dir);
		return 0;
	}
	argv = calloc(gl.gl_pathc + 3, sizeof(*argv));
	if (argv) {
		argv[0] = g.bin;
		argv[1] = "check";
		for (size_t i = 0; i < gl.gl_pathc; i++)
			argv[2 + i] = gl.gl_pathv[i];
		/* the nodes said their verdicts already: only its errors are shown */
		errfd = log_file();
		pid = spawn(argv, errfd, -1);
		st = pid > 0 ? wait_deadline(pid, g.check_wait) : -1;
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == EXIT_INCIDENT) {
			fprintf(stderr,
				"gpuctx: job %u step %u: an error incident on %s node: "
				"exit %d\n",
				job, stepid, gl.gl_pathc > 1 ? "a" : "its", EXIT_INCIDENT);
			code = EXIT_INCIDENT; /* srun's own status: the step failed */
		} else if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			/* no verdict is no pass (a trace srun's user cannot read, a broken one) */
			char out[4096], *line;
			ssize_t n = errfd >= 0 ? pread(errfd, out, sizeof(out) - 1, 0) : 0;

			out[n > 0 ? n : 0] = '\0';
			/* its error line ("gpuctx: ..."), not a readable node's verdict */
			line = !strncmp(out, "gpuctx: ", 8) ? out : strstr(out, "\ngpuctx: ");
			line = line ? line + (*line == '\n') : out + n;
			line[strcspn(line, "\n")] = '\0';
			fprintf(stderr, "gpuctx: job %u step %u: no verdict (%s): exit 1\n", job,
				stepid,
				st == -1  ? "the check took too long"
				: line[0] ? line
					  : "check failed");
			code = 1;
		}
		if (errfd >= 0)
			close(errfd);
		free(argv);
		if (code) {
			globfree(&gl);
			fflush(NULL);
			exit(code);
		}
	}
	globfree(&gl);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (g.mode == MODE_OFF)
		return 0;
	if (spank_remote(sp)) {
		finish(); /* a step whose tasks never all exited */
		return 0;
	}
	if (!spank_remote(sp) && g.mode == MODE_CHECK)
		return local_exit(sp);
	return 0;
}
