// SPDX-License-Identifier: GPL-2.0
/*
 * Dynamic trace events on watchpoint probes (wprobes).
 *
 * Written to /sys/kernel/tracing/dynamic_events:
 *
 *   w[:[GROUP/]EVENT] [w|r|rw]@SYMBOL[+OFFS][:LEN] [FETCHARGS]
 *
 * records an event after each store to LEN bytes at SYMBOL+OFFS ("w", the
 * default) or each load or store ("r" and "rw" are the same: x86 has no
 * load-only watchpoint).  LEN is 1, 2, 4 or 8, by default the symbol's
 * size when that is one of those.  FETCHARGS are those of kprobe events
 * (registers at the trap, @memory, $stack, $comm, ...), plus $value: the
 * watched bytes after the access.  Without FETCHARGS the event records
 * value=$value.  GROUP defaults to "wprobes", EVENT to w_SYMBOL_OFFS.
 *
 * The wprobe is registered when the event is created (so a missing debug
 * register is reported then, as -EBUSY) and stays armed as long as the
 * event exists; while the event is disabled its handler returns at once.
 * Nothing here calls into the wprobe core (and so into perf) with
 * event_mutex held: a deleted event's wprobe is unregistered and the event
 * freed from a work item.  Per-CPU variables are refused: $value reads the
 * watched address, which differs on every CPU.
 */
#define pr_fmt(fmt)	"trace_wprobe: " fmt

#include <asm/ptrace.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/wprobes.h>

#include "trace_dynevent.h"
#include "trace_probe.h"
#include "trace_probe_kernel.h"
#include "trace_probe_tmpl.h"

#define WPROBE_EVENT_SYSTEM	"wprobes"
#define WPROBE_VALUE_VAR	"$value"

struct wprobe_trace_entry_head {
	struct trace_entry	ent;
	unsigned long		ip;	/* the instruction after the access */
};

struct trace_wprobe {
	struct dyn_event	devent;
	struct wprobe		wp;
	char			*symbol;	/* as given, with its module */
	unsigned int		offset;
	struct work_struct	release;	/* deleted: unregister, free */
	struct trace_probe	tp;	/* last: ends in the args array */
};

static struct workqueue_struct *tw_wq;

static int trace_wprobe_create(const char *raw_command);
static int trace_wprobe_show(struct seq_file *m, struct dyn_event *ev);
static int trace_wprobe_release(struct dyn_event *ev);
static bool trace_wprobe_is_busy(struct dyn_event *ev);
static bool trace_wprobe_match(const char *system, const char *event,
			       int argc, const char **argv,
			       struct dyn_event *ev);

static struct dyn_event_operations trace_wprobe_ops = {
	.create = trace_wprobe_create,
	.show = trace_wprobe_show,
	.is_busy = trace_wprobe_is_busy,
	.free = trace_wprobe_release,
	.match = trace_wprobe_match,
};

static struct trace_wprobe *to_trace_wprobe(struct dyn_event *ev)
{
	return container_of(ev, struct trace_wprobe, devent);
}

static bool trace_wprobe_is_busy(struct dyn_event *ev)
{
	return trace_probe_is_enabled(&to_trace_wprobe(ev)->tp);
}

static const char *tw_kind(struct trace_wprobe *tw)
{
	return tw->wp.kind == WPROBE_RW ? "rw" : "w";
}

/* "KIND@SYMBOL+OFFS:LEN", the probe's place as show() prints it. */
static void tw_place(struct trace_wprobe *tw, char *buf, size_t size)
{
	snprintf(buf, size, "%s@%s+%u:%u", tw_kind(tw), tw->symbol,
		 tw->offset, tw->wp.len);
}

static bool trace_wprobe_match(const char *system, const char *event,
			       int argc, const char **argv,
			       struct dyn_event *ev)
{
	struct trace_wprobe *tw = to_trace_wprobe(ev);
	char place[KSYM_NAME_LEN + 48];

	if (event[0] != '\0' && strcmp(trace_probe_name(&tw->tp), event))
		return false;
	if (system && strcmp(trace_probe_group_name(&tw->tp), system))
		return false;
	if (!argc)
		return true;
	tw_place(tw, place, sizeof(place));
	if (strcmp(place, argv[0]))
		return false;
	return trace_probe_match_command_args(&tw->tp, argc - 1, argv + 1);
}

/* Stage one of a fetch, from the registers at the trap; then the rest. */
static int process_fetch_insn(struct fetch_insn *code, void *rec,
			      void *edata, void *dest, void *base)
{
	struct pt_regs *regs = rec;
	unsigned long v;
	int err;

	while (code->op == FETCH_NOP_SYMBOL)	/* @SYMBOL's place holder */
		code++;
	if (code->op == FETCH_OP_REG) {
		v = regs_get_register(regs, code->param);
	} else if (code->op == FETCH_OP_STACK) {
		v = regs_get_kernel_stack_nth(regs, code->param);
	} else if (code->op == FETCH_OP_STACKP) {
		v = kernel_stack_pointer(regs);
	} else {
		err = process_common_fetch_insn(code, &v);
		if (err < 0)
			return err;
	}
	return process_fetch_insn_bottom(code + 1, v, dest, base);
}

