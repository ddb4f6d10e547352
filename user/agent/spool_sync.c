// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A dump's last steps off the event loop: fsync, rename into place, the incident's log line,
 * the spool cap. An fsync on a busy disk takes hundreds of milliseconds, during which nothing
 * would drain the ring buffer. One thread, first in first out (a tree rewritten later is
 * renamed after its earlier version); a full queue makes the loop wait, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/spool.h"
#include "lib/outfile.h"

#define SYNC_QUEUE 32

struct sync_job {
	struct gctx_outfile *out;
	int dirfd; /* the spool it goes to (a SIGHUP may reopen the agent's meanwhile) */
	char name[SPOOL_NAME_LEN];
	char *line; /* logged once the file is in place */
	bool first; /* a new dump, not a tree's rewrite */
};

struct spool_sync {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	struct sync_job q[SYNC_QUEUE];
	unsigned head, len, busy;
	bool stop, started;
	__u64 max_bytes;
	__u32 max_files;
	spool_sync_log_fn log;
	void *ctx;
	__u64 dumps, errors; /* under lock */
	__u64 finished;	     /* atomic: the loop polls it */
};

static void sync_one(struct spool_sync *s, struct sync_job *j)
{
	char err[512];
	int ret = gctx_outfile__commit(j->out, err, sizeof(err));

	gctx_outfile__free(j->out);
	if (!ret) {
		s->log(s->ctx, j->line);
		spool_prune(j->dirfd, s->max_bytes, s->max_files, j->name);
	} else {
		char msg[sizeof(err) + 32];

		snprintf(msg, sizeof(msg), "cannot write a dump: %s", err);
		s->log(s->ctx, msg);
	}
	pthread_mutex_lock(&s->lock);
	if (ret)
		s->errors++;
	else
		s->dumps += j->first;
	pthread_mutex_unlock(&s->lock);
	__atomic_add_fetch(&s->finished, 1, __ATOMIC_RELEASE);
	close(j->dirfd);
	free(j->line);
}

static void *sync_main(void *arg)
{
	struct spool_sync *s = arg;
	struct sync_job j;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->len && !s->stop)
			pthread_cond_wait(&s->more, &s->lock);
		if (!s->len)
			break;
		j = s->q[s->head];
		s->head = (s->head + 1) % SYNC_QUEUE;
		s->len--;
		s->busy = 1;
		pthread_cond_broadcast(&s->room);
		pthread_mutex_unlock(&s->lock);
		sync_one(s, &j);
		pthread_mutex_lock(&s->lock);
		s->busy = 0;
		pthread_cond_broadcast(&s->room);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct spool_sync *spool_sync__new(__u64 max_bytes, __u32 max_files, spool_sync_log_fn log,
				   void *ctx)
{
	struct spool_sync *s = calloc(1, sizeof(*s));
	sigset_t all, old;

	if (!s)
		return NULL;
	s->max_bytes = max_bytes;
	s->max_files = max_files;
	s->log = log;
	s->ctx = ctx;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->more, NULL);
	pthread_cond_init(&s->room, NULL);
	/* signals are the main thread's (SIGTERM's final flush, SIGHUP) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->started = !pthread_create(&s->thread, NULL, sync_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return s;
}

int spool_sync__push(struct spool_sync *s, struct gctx_outfile *out, int spool_fd, const char *name,
		     const char *line, bool first)
{
	struct sync_job j = {.out = out, .first = first};

	j.dirfd = fcntl(spool_fd, F_DUPFD_CLOEXEC, 0);
	j.line = strdup(line);
	snprintf(j.name, sizeof(j.name), "%s", name);
	if (j.dirfd < 0 || !j.line) {
		if (j.dirfd >= 0)
			close(j.dirfd);
		free(j.line);
		gctx_outfile__free(out);
		return -ENOMEM;
	}
	if (!s->started) { /* no thread: done here, the loop waits as it did */
		sync_one(s, &j);
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	while (s->len == SYNC_QUEUE)
		pthread_cond_wait(&s->room, &s->lock);
	s->q[(s->head + s->len) % SYNC_QUEUE] = j;
	s->len++;
	pthread_cond_signal(&s->more);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void spool_sync__drain(struct spool_sync *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->len || s->busy)
		pthread_cond_wait(&s->room, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void spool_sync__counts(struct spool_sync *s, __u64 *dumps, __u64 *errors)
{
	pthread_mutex_lock(&s->lock);
	*dumps = s->dumps;
	*errors = s->errors;
	pthread_mutex_unlock(&s->lock);
}

__u64 spool_sync__finished(struct spool_sync *s)
{
	return __atomic_load_n(&s->finished, __ATOMIC_ACQUIRE);
}

void spool_sync__free(struct spool_sync *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->more);
	pthread_mutex_unlock(&s->lock);
	if (s->started)
		pthread_join(s->thread, NULL); /* after the queue is done */
	pthread_cond_destroy(&s->room);
	pthread_cond_destroy(&s->more);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
