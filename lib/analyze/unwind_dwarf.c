// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libdw's unwinder over perf's register and stack copies.  See unwind_dwarf.h.
 *
 * The files it reads are named by the recording (MMAP records, and the
 * build-id of what they name): every one is opened by fsafe_open_regular()
 * (fsafe.h: regular files only, never blocking), and libdwfl gets the
 * descriptor, never a path to open itself.  A FIFO named by a --call-graph
 * dwarf sample's mapping hung report, flamegraph, export and script in
 * open() before (issue 18 case 2).
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsafe.h"
#include "perfread.h"
#include "symbolize.h"
#include "unwind_dwarf.h"

#define PROC_BUCKETS 256
#define DEBUG_BUILD_ID_DIR "/usr/lib/debug/.build-id"
#define NR_DWARF_REGS 17         /* x86-64: rax..r15, then the return address column */

/* perf's x86-64 register numbers (PERF_REG_X86_*) for DWARF registers 0..15 */
static const uint8_t perf_of_dwarf[16] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23 };
#define PERF_REG_IP 8
#define PERF_REG_SP 7

struct dw_proc {
	struct dw_proc *next;
	uint32_t pid;
	Dwfl *dwfl;
	bool attached, stale;
	/* the sample being unwound */
	struct symbolizer *sym;
	uint32_t tid;
	Dwarf_Word regs[NR_DWARF_REGS];
	uint64_t sp;
	const uint8_t *stack;
	uint64_t stack_size;
	uint64_t *pcs;
	size_t n, max;
};

struct dwarf_unwinder {
	struct dw_proc *procs[PROC_BUCKETS];
	struct symbolizer *sym;     /* the maps the cached Dwfls were built from */
};

/*
 * A module's separate debug information (CFI in .debug_frame, when its
 * .eh_frame has none for a pc): /usr/lib/debug/.build-id/NN/REST.debug of
 * its own build-id only, opened as every path here.  Not libdwfl's standard
 * search, which opens the .gnu_debuglink name beside the mapped file (a
 * directory the recording chooses) with a plain open() and may ask
 * debuginfod servers on the network for any build-id a file claims.  An
 * alternate file (.gnu_debugaltlink, an absolute name) is not looked for:
 * it only completes DIEs, and unwinding reads CFI.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	char path[sizeof(DEBUG_BUILD_ID_DIR) + 2 * 64 + 16];
	const unsigned char *id;
	GElf_Addr vaddr;
	size_t len;
	int n = dwfl_module_build_id(mod, &id, &vaddr), fd;

	if (n < 2 || n > 64 || (debuglink_file && debuglink_file[0] == '/'))
		return -1;
	len = (size_t)snprintf(path, sizeof(path), DEBUG_BUILD_ID_DIR "/%02x/", id[0]);
	for (int i = 1; i < n; i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", id[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	fd = fsafe_open_regular(path);
	if (fd >= 0)
		*debuginfo_file_name = strdup(path);
	return fd < 0 ? -1 : fd;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* --- the thread's state: the sample's registers and stack ---------------------- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct dw_proc *p = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return (pid_t)p->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct dw_proc *p = arg;

	*thread_argp = p;
	return (uint32_t)tid == p->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct dw_proc *p = arg;

	if (addr < p->sp || addr - p->sp > p->stack_size ||
	    p->stack_size - (addr - p->sp) < sizeof(*result))
		return false;
	memcpy(result, p->stack + (addr - p->sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct dw_proc *p = arg;

	if (!dwfl_thread_state_registers(thread, 0, NR_DWARF_REGS, p->regs))
		return false;
	dwfl_thread_state_register_pc(thread, p->regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* --- modules, from the symbolizer's maps -------------------------------------- */

/* runtime address - ELF address, for the mapping of file offset pgoff at start */
static bool file_bias(int fd, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool found = false;
	GElf_Phdr ph;
	size_t n = 0;

	if (e && !elf_getphdrnum(e, &n))
		for (size_t i = 0; i < n && !found; i++)
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_offset & ~4095ull) <= pgoff && pgoff < ph.p_offset + ph.p_filesz) {
				*bias = start - (ph.p_vaddr + pgoff - ph.p_offset);
				found = true;
			}
	elf_end(e);
	return found;
}

/*
 * Make sure the file mapped at addr is a module of p's Dwfl.  A module that
 * is not the file the maps name any more (an exec, a dlopen at the same
 * place) makes the Dwfl stale: it is rebuilt for the next sample.
 */
