// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The gap sideband (see bpf/perfmark_wire.h): exec, comm, fork, exit and
 * executable file mappings written into the ring while the collection is
 * pinned, so a process that starts and ends while no daemon runs keeps its
 * name, and its symbols.  Included by perfmark.bpf.c: the same maps,
 * filter and pid-namespace helpers.
 *
 * Mappings: the executable file mappings of a process are walked (the
 * task_vma iterator) at its exec (the executable, its interpreter) and
 * when its last thread exits (everything it loaded since; from Linux 6.16
 * the exit tracepoint runs before the mm goes), and dated at the exec, so
 * they come before the samples taken in them.  No per-mmap hook: no cost
 * outside exec and exit, and no BPF trampolines needed.  The path is
 * rebuilt from the dentries up to the task's root, as d_path does,
 * crossing mounts.
 */

#define PM_PATH_DEPTH 24

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __weak __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

/* tgid -> time of its exec: the exit walk dates the mappings there */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} gap_exec_ns SEC(".maps");

struct gap_scratch {
	__u8 rec[sizeof(struct pm_mmap) + PM_MAX_PATH * 2];   /* a struct pm_mmap */
	const unsigned char *name[PM_PATH_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gap_scratch);
} gap_scratch SEC(".maps");

static __always_inline bool gap_on(void)
{
	__u32 zero = 0;
	struct pm_cfg *c = bpf_map_lookup_elem(&cfg, &zero);

	return c && c->gap;
}

/* the thread id as the recorder's namespace numbers it */
static __always_inline __u32 task_tid_ns(struct task_struct *t)
{
	if (pidns_init)
		return BPF_CORE_READ(t, pid);
	return pid_nr_ns(BPF_CORE_READ(t, thread_pid));
}

static __always_inline void gap_task(__u32 kind, struct task_struct *t, struct task_struct *parent,
				     __u32 uid, const char *comm)
{
	struct pm_task r = { .rec_type = PM_REC_TASK, .kind = kind };

	r.pid = task_tgid_ns(t);
	r.tid = task_tid_ns(t);
	if (!r.pid || !wanted(kind == PM_TASK_FORK ? task_tgid_ns(parent) : r.pid, uid))
		return;
	if (parent) {
		r.ppid = task_tgid_ns(parent);
		r.ptid = kind == PM_TASK_FORK ? task_tid_ns(parent) : r.ppid;
	}
	r.time = bpf_ktime_get_ns();
	r.cpu = bpf_get_smp_processor_id();
	r.uid = uid;
	if (comm)
		bpf_probe_read_kernel_str(r.comm, sizeof(r.comm), comm);
	else
		bpf_get_current_comm(r.comm, sizeof(r.comm));
	bpf_ringbuf_output(&rb, &r, sizeof(r), rb_flags(r.time));
}

/*
 * f's path as the current task sees it, into m->path; its length with the
 * NUL.  Two bpf_loop()s (up the dentries, then the names down) keep the
 * verifier's work small inside the mapping walk.
 */
struct path_walk {
	struct gap_scratch *g;
	struct pm_mmap *m;
	struct dentry *d, *root_d;
	struct vfsmount *vm, *root_m;
	struct mount *mnt;
	__u64 moff;
	__u32 n, off;
};

static long path_up(__u32 i, void *ctx)
{
	struct path_walk *w = ctx;
	struct dentry *d = w->d, *parent;
	struct vfsmount *vm = w->vm;
	struct mount *mnt = w->mnt;

	if (d == w->root_d && vm == w->root_m)
		return 1;
	if (d == BPF_CORE_READ(vm, mnt_root)) {     /* the top of a mount: to its parent */
		struct mount *pm = BPF_CORE_READ(mnt, mnt_parent);

		if (pm == mnt)
			return 1;
		w->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = pm;
		w->vm = (void *)pm + w->moff;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d || w->n >= PM_PATH_DEPTH)
		return 1;
	w->g->name[w->n & (PM_PATH_DEPTH - 1)] = BPF_CORE_READ(d, d_name.name);
	w->n++;
	w->d = parent;
	return 0;
}

static long path_down(__u32 i, void *ctx)
{
	struct path_walk *w = ctx;
	long r;

	if (i >= w->n || w->off >= PM_MAX_PATH - 2)
		return 1;
	w->m->path[w->off & (PM_MAX_PATH - 1)] = '/';
	w->off++;
	r = bpf_probe_read_kernel_str(&w->m->path[w->off & (PM_MAX_PATH - 1)], 256,
				      w->g->name[(w->n - 1 - i) & (PM_PATH_DEPTH - 1)]);
	if (r <= 1)
		return 1;
	w->off += r - 1;
	return 0;
}