/* Runs in the debug exception: one record in each buffer tracing us. */
static void tw_record(struct trace_wprobe *tw, struct pt_regs *regs,
		      struct trace_event_file *file)
{
	struct wprobe_trace_entry_head *entry;
	struct trace_event_buffer fbuffer;
	int dsize;

	if (trace_trigger_soft_disabled(file))
		return;
	dsize = __get_data_size(&tw->tp, regs, NULL);
	entry = trace_event_buffer_reserve(&fbuffer, file,
					   sizeof(*entry) + tw->tp.size + dsize);
	if (!entry)
		return;
	fbuffer.regs = regs;
	entry->ip = instruction_pointer(regs);
	store_trace_args(&entry[1], &tw->tp, regs, NULL, sizeof(*entry),
			 dsize);
	trace_event_buffer_commit(&fbuffer);
}

static void tw_handler(struct wprobe *wp, struct pt_regs *regs)
{
	struct trace_wprobe *tw = container_of(wp, struct trace_wprobe, wp);
	struct event_file_link *link;

	if (!trace_probe_test_flag(&tw->tp, TP_FLAG_TRACE))
		return;
	trace_probe_for_each_link_rcu(link, &tw->tp)
		tw_record(tw, regs, link->file);
}

static enum print_line_t tw_print(struct trace_iterator *iter, int flags,
				  struct trace_event *event)
{
	struct wprobe_trace_entry_head *field;
	struct trace_seq *s = &iter->seq;
	struct trace_event_call *call;
	struct trace_probe *tp;

	field = (struct wprobe_trace_entry_head *)iter->ent;
	call = container_of(event, struct trace_event_call, event);
	tp = trace_probe_primary_from_call(call);
	if (WARN_ON_ONCE(!tp))
		return trace_handle_return(s);
	trace_seq_printf(s, "%s: (", trace_probe_name(tp));
	if (!seq_print_ip_sym(s, field->ip, flags | TRACE_ITER_SYM_OFFSET))
		return trace_handle_return(s);
	trace_seq_putc(s, ')');
	if (trace_probe_print_args(s, tp->args, tp->nr_args, (u8 *)&field[1],
				   field) < 0)
		return trace_handle_return(s);
	trace_seq_putc(s, '\n');
	return trace_handle_return(s);
}

static int tw_define_fields(struct trace_event_call *event_call)
{
	struct trace_probe *tp = trace_probe_primary_from_call(event_call);
	struct wprobe_trace_entry_head field;
	int ret;	/* DEFINE_FIELD() sets it and reads "field" */

	if (WARN_ON_ONCE(!tp))
		return -ENOENT;
	DEFINE_FIELD(unsigned long, ip, FIELD_STRING_IP, 0);

	return traceprobe_define_arg_fields(event_call, sizeof(field), tp);
}

static struct trace_event_functions tw_funcs = {
	.trace = tw_print,
};

static struct trace_event_fields tw_fields_array[] = {
	{ .type = TRACE_FUNCTION_TYPE, .define_fields = tw_define_fields },
	{}
};

/* The first and last users set and clear TP_FLAG_TRACE, which the handler tests. */
static int tw_enable(struct trace_event_call *call,
		     struct trace_event_file *file)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);

	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	return trace_probe_add_file(tp, file);
}

static int tw_disable(struct trace_event_call *call,
		      struct trace_event_file *file)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);

	if (WARN_ON_ONCE(!tp))
		return -ENODEV;
	return trace_probe_remove_file(tp, file);
}

/* Called under event_mutex; no perf support yet. */
static int tw_register(struct trace_event_call *event, enum trace_reg type,
		       void *data)
{
	switch (type) {
	case TRACE_REG_REGISTER:
		return tw_enable(event, data);
	case TRACE_REG_UNREGISTER:
		return tw_disable(event, data);
	default:
		return -EOPNOTSUPP;
	}
}

static void tw_free(struct trace_wprobe *tw)
{
	if (!tw)
		return;
	trace_probe_cleanup(&tw->tp);
	kfree(tw->symbol);
	kfree(tw);
}

/*
 * "[w|r|rw]@SYMBOL[+OFFS][:LEN]": fill in the wprobe.  Returns the
 * offset in @arg of what is wrong, or -1 when all is well.
 */
