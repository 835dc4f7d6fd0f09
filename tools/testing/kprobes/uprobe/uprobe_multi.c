// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_multi: BPF uprobe_multi links of thousands of probes at once (the
 * kernel attaches and detaches them as one batch), on a pad of one-byte
 * nops three pages long in this very program.
 *
 *   uprobe_multi [-n PROBES] [-r ROUNDS]      (defaults 6000 and 20)
 *
 * attach: a link on PROBES nops (every other one) plus one offset twice;
 *   exactly those bytes are int3 in our text, each call of the pad runs the
 *   program once per probe, and closing the link gives back the file's
 *   bytes and the file's pages (no private page left in the text mapping).
 * errors: a link whose last offset is past the end of the file
 *   (EINVAL), or whose middle one is an int3 (refused), leaves nothing.
 * semaphore: 64 probes counting in one USDT semaphore of our .data: 64
 *   while the link lives, 0 after.
 * concurrency: one thread calls the pad while two others create and close
 *   overlapping links ROUNDS times (some nops in both, some in one, some
 *   watched by perf alone) and a fourth forks children that call
 *   it; perf uprobe events on 8 of the nops, bound to the calling thread,
 *   count exactly its calls throughout; every child exits normally.
 *
 * One TAP line per check; exits 1 when one failed.  Built static.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define KP_TAP_WHAT "uprobe_multi"
#include "../lib/kp_user.h"
#include "../lib/kp_bpf.h"
#include "../lib/kp_uprobe.h"

#define PAD_BYTES	(3 * 4096)
#define STR(x)		#x
#define XSTR(x)		STR(x)

asm(".pushsection .text\n"
    ".p2align 12\n"
    ".globl nop_pad\n"
    "nop_pad:\n"
    ".rept " XSTR(PAD_BYTES) "\n"
    "nop\n"
    ".endr\n"
    "ret\n"
    ".globl bad_insn\n"
    "bad_insn:\n"
    "int3\n"
    ".popsection\n");

void nop_pad(void);
void bad_insn(void);

/* A USDT-style semaphore: the kernel counts armed probes in it. */
volatile short sema __attribute__((used, section(".data")));

static char exe[4096];
static unsigned long pad_off;
static int exe_fd;

/* How many bytes of the pad are int3 in our memory; -1 if unreadable. */
static int pad_int3s(void)
{
	static unsigned char buf[PAD_BYTES];
	int fd = open("/proc/self/mem", O_RDONLY), n = 0, i;

	if (fd < 0 || pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)nop_pad) !=
	    sizeof(buf)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < PAD_BYTES; i++)
		n += buf[i] == 0xcc;
	return n;
}

