// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for the split of a call's time into on CPU, waiting for a
 * CPU and blocked (tests/e2e/test_split.py):
 *   split cpu N             N x (read 8 MiB of /dev/zero, getrandom 1 MiB)
 *   split shared N [CPU]    the same, pinned to CPU (default: the last) with
 *                           a thread spinning there ("split-spin")
 *   split pipe N [MS]       N 1-byte reads of a pipe a thread ("split-writer")
 *                           writes a byte to every MS ms (default 10)
 *   split futex N [MS]      N pthread_mutex_lock()s of a mutex another thread
 *                           ("split-holder") holds MS ms (default 5) at a time
 *   split io FILE N [KIB]   N O_DIRECT preads of KIB KiB (default 4096) of
 *                           FILE, round the file, pinned to the last CPU
 *   split quota SECS        read 8 MiB of /dev/zero again and again for SECS
 *                           seconds, to run in a cgroup with a CPU quota
 *
 * The measured calls are made by one thread, "split-work", that makes no
 * other call of the same syscall. It reads its own clocks around them (a
 * window): wall (CLOCK_MONOTONIC, vDSO: no syscall), on CPU
 * (CLOCK_THREAD_CPUTIME_ID, a clock_gettime call) and the run-queue delay
 * (second field of /proc/thread-self/schedstat, a preadv call): the run
 * delay is added when the thread is switched in, so it is whole when the
 * thread reads it itself. Blocked is the rest: wall - cpu - runq. A window
 * holds a loop of the calls and nothing else (futex: each lock and unlock
 * has its own window, as the loop also waits on eventfds).
 *
 * A window also holds each call's way back to user space after it
 * returns, where the kernel may switch the thread out after the sys_exit
 * tracepoint has fired (preemption on return to user space, and from 6.18
 * CPU quota throttling): waiting that a profiler timing calls from
 * sys_enter to sys_exit does not see. The tests take it out with the
 * profiler's own time of the calls (tests/e2e/test_split.py).
 *
 * Output, one fact a line, "key value...":
 *   pid PID
 *   thread ROLE TID COMM          (work, spin, writer, holder)
 *   truth SYSCALL calls=N windows=M wall_ns=W cpu_ns=C runq_ns=R blocked_ns=B
 *                                 (the M windows holding the N calls)
 *   overhead windows=M wall_ns=W cpu_ns=C runq_ns=R
 *                                 (M windows around no call: the clock
 *                                 reading's own share of a window)
 *   spin cpu_ns=C                 (shared: the spinner's time on CPU, all
 *                                 of it taken while the worker waited)
 *   loop start_ns=S end_ns=E wall_ns=W cpu_ns=C runq_ns=R
 *                                 (the whole measured loop, calls and what is
 *                                 between them; S and E on CLOCK_MONOTONIC)
 *   steal steal_ns=S grain_ns=G   (cpu, shared: the hypervisor's steal over
 *                                 the loop, all CPUs, from /proc/stat, in
 *                                 its units of G ns)
 * Each mode checks its own claim at the end (e.g. pipe: the reads were
 * blocked for at least 90% of their time) and exits 3 with a message on
 * stderr when it does not hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define ZERO_SIZE (8UL << 20)
#define RANDOM_SIZE (1UL << 20)

struct figures {
	long calls, windows;
	uint64_t wall, cpu, runq;
};

struct snap {
	uint64_t wall, cpu, runq;
};

static const char *mode;
static long n_calls, interval_ms, io_kib;
static double seconds;
static const char *io_file;
static int pin_cpu = -1;
static int schedstat_fd = -1;
static atomic_int stop_spin;
static atomic_int spin_started, work_ready;
static int pipe_fds[2];
static int efd_locked, efd_done;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int exit_code;

static void die(const char *what)
{
	fprintf(stderr, "split: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		die("clock_gettime");
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t run_delay(void)
{
	char buf[128];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	unsigned long long on, delay;
	/* preadv: a syscall no mode measures (io's calls are pread64s) */
	ssize_t n = preadv(schedstat_fd, &iov, 1, 0);

	if (n <= 0)
		die("preadv schedstat");
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on, &delay) != 2) {
		fprintf(stderr, "split: schedstat %s\n", buf);
		exit(1);
	}
	return delay;
}

/* The hypervisor's steal so far, all CPUs, in clock ticks (/proc/stat's
 * 8th field); 0 without /proc/stat. */
static uint64_t steal_ticks(int stat_fd)
{
	char buf[256];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	unsigned long long steal;
	ssize_t n = stat_fd < 0 ? -1 : preadv(stat_fd, &iov, 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "cpu %*u %*u %*u %*u %*u %*u %*u %llu", &steal) != 1)
		return 0;
	return steal;
}

