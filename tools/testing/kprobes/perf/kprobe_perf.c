// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_perf: the perf kprobe PMU on a kernel function, from user space.
 *
 *   kprobe_perf [-n FORKS] [SYMBOL]      (defaults: 20, kernel_clone)
 *
 * Opens perf events of the "kprobe" PMU (type from
 * /sys/bus/event_source/devices/kprobe/type; attr.kprobe_func (config1)
 * points at the symbol name and attr.probe_offset (config2) is the offset,
 * or kprobe_func is 0 and attr.kprobe_addr (config2 too) is the address;
 * the retprobe bit of attr.config is the one format/retprobe names) bound
 * to this task, forks FORKS children (each fork is one kernel_clone() in
 * this task) and checks the counts: an entry probe by name, the same by
 * address (attr.kprobe_addr), and a return probe.  Also: the probe shows in
 * the kprobes list while the event is open and leaves it on close, a
 * disabled event does not count, an unknown symbol is refused.
 *
 * Prints one TAP-ish line per check ("ok - ..." / "not ok - ...", other
 * lines start with "#") for the guest's init; exits 1 when a check failed.
 * Built static on the host (gcc -static), so the guest needs no libc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define KP_TAP_WHAT "perf kprobe"
#include "../lib/kp_user.h"

#define PMU_DIR "/sys/bus/event_source/devices/kprobe"
#define KP_LIST "/sys/kernel/debug/kprobes/list"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			    int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* A kprobe PMU event on this task, created disabled. */
static int open_kprobe(int type, unsigned long long config, const char *sym,
		       unsigned long long addr, unsigned long long offset)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	if (sym) {
		attr.kprobe_func = (uint64_t)(uintptr_t)sym;	/* config1 */
		attr.probe_offset = offset;			/* config2 */
	} else {
		/* config1 == 0: config2 is the address (a union with the offset). */
		attr.kprobe_addr = addr + offset;		/* config2 */
	}
	attr.disabled = 1;
	attr.sample_period = 1;
	return perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void forks(int n)
{
	int i, status;
	pid_t pid;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, &status, 0);
		else
			perror("# fork");
	}
}

static long long count_of(int fd)
{
	unsigned long long v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return (long long)v;
}

/* The address of the last probe list_lines() counted. */
static unsigned long long listed_addr;

/*
 * Lines of the kprobes list on SYM+0x... with type T ('k' or 'r'): the
 * function's entry is +0x0, or +0x4 after an endbr64 (IBT).
 */
static int list_lines(const char *sym, char t)
{
	char line[512], want[256], addr[64], type[8], where[256];
	FILE *f = fopen(KP_LIST, "r");
	int n = 0;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%s+0x", sym);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %7s %255s", addr, type, where) == 3 &&
		    type[0] == t && !strncmp(where, want, strlen(want))) {
			listed_addr = strtoull(addr, NULL, 16);
			n++;
		}
	}
	fclose(f);
	return n;
}

/*
 * One counting round: open, check the list, count N forks while enabled
 * and none while disabled, close, check the list again.
 */
static void round_trip(const char *what, int type, unsigned long long config,
		       const char *sym, unsigned long long addr, char ltype, int n)
{
	long long c1, c2;
	int fd, l;

	fd = open_kprobe(type, config, addr ? NULL : sym, addr, 0);
	if (fd < 0) {
		result(0, "%s: perf_event_open (%s)", what, strerror(errno));
		return;
	}
	result(1, "%s: perf_event_open", what);

	l = list_lines(sym, ltype);
	if (l < 0)
		printf("# %s: no %s to look at\n", what, KP_LIST);
	else
		result(l >= 1, "%s: the kprobes list shows a probe of type %c on %s while open (%d lines)",
		       what, ltype, sym, l);

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		result(0, "%s: PERF_EVENT_IOC_ENABLE (%s)", what, strerror(errno));
		close(fd);
		return;
	}
	forks(n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	c1 = count_of(fd);
	result(c1 >= n, "%s: count %lld >= forks %d", what, c1, n);
	/* Bound to this task: no one else's fork counts. */
	result(c1 == n, "%s: count %lld == forks %d (event bound to this task)", what, c1, n);

	forks(n);
	c2 = count_of(fd);
	result(c2 == c1, "%s: disabled, %d more forks leave the count at %lld (now %lld)",
	       what, n, c1, c2);
	close(fd);

	l = list_lines(sym, ltype);
	if (l >= 0)
		result(l == 0, "%s: the probe of type %c on %s left the kprobes list on close (%d lines)",
		       what, ltype, sym, l);
}

int main(int argc, char **argv)
{
	const char *sym = "kernel_clone";
	char buf[256], what[320];
	int n = 20, type, retbit = -1, opt, fd;
	unsigned long long addr;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else {
			fprintf(stderr, "usage: %s [-n FORKS] [SYMBOL]\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		sym = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (read_line(PMU_DIR "/type", buf, sizeof(buf))) {
		result(0, "%s/type is readable (%s)", PMU_DIR, strerror(errno));
		return 1;
	}
	type = atoi(buf);
	result(type > 0, "PMU type %d from %s/type", type, PMU_DIR);

	if (read_line(PMU_DIR "/format/retprobe", buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "config:%d", &retbit) == 1 && retbit >= 0 && retbit < 64)
		result(1, "format/retprobe is '%s' (bit %d of config)", buf, retbit);
	else
		result(0, "format/retprobe names a bit of config ('%s')", buf);

	snprintf(what, sizeof(what), "kprobe on %s by name", sym);
	round_trip(what, type, 0, sym, 0, 'k', n);

	snprintf(what, sizeof(what), "kprobe on %s by address", sym);
#if defined(__powerpc64__) && defined(_CALL_ELF) && _CALL_ELF == 2
	/*
	 * 64-bit powerpc, ELFv2: kallsyms gives a function's global entry,
	 * which the kernel's own calls skip (they enter at the local entry,
	 * after the TOC set-up), so a probe there never fires on a fork, on
	 * stock either.  By address, the probe goes where the probe by name
	 * went (its list line while open): the local entry or the ftrace
	 * call site.
	 */
	listed_addr = 0;
	fd = open_kprobe(type, 0, sym, 0, 0);
	if (fd >= 0) {
		list_lines(sym, 'k');
		close(fd);
	}
	addr = listed_addr;
	printf("# %s: powerpc64, the address the probe by name was put at: 0x%llx (kallsyms: 0x%llx)\n",
	       what, addr, ksym_addr(sym));
#else
	addr = ksym_addr(sym);
#endif
	if (addr)
		round_trip(what, type, 0, sym, addr, 'k', n);
	else
		printf("ok - perf kprobe: %s # SKIP no address in /proc/kallsyms\n", what);

	snprintf(what, sizeof(what), "kretprobe on %s", sym);
	if (retbit >= 0)
		round_trip(what, type, 1ULL << retbit, sym, 0, 'r', n);

	fd = open_kprobe(type, 0, "kp_no_such_function_xyz", 0, 0);
	result(fd < 0, "unknown symbol refused (%s)", fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);

	return failures ? 1 : 0;
}