static bool report_module(struct dw_proc *p, uint64_t addr)
{
	struct symbolizer_loc loc;
	Dwfl_Module *m;
	const char *name = NULL;
	Dwarf_Addr start = 0;
	uint64_t bias;
	int fd;

	symbolizer__lookup(p->sym, p->pid, addr, 0, &loc);
	m = dwfl_addrmodule(p->dwfl, addr);
	if (m) {
		name = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
		if (!loc.dso || !name || strcmp(name, loc.dso))
			p->stale = true;
		return !p->stale;
	}
	if (!loc.dso || loc.dso[0] != '/' || !loc.map_end)
		return false;
	fd = fsafe_open_regular(loc.dso);
	if (fd < 0)
		return false;
	if (!file_bias(fd, loc.map_start, loc.map_pgoff, &bias)) {
		close(fd);
		return false;
	}
	/* the descriptor, not the path: libdwfl keeps it when it takes the module */
	dwfl_report_begin_add(p->dwfl);
	m = dwfl_report_elf(p->dwfl, loc.dso, loc.dso, fd, bias, true);
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!m)
		close(fd);
	return m != NULL;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct dw_proc *p = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || p->n == p->max)
		return DWARF_CB_ABORT;
	p->pcs[p->n++] = pc;
	/* the next step needs the CFI of the code around the call */
	report_module(p, activation ? pc : pc - 1);
	return DWARF_CB_OK;
}

/* --- processes ------------------------------------------------------------------- */

static void proc_drop(struct dw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = p->stale = false;
}

static struct dw_proc *proc_get(struct dwarf_unwinder *u, uint32_t pid)
{
	struct dw_proc **pp = &u->procs[pid % PROC_BUCKETS], *p;

	for (p = *pp; p; p = p->next)
		if (p->pid == pid)
			break;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->pid = pid;
		p->next = *pp;
		*pp = p;
	}
	if (p->stale)
		proc_drop(p);
	if (!p->dwfl)
		p->dwfl = dwfl_begin(&offline_callbacks);
	return p->dwfl ? p : NULL;
}

static void flush_all(struct dwarf_unwinder *u)
{
	for (size_t i = 0; i < PROC_BUCKETS; i++)
		while (u->procs[i]) {
			struct dw_proc *p = u->procs[i];

			u->procs[i] = p->next;
			proc_drop(p);
			free(p);
		}
}

/* perf register k's value in the sample, by the attr's mask */
static bool perf_reg(const struct perf_event_attr *attr, const struct perfread_sample *s,
		     unsigned k, uint64_t *v)
{
	uint64_t mask = attr->sample_regs_user;
	unsigned idx;

	if (k >= 64 || !(mask & (1ull << k)))
		return false;
	idx = (unsigned)__builtin_popcountll(mask & ((1ull << k) - 1));
	if (idx >= s->nr_regs)
		return false;
	memcpy(v, &s->regs[idx], sizeof(*v));
	return true;
}

size_t dwarf_unwinder__unwind(struct dwarf_unwinder *u, struct symbolizer *sym,
			      const struct perf_event_attr *attr,
			      const struct perfread_sample *s, uint64_t *pcs, size_t max)
{
	struct dw_proc *p;
	uint64_t ip, v;

	if (!s->regs_abi || !s->regs || !max || !perf_reg(attr, s, PERF_REG_IP, &ip))
		return 0;
	if (u->sym != sym) {            /* another recording: nothing cached applies */
		flush_all(u);
		u->sym = sym;
	}
	p = proc_get(u, s->pid);
	if (!p)
		return 0;
	for (unsigned r = 0; r < 16; r++)
		p->regs[r] = perf_reg(attr, s, perf_of_dwarf[r], &v) ? v : 0;
	p->regs[16] = ip;
	p->sp = p->regs[7];
	p->stack = s->stack;
	p->stack_size = s->stack ? s->stack_size : 0;
	p->sym = sym;
	p->tid = s->tid;
	p->pcs = pcs;
	p->n = 0;
	p->max = max;
	if (!report_module(p, ip) && p->stale) {   /* the cached modules are out of date */
		p = proc_get(u, s->pid);
		if (!p || !report_module(p, ip))
			goto leaf;
	}
	if (!p->attached)
		p->attached = dwfl_attach_state(p->dwfl, NULL, (pid_t)s->pid, &thread_callbacks, p);
	if (!p->attached)
		goto leaf;
	dwfl_getthread_frames(p->dwfl, (pid_t)s->tid, on_frame, p);
	if (p->n)
		return p->n;
leaf:
	pcs[0] = ip;                    /* nothing to unwind with: the pc alone */
	return 1;
}

int dwarf_unwinder__new(struct dwarf_unwinder **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	return 0;
}

void dwarf_unwinder__free(struct dwarf_unwinder *u)
{
	if (!u)
		return;
	flush_all(u);
	free(u);
}
