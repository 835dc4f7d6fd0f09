// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_pmu: uprobes through the perf "uprobe" PMU and through a BPF
 * program, from user space, on a function of this very program.
 *
 *   uprobe_pmu [-n CALLS]      (default 50)
 *
 * The perf part opens events of the uprobe PMU (type from
 * /sys/bus/event_source/devices/uprobe/type, attr.uprobe_path (config1)
 * pointing at our executable, attr.probe_offset (config2) the file offset
 * of target_fn(), the retprobe bit from format/retprobe) bound to this
 * task, calls target_fn() CALLS times and checks the counts, entry and
 * return; a disabled event does not count; a missing file is -ENOENT and
 * a directory -EINVAL.  The BPF part loads a BPF_PROG_TYPE_KPROBE program
 * built here instruction by instruction (bpf() system call), attaches it
 * to such an event with PERF_EVENT_IOC_SET_BPF and checks what it saw:
 * CALLS runs, bpf_get_func_ip() at target_fn, and on the return probe the
 * function's return value in %rax.  The uprobe_multi part attaches the
 * program to target_fn() and target_fn2() at once with a BPF_LINK_CREATE
 * of type BPF_TRACE_UPROBE_MULTI filtered on our pid, entry and return:
 * every call of ours runs it, a forked child's calls do not.  The threads
 * part runs target_fn() on KP_THREADS threads at once, on every CPU: a
 * perf event on each thread (entry, return) and a uprobe_multi link
 * (filtered on our pid, so every thread of ours) must see each of their
 * calls, and every call must return the right value.  (Not one inherited
 * event: perf's counts of inherited events of threads are not exact when
 * the threads' contexts are swapped between them, stock or ours.)  Two
 * perf events on one trace event of uprobe_events, ours and a child's:
 * once ours is closed, our next call counts nowhere and takes the
 * breakpoint out of our text, and the child's calls still count.  A
 * return probe opened while a call waits inside the function does not
 * count that call's return (it never saw the call enter).  Last, the
 * uretprobe system call made from anywhere but the trampoline is SIGILL.
 *
 * One TAP line per check; exits 1 when one failed.  Built static.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define KP_TAP_WHAT "uprobe pmu"
#include "../lib/kp_user.h"
#include "../lib/kp_bpf.h"
#include "../lib/kp_uprobe.h"

__attribute__((noinline)) long target_fn(long x)
{
	asm volatile("" ::: "memory");
	return x * 2 + 1;
}

__attribute__((noinline)) long target_fn2(long x)
{
	asm volatile("" ::: "memory");
	return x - 1;
}

static char exe[4096];
static unsigned long fn_off;

static int open_uprobe(int type, int ret_bit, const char *path, int retprobe)
{
	return open_uprobe_at(type, ret_bit, path, fn_off, retprobe, 0);
}

static long calls(int n)
{
	long r = 0;
	int i;

	for (i = 0; i < n; i++)
		r = target_fn(i);
	return r;
}

/* ---- BPF ---- */

static void bpf_case(int type, int ret_bit, int retprobe, int n)
{
	const char *what = retprobe ? "return probe" : "entry probe";
	int map_fd = create_map(), prog_fd, fd;
	long last;
	struct seen s;

	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, 0);
	result(prog_fd >= 0, "bpf %s: the program loads", what);
	if (prog_fd < 0)
		return;
	fd = open_uprobe(type, ret_bit, exe, retprobe);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		result(0, "bpf %s: attached (%s)", what, strerror(errno));
		return;
	}
	last = calls(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	s = read_map(map_fd);
	result(s.count == (uint64_t)n, "bpf %s: %d runs for %d calls", what,
	       (int)s.count, n);
	result(s.func_ip == (uint64_t)(uintptr_t)target_fn,
	       "bpf %s: bpf_get_func_ip() is target_fn (%#llx, want %p)", what,
	       (unsigned long long)s.func_ip, (void *)target_fn);
	if (retprobe)
		result(s.ax == (uint64_t)last, "bpf %s: the return value register holds the return value (%lld, want %ld)",
		       what, (long long)s.ax, last);
	close(fd);
	close(prog_fd);
	close(map_fd);
}