/*
 * The thread's clocks at one instant: the run-queue delay is read on both
 * sides of the clocks, again until it did not change, so no wait fell
 * between the readings (the delay grows when the thread is switched back
 * in, so it is whole while the thread runs).
 */
static void snap(struct snap *s)
{
	uint64_t runq = run_delay();

	do {
		s->runq = runq;
		s->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		s->wall = clock_ns(CLOCK_MONOTONIC);
		runq = run_delay();
	} while (runq != s->runq);
}

static void window_close(const struct snap *s, struct figures *f, long calls)
{
	struct snap now;

	snap(&now);
	f->calls += calls;
	f->windows++;
	f->wall += now.wall - s->wall;
	f->cpu += now.cpu - s->cpu;
	f->runq += now.runq - s->runq;
}

static uint64_t blocked(const struct figures *f)
{
	return f->wall > f->cpu + f->runq ? f->wall - f->cpu - f->runq : 0;
}

/* Off CPU: blocked, or woken and waiting for a CPU (on a busy machine a
 * sleeper's wake-ups wait too: the claims about sleepers count both).
 */
static uint64_t off_cpu(const struct figures *f)
{
	return f->wall > f->cpu ? f->wall - f->cpu : 0;
}

static void print_truth(const char *name, const struct figures *f)
{
	printf("truth %s calls=%ld windows=%ld wall_ns=%llu cpu_ns=%llu "
	       "runq_ns=%llu blocked_ns=%llu\n",
	       name, f->calls, f->windows, (unsigned long long)f->wall,
	       (unsigned long long)f->cpu, (unsigned long long)f->runq,
	       (unsigned long long)blocked(f));
}

static struct snap loop_start;
static struct figures empty;

/* A window around no call: what the clock reading itself puts in one. */
static void empty_window(void)
{
	struct snap s;

	snap(&s);
	window_close(&s, &empty, 0);
}

/*
 * The measured loop's bounds and figures, calls and what is between them.
 * A short sleep before it and after it (in work()), so that a scheduler
 * trace (perf sched) has the thread switched in just before the loop and
 * out just after it.
 */
static void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

static void loop_begin(void)
{
	nap();
	snap(&loop_start);
}

static void loop_end(struct figures *loop)
{
	struct snap end;

	snap(&end);
	*loop = (struct figures){ 0, 1, end.wall - loop_start.wall,
				  end.cpu - loop_start.cpu,
				  end.runq - loop_start.runq };
	printf("loop start_ns=%llu end_ns=%llu wall_ns=%llu cpu_ns=%llu "
	       "runq_ns=%llu\n",
	       (unsigned long long)loop_start.wall,
	       (unsigned long long)end.wall, (unsigned long long)loop->wall,
	       (unsigned long long)loop->cpu, (unsigned long long)loop->runq);
}

/* A claim about f that must hold: share of the wall time, in percent. */
static void claim(const char *what, uint64_t part, const struct figures *f,
		  double min_pct, double max_pct)
{
	double pct = f->wall ? 100.0 * (double)part / (double)f->wall : 0;

	if (pct < min_pct || pct > max_pct) {
		fprintf(stderr,
			"split %s: claim failed: %s is %.1f%% of the calls' "
			"time, expected %.0f%% to %.0f%%\n",
			mode, what, pct, min_pct, max_pct);
		exit_code = 3;
	}
}

static void name_thread(const char *role, const char *comm)
{
	prctl(PR_SET_NAME, comm);
	printf("thread %s %ld %s\n", role, (long)syscall(SYS_gettid), comm);
	fflush(stdout);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void *spinner(void *arg)
{
	uint64_t cpu;

	(void)arg;
	name_thread("spin", "split-spin");
	pin(pin_cpu);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	atomic_store(&spin_started, 1);
	while (!atomic_load_explicit(&stop_spin, memory_order_relaxed))
		;
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	printf("spin cpu_ns=%llu\n", (unsigned long long)cpu);
	fflush(stdout);
	return NULL;
}

static void *writer(void *arg)
{
	struct timespec next;

	(void)arg;
	name_thread("writer", "split-writer");
	while (!atomic_load(&work_ready))
		usleep(100);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < n_calls; i++) {
		next.tv_nsec += interval_ms * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
		if (write(pipe_fds[1], "x", 1) != 1)
			die("write pipe");
	}
	return NULL;
}

static void efd_signal(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		die("write eventfd");
}

static void efd_wait(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		die("read eventfd");
}

static void *holder(void *arg)
{
	struct timespec hold = { 0, interval_ms * 1000000L };

	(void)arg;
	name_thread("holder", "split-holder");
	for (long i = 0; i < n_calls; i++) {
		pthread_mutex_lock(&mutex);
		efd_signal(efd_locked);
		nanosleep(&hold, NULL);
		pthread_mutex_unlock(&mutex);
		efd_wait(efd_done);
	}
	return NULL;
}

