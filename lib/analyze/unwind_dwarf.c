// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libdw's unwinder over perf's register and stack copies.  See unwind_dwarf.h.
 *
 * The files it reads are named by the recording (MMAP records): every one
 * is opened by fsafe_open_regular() (fsafe.h: regular files only, never
 * blocking; a FIFO named by a --call-graph dwarf sample's mapping hung
 * report, flamegraph, export and script in open() before, issue 18 case 2).
 * And libdwfl never reads a recorded process's files itself: each module it
 * gets is the image lib/collect's table builder vets (unwind_table__image:
 * the file's CFI within the same budgets, the FDEs libdw may run and
 * nothing else), one memfd per file; no separate debuginfo is looked for.
 * A file refused there is not reported: libdwfl unwinds its frames by the
 * frame pointer (x86-64's fallback), and the refusals are counted.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsafe.h"
#include "perfread.h"
#include "symbolize.h"
#include "unwind_dwarf.h"
#include "unwind_table.h"

#define PROC_BUCKETS 256
#define NR_DWARF_REGS 17         /* x86-64: rax..r15, then the return address column */

/* perf's x86-64 register numbers (PERF_REG_X86_*) for DWARF registers 0..15 */
static const uint8_t perf_of_dwarf[16] = { 0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23 };
#define PERF_REG_IP 8
#define PERF_REG_SP 7

struct dw_proc {
	struct dw_proc *next;
	struct dwarf_unwinder *u;
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

#define MAX_VETTED 1024
#define VETTED_LOADS 8

/* a file's CFI vetted for libdwfl (or refused) */
struct vetted {
	dev_t dev;
	ino_t ino;
	int64_t size, mtime;
	int fd;                     /* a memfd holding the image; -1: none */
	struct { uint64_t vaddr, off, filesz; } loads[VETTED_LOADS];   /* the file's PT_LOADs */
	size_t nr_loads;
};

struct dwarf_unwinder {
	struct dw_proc *procs[PROC_BUCKETS];
	struct symbolizer *sym;     /* the maps the cached Dwfls were built from */
	struct vetted *vetted;      /* MAX_VETTED at most */
	size_t nr_vetted;
	uint64_t refused[4];        /* by enum unwind_refusal */
};

_Static_assert(UNWIND_REFUSED_NR == 4, "dwarf_unwinder.refused: one counter per enum unwind_refusal");

/* no separate debug files: libdwfl gets the vetted image and nothing else */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = no_debuginfo,
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
static bool file_bias(const struct vetted *v, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	for (size_t i = 0; i < v->nr_loads; i++)
		if ((v->loads[i].off & ~4095ull) <= pgoff && pgoff < v->loads[i].off + v->loads[i].filesz) {
			*bias = start - (v->loads[i].vaddr + pgoff - v->loads[i].off);
			return true;
		}
	return false;
}

/* v from the file at fd: its loads and, within the budgets, its image in a memfd */
static void vet(struct dwarf_unwinder *u, int fd, struct vetted *v)
{
	struct unwind_budget b = { .why = -1 };
	Elf *e = NULL;
	void *img = NULL;
	size_t len = 0, n = 0;
	GElf_Phdr ph;
	int r;

	v->fd = -1;
	r = unwind_table__check_fd(fd);
	if (r == -E2BIG)
		b.why = UNWIND_REFUSED_SIZE;
	/* read, not mapped: the file may be truncated under us */
	if (!r && !(e = elf_begin(fd, ELF_C_READ, NULL)))
		r = -EINVAL;
	for (size_t i = 0; !r && !elf_getphdrnum(e, &n) && i < n && v->nr_loads < VETTED_LOADS; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			v->loads[v->nr_loads].vaddr = ph.p_vaddr;
			v->loads[v->nr_loads].off = ph.p_offset;
			v->loads[v->nr_loads++].filesz = ph.p_filesz;
		}
	if (!r)
		r = unwind_table__image(e, &img, &len, &b);
	elf_end(e);
	if (r == -E2BIG && b.why >= 0 && b.why < UNWIND_REFUSED_NR)
		u->refused[b.why]++;
	if (!r && (v->fd = memfd_create("perfmark-cfi", MFD_CLOEXEC)) >= 0 &&
	    write(v->fd, img, len) != (ssize_t)len) {
		close(v->fd);
		v->fd = -1;
	}
	free(img);
}

/*
 * The vetted file at path (read once per file while it stays the same),
 * NULL if it cannot be opened.  *tmp: the entry is not kept (the cache is
 * full); the caller closes its fd.
 */
static struct vetted *vetted_get(struct dwarf_unwinder *u, const char *path, struct vetted *tmp)
{
	struct vetted *v;
	struct stat sb;
	int fd = fsafe_open_regular(path);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb)) {
		close(fd);
		return NULL;
	}
	for (size_t i = 0; i < u->nr_vetted; i++) {
		v = &u->vetted[i];
		if (v->ino == sb.st_ino && v->dev == sb.st_dev && v->size == sb.st_size &&
		    v->mtime == sb.st_mtim.tv_sec) {
			close(fd);
			return v;
		}
	}
	if (!u->vetted)
		u->vetted = calloc(MAX_VETTED, sizeof(*u->vetted));
	v = u->vetted && u->nr_vetted < MAX_VETTED ? &u->vetted[u->nr_vetted++] : tmp;
	*v = (struct vetted){ .dev = sb.st_dev, .ino = sb.st_ino, .size = sb.st_size,
			      .mtime = sb.st_mtim.tv_sec };
	vet(u, fd, v);
	close(fd);
	return v;
}

/*
 * Make sure the file mapped at addr is a module of p's Dwfl.  A module that
 * is not the file the maps name any more (an exec, a dlopen at the same
 * place) makes the Dwfl stale: it is rebuilt for the next sample.
 */
static bool report_module(struct dw_proc *p, uint64_t addr)
{
	struct symbolizer_loc loc;
	struct vetted tmp, *v;
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
	v = vetted_get(p->u, loc.dso, &tmp);
	if (!v || v->fd < 0 || !file_bias(v, loc.map_start, loc.map_pgoff, &bias)) {
		if (v == &tmp && v->fd >= 0)
			close(v->fd);
		return false;
	}
	/* libdwfl keeps (and closes) the fd it is given: a duplicate of the cached one */
	fd = v == &tmp ? v->fd : fcntl(v->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return false;
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
		p->u = u;
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

void dwarf_unwinder__refused(const struct dwarf_unwinder *u, uint64_t refused[4])
{
	memcpy(refused, u->refused, sizeof(u->refused));
}

void dwarf_unwinder__free(struct dwarf_unwinder *u)
{
	if (!u)
		return;
	flush_all(u);
	for (size_t i = 0; i < u->nr_vetted; i++)
		if (u->vetted[i].fd >= 0)
			close(u->vetted[i].fd);
	free(u->vetted);
	free(u);
}