static void multi_case(int retprobe, int n)
{
	const char *what = retprobe ? "uprobe_multi return" : "uprobe_multi entry";
	uint64_t offs[2] = { fn_off, self_file_offset((void *)target_fn2) };
	int map_fd = create_map(), prog_fd, link, i;
	struct seen s;
	pid_t child;

	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, UPROBE_MULTI_ATTACH);
	result(prog_fd >= 0, "%s: the program loads", what);
	if (prog_fd < 0)
		return;
	link = uprobe_multi_link(prog_fd, exe, offs, NULL, 2, retprobe, getpid());
	result(link >= 0, "%s: link on target_fn and target_fn2 (%s)", what,
	       link >= 0 ? "ok" : strerror(errno));
	if (link < 0)
		goto out;
	for (i = 0; i < n; i++)
		target_fn2(target_fn(i));
	child = fork();
	if (!child) {
		calls(n);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	s = read_map(map_fd);
	result(s.count == 2ULL * n, "%s: %d runs for %d calls of ours, none for the child's",
	       what, (int)s.count, 2 * n);
	close(link);
	calls(n);
	s = read_map(map_fd);
	result(s.count == 2ULL * n, "%s: no run after the link is closed (%d)",
	       what, (int)s.count);
out:
	close(prog_fd);
	close(map_fd);
}

/* ---- threads ---- */

#define KP_THREADS	4

struct kp_thread {
	pthread_t	tid;
	pid_t		pid;	/* its thread id */
	int		n;
	int		wrong;	/* calls that returned a wrong value */
};

/* Every thread has its id out; then all start calling at once. */
static pthread_barrier_t kp_ready, kp_start;

static void *thread_calls(void *arg)
{
	struct kp_thread *t = arg;
	int i;

	t->pid = syscall(SYS_gettid);
	pthread_barrier_wait(&kp_ready);
	pthread_barrier_wait(&kp_start);
	for (i = 0; i < t->n; i++)
		if (target_fn(i) != 2L * i + 1)
			t->wrong++;
	return NULL;
}

/*
 * KP_THREADS threads call target_fn() @n times each, all at once; @ready,
 * if not NULL, is called with the threads' ids before they start.
 * Return: the calls that returned a wrong value, or -1.
 */
static int thread_calls_all(int n, void (*ready)(struct kp_thread *t))
{
	struct kp_thread t[KP_THREADS] = {};
	int i, wrong = 0;

	pthread_barrier_init(&kp_ready, NULL, KP_THREADS + 1);
	pthread_barrier_init(&kp_start, NULL, KP_THREADS + 1);
	for (i = 0; i < KP_THREADS; i++) {
		t[i].n = n;
		if (pthread_create(&t[i].tid, NULL, thread_calls, &t[i]))
			return -1;
	}
	pthread_barrier_wait(&kp_ready);
	if (ready)
		ready(t);
	pthread_barrier_wait(&kp_start);
	for (i = 0; i < KP_THREADS; i++) {
		pthread_join(t[i].tid, NULL);
		wrong += t[i].wrong;
	}
	pthread_barrier_destroy(&kp_ready);
	pthread_barrier_destroy(&kp_start);
	return wrong;
}

static int kp_pmu_type, kp_ret_bit, kp_retprobe;
static int kp_thread_fd[KP_THREADS];

/* One counting event per thread, each bound to its thread. */
static void open_per_thread(struct kp_thread *t)
{
	int i;

	for (i = 0; i < KP_THREADS; i++) {
		kp_thread_fd[i] = open_uprobe_at(kp_pmu_type, kp_ret_bit, exe,
						 fn_off, kp_retprobe,
						 t[i].pid);
		if (kp_thread_fd[i] >= 0)
			ioctl(kp_thread_fd[i], PERF_EVENT_IOC_ENABLE, 0);
	}
}

