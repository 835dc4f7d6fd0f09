/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the static guest test programs (perf/kprobe_perf.c, bpf/kprobe_bpf.c)
 * share: TAP results and kallsyms lookups.  Define KP_TAP_WHAT (the words
 * after "ok - ") before including it.
 */
#ifndef KP_USER_H
#define KP_USER_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int failures;

/* One TAP result line; a failure is counted in failures. */
static void result(int ok, const char *fmt, ...)
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

#endif /* KP_USER_H */
