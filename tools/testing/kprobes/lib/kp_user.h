/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the static guest test programs (perf/kprobe_perf.c, bpf/kprobe_bpf.c,
 * the uprobe/ programs) share: TAP results, kallsyms lookups, file offsets
 * of code.  Define KP_TAP_WHAT (the words after "ok - ") before including
 * it.
 */
#ifndef KP_USER_H
#define KP_USER_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int failures;

/* One TAP result line; a failure is counted in failures. */
static inline void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - " KP_TAP_WHAT ": ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		failures++;
}

/* SYM's address from /proc/kallsyms, 0 when not found or hidden. */
static inline unsigned long long ksym_addr(const char *sym)
{
	char line[512], name[256], t[8];
	unsigned long long a, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %7s %255s", &a, t, name) == 3 &&
		    !strcmp(name, sym)) {
			found = a;
			break;
		}
	}
	fclose(f);
	return found;
}

/* The file offset of @addr in the mapping of this process that holds it. */
static inline unsigned long self_file_offset(void *addr)
{
	unsigned long a = (unsigned long)addr, start, end, off, found = 0;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &off) == 4 &&
		    a >= start && a < end) {
			found = a - start + off;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

#endif /* KP_USER_H */