/* Is the pad in memory what the file has? */
static int pad_is_file(void)
{
	static unsigned char mem[PAD_BYTES], file[PAD_BYTES];
	int fd = open("/proc/self/mem", O_RDONLY), ok;

	ok = fd >= 0 &&
	     pread(fd, mem, sizeof(mem), (off_t)(uintptr_t)nop_pad) == sizeof(mem) &&
	     pread(exe_fd, file, sizeof(file), pad_off) == sizeof(file) &&
	     !memcmp(mem, file, sizeof(mem));
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The "Anonymous:" kB of our mapping holding the pad (private copies). */
static long text_anon_kb(void)
{
	unsigned long a = (unsigned long)nop_pad, start, end;
	char line[512];
	int in = 0;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = a >= start && a < end;
		else if (in && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb;
}

/* Lines of /sys/kernel/debug/uprobes/list for our file, -1 without it. */
static int listed_sites(void)
{
	char line[256], want[32];
	struct stat st;
	int n = 0;
	FILE *f = fopen("/sys/kernel/debug/uprobes/list", "r");

	if (!f || fstat(exe_fd, &st)) {
		if (f)
			fclose(f);
		return -1;
	}
	snprintf(want, sizeof(want), "%lu:", (unsigned long)st.st_ino);
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, want, strlen(want));
	fclose(f);
	return n;
}

static uint64_t *nop_offsets(int n, int step, int first)
{
	uint64_t *offs = calloc(n + 1, sizeof(*offs));
	int i;

	for (i = 0; offs && i < n; i++)
		offs[i] = pad_off + (first + (uint64_t)i * step) % PAD_BYTES;
	return offs;
}

static void attach_case(int prog_fd, int map_fd, int n)
{
	uint64_t *offs = nop_offsets(n, 2, 0), runs;
	int link, i, listed = listed_sites();

	result(text_anon_kb() == 0, "no private page in the text before (%ld kB)",
	       text_anon_kb());
	offs[n] = offs[0];		/* a second consumer at one address */
	link = uprobe_multi_link(prog_fd, exe, offs, NULL, n + 1, 0, getpid());
	result(link >= 0, "a link on %d nops and one of them twice (%s)", n,
	       link >= 0 ? "ok" : strerror(errno));
	if (link < 0)
		return;
	result(pad_int3s() == n, "%d int3 in the pad (want %d)", pad_int3s(), n);
	if (listed >= 0)
		result(listed_sites() == listed + n, "%d sites listed in debugfs (want %d)",
		       listed_sites() - listed, n);
	for (i = 0; i < 3; i++)
		nop_pad();
	runs = read_map(map_fd).count;
	result(runs == 3ULL * (n + 1), "%llu runs for 3 calls (want %llu)",
	       (unsigned long long)runs, 3ULL * (n + 1));
	close(link);
	result(pad_int3s() == 0 && pad_is_file(), "after close the pad is the file's again");
	result(text_anon_kb() == 0, "and the pages too: no private page left (%ld kB)",
	       text_anon_kb());
	if (listed >= 0)
		result(listed_sites() == listed, "no site of ours left in debugfs (%d)",
		       listed_sites() - listed);
	nop_pad();
	result(read_map(map_fd).count == runs, "no run after close");
	free(offs);
}

static void error_case(int prog_fd, int map_fd, int n)
{
	uint64_t *offs = nop_offsets(n, 2, 1);
	uint64_t before = read_map(map_fd).count;
	struct stat st;
	int link;

	fstat(exe_fd, &st);
	offs[n - 1] = st.st_size + 4096;
	link = uprobe_multi_link(prog_fd, exe, offs, NULL, n, 0, getpid());
	result(link < 0 && errno == EINVAL, "last offset past the end: EINVAL (%s)",
	       link < 0 ? strerror(errno) : "attached");
	if (link >= 0)
		close(link);
	result(pad_int3s() == 0, "and no int3 left (%d)", pad_int3s());

	offs[n - 1] = offs[0] + 2;
	offs[n / 2] = self_file_offset((void *)bad_insn);
	link = uprobe_multi_link(prog_fd, exe, offs, NULL, n, 0, getpid());
	result(link < 0, "an int3 in the middle: refused (%s)",
	       link < 0 ? strerror(errno) : "attached");
	if (link >= 0)
		close(link);
	result(pad_int3s() == 0 && pad_is_file(), "and the pad is the file's (%d int3)",
	       pad_int3s());
	nop_pad();
	result(read_map(map_fd).count == before, "nothing ran");
	free(offs);
}

static void semaphore_case(int prog_fd)
{
	uint64_t *offs = nop_offsets(64, 97, 5), refs[64];
	unsigned long sema_off = self_file_offset((void *)&sema);
	int link, i;

	for (i = 0; i < 64; i++)
		refs[i] = sema_off;
	link = uprobe_multi_link(prog_fd, exe, offs, refs, 64, 0, getpid());
	result(link >= 0 && sema == 64, "64 probes on one semaphore: it counts %d",
	       sema);
	if (link >= 0)
		close(link);
	result(sema == 0, "and 0 after close (%d)", sema);
	free(offs);
}

/* ---- concurrency ---- */

#define WATCHED	8

static volatile int stop;
static volatile long hit_calls;
static volatile pid_t hit_tid;
static int rounds = 20, churn_fails, fork_fails;
static int churn_prog;

static void *hitter(void *arg)
{
	hit_tid = syscall(SYS_gettid);
	while (!*(volatile int *)arg)
		;
	while (!stop) {
		nop_pad();
		hit_calls++;
	}
	return NULL;
}

/*
 * Create and close a link of 512 nops ROUNDS times, every @arg-th nop: 24
 * covers the three pages, 12 the first half of them twice as densely.
 */
static void *churner(void *arg)
{
	uint64_t *offs = nop_offsets(512, (int)(intptr_t)arg, 0);
	int i, link;

	for (i = 0; i < rounds; i++) {
		link = uprobe_multi_link(churn_prog, exe, offs, NULL, 512, 0,
					 getpid());
		if (link < 0) {
			__sync_fetch_and_add(&churn_fails, 1);
			continue;
		}
		usleep(1000);
		close(link);
	}
	free(offs);
	return NULL;
}

static void *forker(void *arg)
{
	int status;
	pid_t child;

	while (!stop) {
		child = fork();
		if (!child) {
			nop_pad();
			nop_pad();
			_exit(7);
		}
		if (child < 0 || waitpid(child, &status, 0) != child ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 7)
			__sync_fetch_and_add(&fork_fails, 1);
	}
	return NULL;
}

static void concurrency_case(int prog_fd, int type)
{
	pthread_t hit, churn[2], fork_thread;
	int fds[WATCHED], i, go = 0, ok = 1;
	uint64_t c;

	churn_prog = prog_fd;
	pthread_create(&hit, NULL, hitter, &go);
	while (!hit_tid)
		usleep(100);
	for (i = 0; i < WATCHED; i++) {
		/* Every 1536th byte: each page, its ends and neighbours. */
		fds[i] = open_uprobe_at(type, 0, exe, pad_off + i * 1536 +
					(i & 1), 0, hit_tid);
		if (fds[i] < 0 || ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0)) {
			result(0, "perf event %d on the calling thread (%s)", i,
			       strerror(errno));
			stop = go = 1;
			pthread_join(hit, NULL);
			return;
		}
	}
	go = 1;
	pthread_create(&churn[0], NULL, churner, (void *)24);
	pthread_create(&churn[1], NULL, churner, (void *)12);
	pthread_create(&fork_thread, NULL, forker, NULL);
	pthread_join(churn[0], NULL);
	pthread_join(churn[1], NULL);
	stop = 1;
	pthread_join(fork_thread, NULL);
	pthread_join(hit, NULL);
	for (i = 0; i < WATCHED; i++) {
		ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
		c = count_of(fds[i]);
		if (c != (uint64_t)hit_calls) {
			printf("# event %d counted %llu, %ld calls\n", i,
			       (unsigned long long)c, hit_calls);
			ok = 0;
		}
		close(fds[i]);
	}
	result(hit_calls > 0 && ok, "%d events on the calling thread count its %ld calls exactly while 2 x %d links come and go",
	       WATCHED, hit_calls, rounds);
	result(!churn_fails, "every link attached (%d failed)", churn_fails);
	result(!fork_fails, "every child forked meanwhile exited normally (%d did not)",
	       fork_fails);
	result(pad_int3s() == 0 && pad_is_file(), "then the pad is the file's (%d int3)",
	       pad_int3s());
}

int main(int argc, char **argv)
{
	int n = 6000, map_fd, prog_fd, type, i;
	ssize_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-r"))
			rounds = atoi(argv[i + 1]);
	}
	if (n < 2 || n > PAD_BYTES / 2)
		n = PAD_BYTES / 2;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 1;
	exe[len] = '\0';
	exe_fd = open(exe, O_RDONLY);
	pad_off = self_file_offset((void *)nop_pad);
	type = pmu_value("type", "");
	map_fd = create_map();
	prog_fd = map_fd < 0 ? -1 : load_prog(map_fd, UPROBE_MULTI_ATTACH);
	result(exe_fd >= 0 && pad_off && type > 0 && prog_fd >= 0,
	       "set up: pad at %s:%#lx, PMU type %d, program %d", exe, pad_off,
	       type, prog_fd);
	if (exe_fd < 0 || !pad_off || type <= 0 || prog_fd < 0)
		return 1;

	attach_case(prog_fd, map_fd, n);
	error_case(prog_fd, map_fd, n);
	semaphore_case(prog_fd);
	concurrency_case(prog_fd, type);
	return failures ? 1 : 0;
}