static void threads_perf_case(int type, int ret_bit, int retprobe, int n)
{
	const char *what = retprobe ? "return probe" : "entry probe";
	uint64_t got = 0, c;
	int i, wrong, opened = 0;

	kp_pmu_type = type;
	kp_ret_bit = ret_bit;
	kp_retprobe = retprobe;
	wrong = thread_calls_all(n, open_per_thread);
	for (i = 0; i < KP_THREADS; i++) {
		if (kp_thread_fd[i] < 0)
			continue;
		opened++;
		c = count_of(kp_thread_fd[i]);
		got += c;
		close(kp_thread_fd[i]);
	}
	result(opened == KP_THREADS, "threads, perf %s: an event on each of %d threads opens",
	       what, KP_THREADS);
	result(wrong == 0, "threads, perf %s: every call of %d threads returned the right value (%d wrong)",
	       what, KP_THREADS, wrong);
	result(got == (uint64_t)KP_THREADS * n, "threads, perf %s: %d calls on %d threads counted (got %lld)",
	       what, KP_THREADS * n, KP_THREADS, (long long)got);
}

/* A uprobe_multi link filtered on our pid runs for every thread of ours. */
static void threads_multi_case(int retprobe, int n)
{
	const char *what = retprobe ? "uprobe_multi return" : "uprobe_multi entry";
	uint64_t off = fn_off;
	int map_fd = create_map(), prog_fd, link, wrong;
	struct seen s;

	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, UPROBE_MULTI_ATTACH);
	link = prog_fd < 0 ? -1 :
	       uprobe_multi_link(prog_fd, exe, &off, NULL, 1, retprobe, getpid());
	if (link < 0) {
		result(0, "threads, %s: link on target_fn (%s)", what,
		       strerror(errno));
		goto out;
	}
	wrong = thread_calls_all(n, NULL);
	s = read_map(map_fd);
	result(wrong == 0, "threads, %s: every call returned the right value (%d wrong)",
	       what, wrong);
	result(s.count == (uint64_t)KP_THREADS * n, "threads, %s: %d runs for %d calls on %d threads",
	       what, (int)s.count, KP_THREADS * n, KP_THREADS);
	close(link);
out:
	if (prog_fd >= 0)
		close(prog_fd);
	if (map_fd >= 0)
		close(map_fd);
}

/*
 * Probes removed while hit: KP_THREADS threads call target_fn() without a
 * pause while this thread attaches and closes a uprobe_multi link, and
 * opens and closes a perf event, @rounds times each.  Once close() of the
 * link returned, its program must never run again (the map's count stays
 * put while the threads keep calling), and every call returns right.
 */
static volatile int kp_stop;

static void *thread_spin(void *arg)
{
	struct kp_thread *t = arg;
	int i = 0;

	while (!kp_stop) {
		if (target_fn(i) != 2L * i + 1)
			t->wrong++;
		i = (i + 1) & 0xffff;
		t->n++;
	}
	return NULL;
}

static void closed_while_hit_case(int type, int ret_bit, int rounds)
{
	struct kp_thread t[KP_THREADS] = {};
	int map_fd = create_map(), prog_fd, i, late = 0, bad = 0, wrong = 0;
	uint64_t off = fn_off, calls_made = 0;
	struct seen a, b;

	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, UPROBE_MULTI_ATTACH);
	result(prog_fd >= 0, "removed while hit: the program loads");
	if (prog_fd < 0)
		return;
	kp_stop = 0;
	for (i = 0; i < KP_THREADS; i++)
		if (pthread_create(&t[i].tid, NULL, thread_spin, &t[i]))
			return;
	for (i = 0; i < rounds; i++) {
		int link = uprobe_multi_link(prog_fd, exe, &off, NULL, 1,
					     i & 1, getpid());
		int fd = open_uprobe(type, ret_bit, exe, i & 1);

		if (link < 0 || fd < 0) {
			bad++;
		} else {
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
			usleep(2000);
		}
		if (fd >= 0)
			close(fd);
		if (link >= 0)
			close(link);
		a = read_map(map_fd);
		usleep(5000);
		b = read_map(map_fd);
		late += b.count != a.count;
	}
	kp_stop = 1;
	for (i = 0; i < KP_THREADS; i++) {
		pthread_join(t[i].tid, NULL);
		wrong += t[i].wrong;
		calls_made += t[i].n;
	}
	result(bad == 0, "removed while hit: %d rounds of a link and a perf event attached while %d threads call (%d refused)",
	       rounds, KP_THREADS, bad);
	result(late == 0 && b.count > 0, "removed while hit: no program run after the link's close() returned (%d rounds with a late run, %lld runs)",
	       late, (long long)b.count);
	result(wrong == 0, "removed while hit: every one of %lld calls returned the right value (%d wrong)",
	       (long long)calls_made, wrong);
	close(prog_fd);
	close(map_fd);
}