static int tw_parse_place(struct trace_wprobe *tw, const char *arg)
{
	const char *at = strchr(arg, '@');
	char *sym, *colon, *plus;
	unsigned long size, off;
	unsigned long a;
	unsigned int len = 0;

	if (!at)
		return 0;
	if (at == arg || !strncmp(arg, "w@", 2))
		tw->wp.kind = WPROBE_WRITE;
	else if (!strncmp(arg, "r@", 2) || !strncmp(arg, "rw@", 3))
		tw->wp.kind = WPROBE_RW;
	else
		return 0;
	sym = kstrdup(at + 1, GFP_KERNEL);
	if (!sym)
		return 0;
	/* ":LEN" last; "module:symbol" has a colon too, not before digits. */
	colon = strrchr(sym, ':');
	if (colon && !kstrtouint(colon + 1, 0, &len))
		*colon = '\0';
	else
		len = 0;
	tw->offset = 0;
	plus = strchr(sym, '+');
	if (plus) {
		if (kstrtouint(plus + 1, 0, &tw->offset)) {
			kfree(sym);
			return plus - sym + (at + 1 - arg);
		}
		*plus = '\0';
	}
	tw->symbol = sym;
	a = kallsyms_lookup_name(sym);
	if (!a)
		return at + 1 - arg;
	if (!len) {
		/* The symbol's own size, when the hardware can watch it. */
		if (!kallsyms_lookup_size_offset(a, &size, &off) ||
		    (size != 1 && size != 2 && size != 4 && size != 8))
			return at + 1 - arg;
		len = size;
	}
	tw->wp.len = len;
	return -1;
}

/* Expand $value into a fetch of the watched bytes; keep the user's text. */
static const char *tw_expand_value(struct trace_wprobe *tw, const char *arg,
				   char *buf, size_t size)
{
	const char *body = strchr(arg, '=');
	const char *var = body ? body + 1 : arg;
	const char *type;

	if (strncmp(var, WPROBE_VALUE_VAR, strlen(WPROBE_VALUE_VAR)))
		return arg;
	type = var + strlen(WPROBE_VALUE_VAR);
	if (*type && *type != ':')
		return arg;	/* e.g. $valuex: let the parser refuse it */
	if (body)
		snprintf(buf, size, "%.*s@0x%lx%s", (int)(body - arg + 1), arg,
			 (unsigned long)tw->wp.addr, *type ? type : "");
	else
		snprintf(buf, size, "value=@0x%lx%s", (unsigned long)tw->wp.addr,
			 *type ? type : "");
	if (!*type)
		snprintf(buf + strlen(buf), size - strlen(buf), ":u%u",
			 tw->wp.len * 8);
	return buf;
}

static int tw_register_event(struct trace_wprobe *tw)
{
	struct trace_event_call *call = trace_probe_event_call(&tw->tp);
	int ret;

	call->event.funcs = &tw_funcs;
	call->class->fields_array = tw_fields_array;
	call->flags = 0;
	call->class->reg = tw_register;

	mutex_lock(&event_mutex);
	ret = trace_probe_register_event_call(&tw->tp);
	if (!ret)
		dyn_event_add(&tw->devent, call);
	mutex_unlock(&event_mutex);
	return ret;
}

