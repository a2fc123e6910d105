/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - the example the README's Quick start runs: a small
 * producer/consumer pipeline with named threads. A producer makes work items,
 * two workers take them from a bounded queue and process each one with
 * nested, recursive, short and long scopes, and a logger drains results.
 * Annotations (rec(3)): the depth of each queue is a value track, each
 * process() activation carries its item as an argument, and each item is a
 * flow from the producer's "produce" scope to the worker's "process" scope.
 * Run it, then: tracetool summary trace.zst
 */
#include <pthread.h>
#include <rec.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NR_ITEMS 20000
#define QUEUE_SLOTS 64
#define NR_WORKERS 2

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	int items[QUEUE_SLOTS];
	unsigned head, tail;
	int closed;
};

static struct queue work = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			     PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, 0 };
static struct queue results = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
				PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, 0 };

static void queue_push(struct queue *q, int v)
{
	TRACE_SCOPE();
	pthread_mutex_lock(&q->lock);
	while (q->tail - q->head == QUEUE_SLOTS)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->items[q->tail++ % QUEUE_SLOTS] = v;
	if (q == &work)
		TRACE_VALUE("work_queue", q->tail - q->head);
	else
		TRACE_VALUE("results_queue", q->tail - q->head);
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* Returns 0 when the queue is closed and empty. */
static int queue_pop(struct queue *q, int *v)
{
	TRACE_SCOPE();
	int ok = 0;

	pthread_mutex_lock(&q->lock);
	while (q->tail == q->head && !q->closed)
		pthread_cond_wait(&q->not_empty, &q->lock);
	if (q->tail != q->head) {
		*v = q->items[q->head++ % QUEUE_SLOTS];
		pthread_cond_signal(&q->not_full);
		ok = 1;
	}
	pthread_mutex_unlock(&q->lock);
	return ok;
}

static void queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = 1;
	pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* Recursive: every level is its own activation. */
static unsigned fib(unsigned n)
{
	TRACE_SCOPE();
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* A short scope: a handful of arithmetic operations. */
static unsigned checksum(int v)
{
	TRACE_SCOPE();
	unsigned h = (unsigned)v * 2654435761u;
	return h ^ (h >> 16);
}

/* A long scope: sleeps, as if waiting for a device. */
static void slow_io(void)
{
	TRACE_SCOPE();
	struct timespec ts = { 0, 200 * 1000 };
	nanosleep(&ts, NULL);
}

static int process(int item)
{
	TRACE_SCOPE();
	TRACE_ARG("item", item);
	TRACE_FLOW_END("item", (uint64_t)item);
	unsigned r = checksum(item);

	{
		TRACE_SCOPE_NAMED("compute");
		r += fib(8 + (unsigned)item % 4);
	}
	if (item % 100 == 0)
		slow_io();
	return (int)(r & 0x7fffffff);
}

static void *producer(void *arg)
{
	(void)arg;
	rec_thread_name("producer");
	for (int i = 0; i < NR_ITEMS; i++) {
		TRACE_SCOPE_NAMED("produce");
		TRACE_FLOW_BEGIN("item", (uint64_t)i);
		queue_push(&work, i);
	}
	queue_close(&work);
	return NULL;
}

static void *worker(void *arg)
{
	char name[32];
	int item;

	snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
	rec_thread_name(name);
	while (queue_pop(&work, &item))
		queue_push(&results, process(item));
	return NULL;
}

static void *logger(void *arg)
{
	long *sum = arg;
	int v;

	rec_thread_name("logger");
	while (queue_pop(&results, &v))
		*sum += v;
	return NULL;
}

int main(void)
{
	pthread_t prod, workers[NR_WORKERS], log;
	long sum = 0;

	rec_thread_name("main");
	TRACE_SCOPE();
	pthread_create(&log, NULL, logger, &sum);
	pthread_create(&prod, NULL, producer, NULL);
	for (long i = 0; i < NR_WORKERS; i++)
		pthread_create(&workers[i], NULL, worker, (void *)(i + 1));
	pthread_join(prod, NULL);
	for (int i = 0; i < NR_WORKERS; i++)
		pthread_join(workers[i], NULL);
	queue_close(&results);
	pthread_join(log, NULL);
	printf("processed %d items, checksum %ld\n", NR_ITEMS, sum);
	return 0;
}