static __always_inline __u32 gap_path(struct gap_scratch *g, struct pm_mmap *m, struct file *f)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct fs_struct *fs = BPF_CORE_READ(t, fs);
	struct path_walk w = { .g = g, .m = m };

	w.d = BPF_CORE_READ(f, f_path.dentry);
	w.vm = BPF_CORE_READ(f, f_path.mnt);
	w.moff = bpf_core_field_offset(struct mount, mnt);
	w.mnt = (void *)w.vm - w.moff;
	if (fs) {
		w.root_d = BPF_CORE_READ(fs, root.dentry);
		w.root_m = BPF_CORE_READ(fs, root.mnt);
	}
	bpf_loop(PM_PATH_DEPTH + 8, path_up, &w, 0);
	bpf_loop(PM_PATH_DEPTH, path_down, &w, 0);
	if (!w.off)
		m->path[w.off++] = '/';
	w.off &= PM_MAX_PATH - 1;
	m->path[w.off] = '\0';
	return w.off + 1;
}

/* one executable file mapping of t's mm, dated at time */
static __always_inline void gap_map(struct gap_scratch *g, struct task_struct *t, __u32 pid,
				    __u32 uid, struct vm_area_struct *vma, __u64 time)
{
	struct pm_mmap *m = (struct pm_mmap *)g->rec;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	__u64 flags = BPF_CORE_READ(vma, vm_flags), dev;
	struct inode *ino;
	__u32 plen;

	if (!file || !(flags & 0x4 /* VM_EXEC */))
		return;
	ino = BPF_CORE_READ(file, f_inode);
	dev = BPF_CORE_READ(ino, i_sb, s_dev);
	m->rec_type = PM_REC_MMAP;
	m->cpu = bpf_get_smp_processor_id();
	m->pid = pid;
	m->tid = pid;
	m->time = time;
	m->start = BPF_CORE_READ(vma, vm_start);
	m->len = BPF_CORE_READ(vma, vm_end) - m->start;
	m->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	m->maj = dev >> 20;
	m->min = dev & ((1u << 20) - 1);
	m->ino = BPF_CORE_READ(ino, i_ino);
	m->ino_generation = BPF_CORE_READ(ino, i_generation);
	m->prot = flags & 0x7;                      /* VM_READ|WRITE|EXEC are PROT_* */
	m->flags = flags & 0x8 ? 0x1 : 0x2;         /* VM_SHARED: MAP_SHARED, else MAP_PRIVATE */
	m->uid = uid;
	plen = gap_path(g, m, file);
	m->path_len = plen;
	if (plen <= PM_MAX_PATH)
		bpf_ringbuf_output(&rb, m, sizeof(*m) + plen, rb_flags(time));
}

/* every executable file mapping of t, dated at time */
static __always_inline void gap_maps(struct task_struct *t, __u32 uid, __u64 time)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct gap_scratch *g;
	__u32 zero = 0, pid = task_tgid_ns(t);

	g = bpf_map_lookup_elem(&gap_scratch, &zero);
	if (!g || !pid || !bpf_iter_task_vma_new)
		return;
	bpf_iter_task_vma_new(&it, t, 0);
	while ((vma = bpf_iter_task_vma_next(&it)))
		gap_map(g, t, pid, uid, vma, time);
	bpf_iter_task_vma_destroy(&it);
}

/* a process of the gap (the collection pinned, the filter wants it): its uid and tgid */
static __always_inline bool gap_process(struct task_struct *p, __u32 *uid, __u32 *tgid)
{
	if (!gap_on())
		return false;
	*uid = task_owner_uid();
	*tgid = task_tgid_ns(p);
	return wanted(*tgid, *uid);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(gap_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 uid, tgid;
	__u64 now;

	if (!gap_process(p, &uid, &tgid))
		return 0;
	gap_task(PM_TASK_EXEC, p, NULL, uid, NULL);
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&gap_exec_ns, &tgid, &now, BPF_ANY);
	gap_maps(p, uid, now);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(gap_fork, struct task_struct *parent, struct task_struct *child)
{
	if (gap_on())
		gap_task(PM_TASK_FORK, child, parent, task_owner_uid(), NULL);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(gap_exit, struct task_struct *p)
{
	__u32 uid, tgid;
	__u64 *exec, since;

	if (!gap_process(p, &uid, &tgid))
		return 0;
	if (BPF_CORE_READ(p, signal, live.counter) == 0) {   /* the last thread: its mappings */
		exec = bpf_map_lookup_elem(&gap_exec_ns, &tgid);
		since = exec ? *exec + 1 : BPF_CORE_READ(p, start_time);
		gap_maps(p, uid, since);
		bpf_map_delete_elem(&gap_exec_ns, &tgid);
	}
	gap_task(PM_TASK_EXIT, p, BPF_CORE_READ(p, real_parent), uid, NULL);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(gap_rename, struct task_struct *task, const char *comm)
{
	if (gap_on())
		gap_task(PM_TASK_COMM, task, NULL, task_owner_uid(), comm);
	return 0;
}