static int __trace_wprobe_create(int argc, const char *argv[])
{
	static const char * const dflt_args[] = { "value=" WPROBE_VALUE_VAR };
	struct traceprobe_parse_context ctx = { .flags = TPARG_FL_KERNEL };
	const char *event = NULL, *group = WPROBE_EVENT_SYSTEM;
	char gbuf[MAX_EVENT_NAME_LEN], nbuf[MAX_EVENT_NAME_LEN];
	char abuf[MAX_ARGSTR_LEN + 32];
	struct trace_wprobe *tw = NULL;
	const char **args;
	int i, nargs, bad, ret;

	if (argv[0][0] != 'w' || (argv[0][1] && argv[0][1] != ':') ||
	    argc < 2)
		return -ECANCELED;

	trace_probe_log_init("trace_wprobe", argc, argv);
	event = strchr(argv[0], ':');
	if (event) {
		event++;
		ret = traceprobe_parse_event_name(&event, &group, gbuf,
						  event - argv[0]);
		if (ret)
			goto out;
	}

	nargs = argc - 2;
	args = argv + 2;
	if (!nargs) {
		nargs = ARRAY_SIZE(dflt_args);
		args = (const char **)dflt_args;
	}
	if (nargs > MAX_TRACE_ARGS) {
		ret = -E2BIG;
		goto out;
	}
	ret = -ENOMEM;
	tw = kzalloc(struct_size(tw, tp.args, nargs), GFP_KERNEL);
	if (!tw)
		goto out;

	trace_probe_log_set_index(1);
	bad = tw_parse_place(tw, argv[1]);
	if (bad >= 0) {
		trace_probe_log_err(bad, BAD_PROBE_ADDR);
		ret = -EINVAL;
		goto out;
	}
	if (!event) {
		snprintf(nbuf, sizeof(nbuf), "w_%s_%u", tw->symbol, tw->offset);
		sanitize_event_name(nbuf);
		event = nbuf;
	}

	tw->wp.symbol_name = tw->symbol;
	tw->wp.offset = tw->offset;
	tw->wp.handler = tw_handler;
	tw->wp.flags = WPROBE_FLAG_DISABLED;	/* armed once tw->tp is set */
	/* A debug register given back by a deleted event may be needed. */
	flush_workqueue(tw_wq);
	ret = register_wprobe(&tw->wp);
	if (ret) {
		trace_probe_log_err(0, FAIL_REG_PROBE);
		goto out;
	}
	if (tw->wp.flags & WPROBE_FLAG_PERCPU) {
		trace_probe_log_err(0, BAD_PROBE_ADDR);
		ret = -EINVAL;
		goto out_unreg;
	}

	ret = trace_probe_init(&tw->tp, event, group, false, nargs);
	if (ret < 0)
		goto out_unreg;
	dyn_event_init(&tw->devent, &trace_wprobe_ops);
	for (i = 0; i < nargs; i++) {
		const char *arg = tw_expand_value(tw, args[i], abuf,
						  sizeof(abuf));

		trace_probe_log_set_index(i + 2);
		ctx.offset = 0;
		ret = traceprobe_parse_probe_arg(&tw->tp, i, arg, &ctx);
		if (ret)
			goto out_unreg;
		if (arg != args[i]) {
			/* Show and match the argument as it was written. */
			const char *body = strchr(args[i], '=');
			char *comm = kstrdup(body ? body + 1 : args[i],
					     GFP_KERNEL);

			if (!comm) {
				ret = -ENOMEM;
				goto out_unreg;
			}
			kfree(tw->tp.args[i].comm);
			tw->tp.args[i].comm = comm;
		}
	}
	ret = traceprobe_set_print_fmt(&tw->tp, PROBE_PRINT_NORMAL);
	if (ret < 0)
		goto out_unreg;
	/* The handler can look at tw->tp now; it records once enabled. */
	enable_wprobe(&tw->wp);
	ret = tw_register_event(tw);
	if (ret) {
		trace_probe_log_set_index(0);
		if (ret == -EEXIST)
			trace_probe_log_err(0, EVENT_EXIST);
		else
			trace_probe_log_err(0, FAIL_REG_PROBE);
		goto out_unreg;
	}
	traceprobe_finish_parse(&ctx);
	trace_probe_log_clear();
	return 0;

out_unreg:
	unregister_wprobe(&tw->wp);
out:
	traceprobe_finish_parse(&ctx);
	trace_probe_log_clear();
	tw_free(tw);
	return ret;
}

static int trace_wprobe_create(const char *raw_command)
{
	return trace_probe_create(raw_command, __trace_wprobe_create);
}

/* After unregister_wprobe() no handler runs: the event can go. */
static void tw_release_work(struct work_struct *work)
{
	struct trace_wprobe *tw = container_of(work, struct trace_wprobe,
					       release);

	unregister_wprobe(&tw->wp);
	tw_free(tw);
}

/* Called under event_mutex: the wprobe goes later, from tw_wq. */
static int trace_wprobe_release(struct dyn_event *ev)
{
	struct trace_wprobe *tw = to_trace_wprobe(ev);

	if (trace_probe_is_enabled(&tw->tp))
		return -EBUSY;
	if (trace_event_dyn_busy(trace_probe_event_call(&tw->tp)))
		return -EBUSY;
	if (trace_probe_unregister_event_call(&tw->tp))
		return -EBUSY;
	dyn_event_remove(&tw->devent);
	INIT_WORK(&tw->release, tw_release_work);
	queue_work(tw_wq, &tw->release);
	return 0;
}

static int trace_wprobe_show(struct seq_file *m, struct dyn_event *ev)
{
	struct trace_wprobe *tw = to_trace_wprobe(ev);
	char place[KSYM_NAME_LEN + 48];
	int i;

	tw_place(tw, place, sizeof(place));
	seq_printf(m, "w:%s/%s %s", trace_probe_group_name(&tw->tp),
		   trace_probe_name(&tw->tp), place);
	for (i = 0; i < tw->tp.nr_args; i++)
		seq_printf(m, " %s=%s", tw->tp.args[i].name,
			   tw->tp.args[i].comm);
	seq_putc(m, '\n');
	return 0;
}

static __init int trace_wprobe_init(void)
{
	tw_wq = alloc_workqueue("trace_wprobe", 0, 0);
	if (!tw_wq)
		return -ENOMEM;
	return dyn_event_register(&trace_wprobe_ops);
}
core_initcall(trace_wprobe_init);
