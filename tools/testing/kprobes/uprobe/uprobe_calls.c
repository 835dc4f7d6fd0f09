// SPDX-License-Identifier: GPL-2.0
/*
 * A static program for bpftrace's uprobes and uretprobes (guest test
 * 86-bpftrace.sh): a known number of calls with known arguments and
 * return values.  build.sh builds it with frame pointers, so that a user
 * stack walk from a probe in it (bpftrace's ustack) goes through every
 * frame of ours.
 *
 *   uprobe_calls D [SEC]   call depth(D), which calls itself down to
 *                          depth(0): D + 1 calls, depth(d) returns d;
 *                          print "depth D", then sleep SEC seconds (0), so
 *                          that a tracer can still read our maps to name
 *                          the frames of the stacks it took
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int depth(int d)
{
	int r;

	if (d <= 0)
		return 0;
	r = depth(d - 1);
	/* Opaque to the compiler: no turning the recursion into a loop. */
	asm volatile("" : "+r" (r));
	return r + 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: uprobe_calls DEPTH [SECONDS]\n");
		return 2;
	}
	printf("depth %d\n", depth(atoi(argv[1])));
	fflush(stdout);
	if (argc > 2)
		sleep(atoi(argv[2]));
	return 0;
}
