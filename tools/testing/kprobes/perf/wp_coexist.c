// SPDX-License-Identifier: GPL-2.0
/*
 * wp_coexist: user-space data breakpoints next to kernel watchpoint probes
 * (45-wprobes.sh).  The debug registers are shared by the hw_breakpoint
 * layer between wprobes (one register on every CPU each), perf and ptrace.
 *
 *   wp_coexist perf N   open N perf write breakpoints on N variables of
 *                       this process, store 10 times to each, check each
 *                       count is 10.  Prints "opened K of N" and, when one
 *                       could not be opened, its errno.  Exit 0 when all N
 *                       opened and counted right, 2 when only K < N opened
 *                       (and those counted right), 1 otherwise.
 *   wp_coexist ptrace   a traced child stores 3 times to a variable its
 *                       parent watches through DR0/DR7 (PTRACE_POKEUSER);
 *                       the parent must see 3 SIGTRAP stops with DR6 bit 0.
 *                       Exit 0 when so, 1 otherwise.
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXBP 8

/*
 * One word per breakpoint, the longest x86 watches in either width (8
 * bytes on x86_64, 4 on i386, whose debug registers take no LEN_8).
 */
#define BP_LEN sizeof(long)
#define STRIDE (64 / sizeof(long))		/* words 64 bytes apart */

static volatile unsigned long vars[MAXBP * STRIDE];

static int perf_bp(volatile void *addr)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uintptr_t)addr;
	attr.bp_len = BP_LEN;
	attr.sample_period = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static int do_perf(int n)
{
	int fd[MAXBP], opened = 0, err = 0, bad = 0, i, j;

	if (n < 1 || n > MAXBP)
		return 1;
	for (i = 0; i < n; i++) {
		fd[i] = perf_bp(&vars[i * STRIDE]);
		if (fd[i] < 0) {
			err = errno;
			break;
		}
		opened++;
	}
	printf("opened %d of %d", opened, n);
	if (err)
		printf(", then errno %d (%s)", err, strerror(err));
	printf("\n");
	/*
	 * After each watched store, one to an unwatched neighbour: QEMU's TCG
	 * keeps a watchpoint's hit until an access to the page goes past it,
	 * and would report it again with the next breakpoint that matches.
	 */
	for (j = 0; j < 10; j++)
		for (i = 0; i < n; i++) {
			vars[i * STRIDE] = j + 1;
			vars[i * STRIDE + 1] = j + 1;
		}
	for (i = 0; i < opened; i++) {
		uint64_t count = 0;

		if (read(fd[i], &count, sizeof(count)) != sizeof(count) ||
		    count != 10) {
			printf("breakpoint %d counted %llu stores of 10\n", i,
			       (unsigned long long)count);
			bad = 1;
		}
		close(fd[i]);
	}
	if (bad)
		return 1;
	return opened == n ? 0 : 2;
}

static int do_ptrace(void)
{
	long dr = offsetof(struct user, u_debugreg);
	int status, stops = 0, bad = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		vars[0] = 1;
		vars[0] = 2;
		vars[0] = 3;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		return 1;
	/* DR0: the variable; DR7: L0, write, a word (LEN 10b 8, 11b 4). */
	if (ptrace(PTRACE_POKEUSER, pid, (void *)dr, (void *)&vars[0]) ||
	    ptrace(PTRACE_POKEUSER, pid, (void *)(dr + 7 * sizeof(long)),
		   (void *)(1UL | (1UL << 16) |
			    ((BP_LEN == 8 ? 2UL : 3UL) << 18)))) {
		printf("setting DR0/DR7: errno %d (%s)\n", errno,
		       strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	while (waitpid(pid, &status, 0) == pid) {
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) {
			long dr6 = ptrace(PTRACE_PEEKUSER, pid,
					  (void *)(dr + 6 * sizeof(long)), NULL);

			stops++;
			if (!(dr6 & 1))
				bad = 1;
		}
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	printf("%d SIGTRAP stops for 3 stores%s\n", stops,
	       bad ? ", DR6 bit 0 missing" : "");
	return stops == 3 && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "perf"))
		return do_perf(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "ptrace"))
		return do_ptrace();
	fprintf(stderr, "usage: wp_coexist perf N | ptrace\n");
	return 1;
}