static void spin_until(uint64_t wall_ns)
{
	while (clock_ns(CLOCK_MONOTONIC) < wall_ns)
		;
}

/* part less what is allowed for, or 0 */
static uint64_t beyond(uint64_t part, uint64_t allowed)
{
	return part > allowed ? part - allowed : 0;
}

static void work_cpu(void)
{
	struct figures rd = { 0 }, rnd = { 0 }, loop;
	struct snap s;
	char *buf = malloc(ZERO_SIZE);
	int fd = open("/dev/zero", O_RDONLY);
	int stat_fd = open("/proc/stat", O_RDONLY);
	uint64_t grain = 1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK);
	uint64_t steal0, stolen;

	if (!buf || fd < 0)
		die("/dev/zero");
	if (stat_fd < 0)
		grain = 0;
	memset(buf, 1, ZERO_SIZE); /* fault it in before the calls */
	if (pin_cpu >= 0) {
		pin(pin_cpu);
		while (!atomic_load(&spin_started))
			;
	}
	steal0 = steal_ticks(stat_fd);
	loop_begin();
	snap(&s);
	for (long i = 0; i < n_calls; i++)
		if (read(fd, buf, ZERO_SIZE) != (ssize_t)ZERO_SIZE)
			die("read /dev/zero");
	window_close(&s, &rd, n_calls);
	snap(&s);
	for (long i = 0; i < n_calls; i++)
		if (getrandom(buf, RANDOM_SIZE, 0) != (ssize_t)RANDOM_SIZE)
			die("getrandom");
	window_close(&s, &rnd, n_calls);
	loop_end(&loop);
	atomic_store(&stop_spin, 1);
	print_truth("read", &rd);
	print_truth("getrandom", &rnd);
	/* Nothing in these calls sleeps: what is not on CPU or waiting for
	 * it is the hypervisor's steal (schedstat's time on CPU leaves it
	 * out), and interrupts, a few percent. The steal is /proc/stat's,
	 * all CPUs, counted at each CPU's tick: read again once the CPU
	 * has ticked past the loop's end (Debian's HZ is 250; 10 ms of
	 * spinning, no call), and allowed one of its grains on top. Under
	 * a host's own I/O it took 48 ms of 844 ms of getrandom calls
	 * here (110 ms stolen over the loop, all CPUs). */
	spin_until(clock_ns(CLOCK_MONOTONIC) + 10000000);
	stolen = (steal_ticks(stat_fd) - steal0) * grain;
	if (stat_fd >= 0)
		printf("steal steal_ns=%llu grain_ns=%llu\n",
		       (unsigned long long)stolen, (unsigned long long)grain);
	claim("read's blocked time beyond the steal",
	      beyond(blocked(&rd), stolen + grain), &rd, 0, 5);
	claim("getrandom's blocked time beyond the steal",
	      beyond(blocked(&rnd), stolen + grain), &rnd, 0, 5);
	if (pin_cpu >= 0) {
		claim("read's run-queue wait", rd.runq, &rd, 25, 100);
		claim("getrandom's run-queue wait", rnd.runq, &rnd, 25, 100);
	}
}

static void work_pipe(void)
{
	struct figures f = { 0 }, loop;
	struct snap s;
	char c;

	loop_begin();
	snap(&s);
	for (long i = 0; i < n_calls; i++)
		if (read(pipe_fds[0], &c, 1) != 1)
			die("read pipe");
	window_close(&s, &f, n_calls);
	loop_end(&loop);
	print_truth("read", &f);
	claim("read's time off CPU", off_cpu(&f), &f, 90, 100);
}

static void work_futex(void)
{
	struct figures f = { 0 }, loop;
	struct snap s;

	loop_begin();
	for (long i = 0; i < n_calls; i++) {
		efd_wait(efd_locked);
		snap(&s);
		pthread_mutex_lock(&mutex);
		window_close(&s, &f, 1);
		snap(&s);
		pthread_mutex_unlock(&mutex);
		window_close(&s, &f, 1);
		empty_window();
		efd_signal(efd_done);
	}
	loop_end(&loop);
	/* two windows a round: the lock's futex wait, the unlock's wake */
	print_truth("futex", &f);
	claim("the mutex calls' time off CPU", off_cpu(&f), &f, 80, 100);
}