/*
 * The case above, in a child: on s390 one of its threads may die of
 * SIGILL, and the later cases would go with it.  Upstream's s390
 * illegal_op() reads the opcode at the trap's address again after the
 * trap, with interrupts on: when the probe was removed meanwhile it finds
 * the original instruction, not the uprobe's, and sends SIGILL without
 * asking uprobes (stock 6.12 does it at the same place).  Elsewhere the
 * child's results are the case's, and its failures count here.
 */
static void closed_while_hit(int type, int ret_bit, int rounds)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		closed_while_hit_case(type, ret_bit, rounds);
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		result(0, "removed while hit: the case runs in a child (%s)",
		       strerror(errno));
		return;
	}
	if (WIFEXITED(status)) {
		failures += WEXITSTATUS(status) != 0;
		return;
	}
#ifdef __s390x__
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGILL) {
		printf("not ok - " KP_TAP_WHAT ": removed while hit: a calling thread died of SIGILL # TODO upstream's s390 illegal_op() looks at the opcode again after the trap, finds the instruction a removed probe put back and sends SIGILL, stock 6.12 too\n");
		return;
	}
#endif
	result(0, "removed while hit: the case's process ended by signal %d",
	       WIFSIGNALED(status) ? WTERMSIG(status) : -1);
}

/* ---- a return probe that comes while the function runs ---- */

static int kp_inside[2], kp_go[2];

/* Says it is inside, and returns only when told to. */
__attribute__((noinline)) long target_wait(long x)
{
	char c = 0;

	if (write(kp_inside[1], &c, 1) != 1 || read(kp_go[0], &c, 1) != 1)
		return -1;
	return x + 1;
}

/*
 * On 64-bit powerpc (ELFv2) target_wait() sets up its TOC pointer (it
 * calls into libc), so a direct call from this file enters at its local
 * entry, past the global entry its address names and the probes sit on:
 * there it is called through a pointer, which enters at the global entry
 * (as a call from another object would).
 */
#if defined(__powerpc64__) && defined(_CALL_ELF) && _CALL_ELF == 2
static long (*volatile target_wait_fn)(long) = target_wait;
#else
#define target_wait_fn target_wait
#endif

struct kp_late {
	int type, ret_bit, fd;
	unsigned long off;
	pid_t caller;
};

/* Once the caller is inside target_wait(): a return probe on it, then go. */
static void *thread_late(void *arg)
{
	struct kp_late *l = arg;
	char c;

	if (read(kp_inside[0], &c, 1) == 1) {
		l->fd = open_uprobe_at(l->type, l->ret_bit, exe, l->off, 1,
				       l->caller);
		if (l->fd >= 0)
			ioctl(l->fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	c = 0;
	if (write(kp_go[1], &c, 1) != 1)
		l->fd = -1;
	return NULL;
}

/*
 * A return probe opened while a call is inside the function does not see
 * that call return: it was not there when the call entered.  One opened
 * before the call does, and both see the next call.
 */
static void late_return_case(int type, int ret_bit)
{
	struct kp_late l = { type, ret_bit, -1,
			     self_file_offset((void *)target_wait), getpid() };
	uint64_t e1, l1;
	pthread_t th;
	char c = 0;
	int early;
	long r;

	if (pipe(kp_inside) || pipe(kp_go))
		return;
	early = open_uprobe_at(type, ret_bit, exe, l.off, 1, 0);
	result(early >= 0 && l.off, "late return probe: the first return probe opens");
	if (early < 0)
		return;
	ioctl(early, PERF_EVENT_IOC_ENABLE, 0);
	if (pthread_create(&th, NULL, thread_late, &l))
		return;
	r = target_wait_fn(41);
	pthread_join(th, NULL);
	result(r == 42 && l.fd >= 0, "late return probe: opened while the call waited inside (returned %ld)",
	       r);
	if (l.fd < 0)
		return;
	e1 = count_of(early);
	l1 = count_of(l.fd);
	result(e1 == 1 && l1 == 0, "late return probe: that call's return counted by the first probe only (%lld, %lld)",
	       (long long)e1, (long long)l1);
	/* The next call goes straight through: inside and go are written. */
	if (write(kp_go[1], &c, 1) != 1)
		return;
	r = target_wait_fn(1);
	if (read(kp_inside[0], &c, 1) != 1)
		r = -1;
	result(r == 2 && count_of(early) == 2 && count_of(l.fd) == 1,
	       "late return probe: the next call counted by both (%lld, %lld)",
	       (long long)count_of(early), (long long)count_of(l.fd));
	close(l.fd);
	close(early);
}

/*
 * One trace event of uprobe_events, two perf events on it: one counting in
 * this process, one in a child.  Closing ours takes this process out of
 * the event's filter while the child stays in (uprobe_apply(..., false)).
 * Our next call must not be counted anywhere and must leave no breakpoint
 * in our text; the child's calls must still all be counted.
 */
/* A line to uprobe_events (no stdio: it would seek there, and fail). */
static int uprobe_events_add(const char *line)
{
	int fd = open("/sys/kernel/tracing/uprobe_events", O_WRONLY | O_APPEND);
	ssize_t len = strlen(line), done = -1;

	if (fd >= 0) {
		done = write(fd, line, len);
		close(fd);
	}
	return done == len ? 0 : -1;
}

static int trace_event_id(void)
{
	char line[4200];
	FILE *f;
	int id = -1;

	snprintf(line, sizeof(line), "p:kptest/pmu_filter %s:%#lx\n", exe, fn_off);
	if (uprobe_events_add(line))
		return -1;
	f = fopen("/sys/kernel/tracing/events/kptest/pmu_filter/id", "r");
	if (f && fscanf(f, "%d", &id) != 1)
		id = -1;
	if (f)
		fclose(f);
	return id;
}

static int open_trace_event(int id, pid_t pid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.sample_period = 1;
	return syscall(SYS_perf_event_open, &attr, pid, -1, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

static void filtered_out_case(int n)
{
	int id = trace_event_id(), go[2], mine, theirs;
	volatile unsigned char *text = (volatile unsigned char *)target_fn;
	unsigned char orig = 0, armed, closed, after;
	uint64_t counted;
	pid_t child;
	char c = 0;
	FILE *f;

	f = fopen("/proc/self/exe", "r");
	if (f) {
		fseek(f, fn_off, SEEK_SET);
		orig = fgetc(f);
		fclose(f);
	}
	result(id >= 0 && f, "filtered out: a trace event on target_fn in uprobe_events (id %d)", id);
	if (id < 0 || !f || pipe(go))
		return;
	child = fork();
	if (!child) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		calls(n);
		_exit(0);
	}
	mine = open_trace_event(id, 0);
	theirs = open_trace_event(id, child);
	result(mine >= 0 && theirs >= 0, "filtered out: two perf events on one trace event, ours and a child's (%s)",
	       mine < 0 || theirs < 0 ? strerror(errno) : "open");
	if (mine >= 0) {
		armed = *text;
		calls(n);
		result(count_of(mine) == (uint64_t)n, "filtered out: %d calls of ours counted while our event is open (got %lld)",
		       n, (long long)count_of(mine));
		close(mine);
		/* The breakpoint may still be there: the next call takes it out. */
		closed = *text;
		calls(1);
		after = *text;
		result(armed != orig && after == orig, "filtered out: after our event closed, a call leaves our text as the file has it (%#x; armed %#x, after the close %#x, file %#x)",
		       after, armed, closed, orig);
	}
	if (write(go[1], &c, 1) != 1)
		return;
	waitpid(child, NULL, 0);
	if (theirs >= 0) {
		counted = count_of(theirs);
		result(counted == (uint64_t)n, "filtered out: the child's %d calls counted, and only those (got %lld)",
		       n, (long long)counted);
		close(theirs);
	}
	close(go[0]);
	close(go[1]);
	uprobe_events_add("-:kptest/pmu_filter\n");
}

#ifdef __x86_64__
/* sys_uretprobe (335, x86_64 only) belongs to the trampoline alone. */
static void uretprobe_syscall_case(void)
{
	int status = 0;
	pid_t child = fork();

	if (!child) {
		syscall(335);
		_exit(0);
	}
	waitpid(child, &status, 0);
	result(WIFSIGNALED(status) && WTERMSIG(status) == SIGILL,
	       "the uretprobe system call outside the trampoline: SIGILL (status %#x)",
	       status);
}
#else
static void uretprobe_syscall_case(void) { }
#endif

/*
 * Upstream's bpf_uprobe_multi_link_attach() refuses every link where a
 * pointer is not 64 bits (EOPNOTSUPP), stock and ours: on 32-bit the
 * cases with uprobe_multi links are one skip, when a link is refused so.
 */
static int multi_links(void)
{
	int map_fd, prog_fd, link, err;
	uint64_t off = fn_off;

	if (sizeof(void *) == sizeof(uint64_t))
		return 1;
	map_fd = create_map();
	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, UPROBE_MULTI_ATTACH);
	if (prog_fd < 0) {
		if (map_fd >= 0)
			close(map_fd);
		return 1;	/* multi_case() says why */
	}
	link = uprobe_multi_link(prog_fd, exe, &off, NULL, 1, 0, getpid());
	err = errno;
	if (link >= 0)
		close(link);
	close(prog_fd);
	close(map_fd);
	if (link < 0 && err == EOPNOTSUPP) {
		printf("ok - " KP_TAP_WHAT ": uprobe_multi links # SKIP refused on 32-bit (EOPNOTSUPP), as upstream refuses them where pointers are 32 bits\n");
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	int n = 50, type, ret_bit, fd, i, multi;
	ssize_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "-n"))
		n = atoi(argv[2]);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 1;
	exe[len] = '\0';
	fn_off = self_file_offset((void *)target_fn);
	type = pmu_value("type", "");
	ret_bit = pmu_value("format/retprobe", "config:");
	result(type > 0 && ret_bit >= 0 && fn_off, "PMU type %d, retprobe bit %d, target_fn at %s:%#lx",
	       type, ret_bit, exe, fn_off);
	if (type <= 0 || ret_bit < 0 || !fn_off)
		return 1;

	for (i = 0; i < 2; i++) {
		const char *what = i ? "return probe" : "entry probe";

		fd = open_uprobe(type, ret_bit, exe, i);
		if (fd < 0) {
			result(0, "perf %s opens (%s)", what, strerror(errno));
			continue;
		}
		calls(n);
		result(count_of(fd) == 0, "perf %s: nothing counted while disabled", what);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		calls(n);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		result(count_of(fd) == (uint64_t)n, "perf %s: %d calls counted (got %lld)",
		       what, n, (long long)count_of(fd));
		close(fd);
	}

	fd = open_uprobe(type, ret_bit, "/nonexistent/file", 0);
	result(fd < 0 && errno == ENOENT, "perf: a missing file is refused with ENOENT (%s)",
	       fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
	fd = open_uprobe(type, ret_bit, "/", 0);
	result(fd < 0 && errno == EINVAL, "perf: a directory is refused with EINVAL (%s)",
	       fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);

	bpf_case(type, ret_bit, 0, n);
	bpf_case(type, ret_bit, 1, n);
	multi = multi_links();
	if (multi) {
		multi_case(0, n);
		multi_case(1, n);
	}
	for (i = 0; i < 2; i++) {
		threads_perf_case(type, ret_bit, i, n);
		if (multi)
			threads_multi_case(i, n);
	}
	if (multi)
		closed_while_hit(type, ret_bit, 20);
	filtered_out_case(n);
	late_return_case(type, ret_bit);

	uretprobe_syscall_case();
	return failures ? 1 : 0;
}