static void work_io(void)
{
	struct figures f = { 0 }, loop;
	struct snap s;
	size_t blk = (size_t)io_kib << 10;
	void *buf;
	off_t size, off = 0;
	int fd = open(io_file, O_RDONLY | O_DIRECT);

	if (fd < 0)
		die(io_file);
	size = lseek(fd, 0, SEEK_END);
	if (size < (off_t)blk) {
		fprintf(stderr, "split: %s is smaller than %zu bytes\n",
			io_file, blk);
		exit(1);
	}
	if (posix_memalign(&buf, 4096, blk))
		die("posix_memalign");
	/* on one CPU: the cgroup's io pressure (PSI) is then this thread's
	 * time in I/O wait, not an average over CPUs */
	pin(pin_cpu);
	loop_begin();
	snap(&s);
	for (long i = 0; i < n_calls; i++) {
		if (off + (off_t)blk > size)
			off = 0;
		if (pread(fd, buf, blk, off) != (ssize_t)blk)
			die("pread");
		off += (off_t)blk;
	}
	window_close(&s, &f, n_calls);
	loop_end(&loop);
	print_truth("pread64", &f);
	claim("pread64's time off CPU", off_cpu(&f), &f, 30, 100);
}

static void work_quota(void)
{
	struct figures rd = { 0 }, loop;
	struct snap s;
	char *buf = malloc(ZERO_SIZE);
	int fd = open("/dev/zero", O_RDONLY);
	uint64_t end;
	long n = 0;

	if (!buf || fd < 0)
		die("/dev/zero");
	memset(buf, 1, ZERO_SIZE);
	loop_begin();
	snap(&s);
	end = s.wall + (uint64_t)(seconds * 1e9);
	do {
		if (read(fd, buf, ZERO_SIZE) != (ssize_t)ZERO_SIZE)
			die("read /dev/zero");
		n++;
	} while (clock_ns(CLOCK_MONOTONIC) < end);
	window_close(&s, &rd, n);
	loop_end(&loop);
	print_truth("read", &rd);
	/* a quota of a tenth of a CPU holds the loop back most of the time */
	claim("the loop's run-queue wait (is there a quota?)", loop.runq, &loop,
	      50, 100);
}

static void *work(void *arg)
{
	(void)arg;
	name_thread("work", "split-work");
	schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY);
	if (schedstat_fd < 0)
		die("/proc/thread-self/schedstat");
	atomic_store(&work_ready, 1);
	if (!strcmp(mode, "cpu") || !strcmp(mode, "shared"))
		work_cpu();
	else if (!strcmp(mode, "pipe"))
		work_pipe();
	else if (!strcmp(mode, "futex"))
		work_futex();
	else if (!strcmp(mode, "io"))
		work_io();
	else
		work_quota();
	for (int i = 0; i < 20; i++)
		empty_window();
	printf("overhead windows=%ld wall_ns=%llu cpu_ns=%llu runq_ns=%llu\n",
	       empty.windows, (unsigned long long)empty.wall,
	       (unsigned long long)empty.cpu, (unsigned long long)empty.runq);
	nap();
	fflush(stdout);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: split cpu N | shared N [CPU] | pipe N [MS] | "
			"futex N [MS] | io FILE N [KIB] | quota SECS\n");
	exit(2);
}

static long arg_long(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	pthread_t helper, worker;
	void *(*helper_fn)(void *) = NULL;

	if (argc < 3)
		usage();
	mode = argv[1];
	if (!strcmp(mode, "cpu") && argc == 3) {
		n_calls = arg_long(argv[2]);
	} else if (!strcmp(mode, "shared") && argc <= 4) {
		n_calls = arg_long(argv[2]);
		pin_cpu = argc == 4 ? (int)arg_long(argv[3]) :
				      (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
		helper_fn = spinner;
	} else if (!strcmp(mode, "pipe") && argc <= 4) {
		n_calls = arg_long(argv[2]);
		interval_ms = argc == 4 ? arg_long(argv[3]) : 10;
		if (pipe(pipe_fds))
			die("pipe");
		helper_fn = writer;
	} else if (!strcmp(mode, "futex") && argc <= 4) {
		n_calls = arg_long(argv[2]);
		interval_ms = argc == 4 ? arg_long(argv[3]) : 5;
		efd_locked = eventfd(0, 0);
		efd_done = eventfd(0, 0);
		if (efd_locked < 0 || efd_done < 0)
			die("eventfd");
		helper_fn = holder;
	} else if (!strcmp(mode, "io") && (argc == 4 || argc == 5)) {
		io_file = argv[2];
		n_calls = arg_long(argv[3]);
		io_kib = argc == 5 ? arg_long(argv[4]) : 4096;
		pin_cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
		if (!io_kib || io_kib % 4)
			usage();
	} else if (!strcmp(mode, "quota") && argc == 3) {
		seconds = atof(argv[2]);
		if (seconds <= 0)
			usage();
	} else {
		usage();
	}
	printf("pid %ld\n", (long)getpid());
	fflush(stdout);
	if (helper_fn && pthread_create(&helper, NULL, helper_fn, NULL))
		die("pthread_create");
	if (pthread_create(&worker, NULL, work, NULL))
		die("pthread_create");
	pthread_join(worker, NULL);
	if (helper_fn)
		pthread_join(helper, NULL);
	return exit_code;
}
