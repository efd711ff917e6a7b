// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pinning: a collection that outlives the daemon.  A collector's maps and
 * links are pinned under a session's directory in bpffs; a later process
 * adopts them (collection went on meanwhile) and reads the same ring.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fsutil.h"
#include "perfmark.skel.h"
#include "collector_int.h"

static int add_pin_dir(struct collector *c, const char *dir)
{
	char **nd = realloc(c->pin_dirs, (c->nr_pin_dirs + 1) * sizeof(*nd));

	if (!nd)
		return -ENOMEM;
	c->pin_dirs = nd;
	nd[c->nr_pin_dirs] = strdup(dir);
	if (!nd[c->nr_pin_dirs])
		return -ENOMEM;
	c->nr_pin_dirs++;
	c->pinned = true;
	return 0;
}

int collector__pin(struct collector *c, const char *dir)
{
	struct { int fd; const char *name; } maps[] = {
		{ c->rb_fd, "rb" }, { c->targets_fd, "targets" }, { c->bss_fd, "bss" },
		{ c->cfg_fd, "cfg" }, { c->uids_fd, "uids" }, { c->exec_fd, "exec" },
		{ c->uw_pools_fd, "uw_pools" }, { c->uw_maps_fd, "uw_maps" },
		{ c->uw_pids_fd, "uw_pids" }, { c->off_fd[OFF_AGG0], offcpu_pin_names[OFF_AGG0] },
		{ c->off_fd[OFF_AGG1], offcpu_pin_names[OFF_AGG1] },
		{ c->off_fd[OFF_CTL], offcpu_pin_names[OFF_CTL] },
		{ c->off_fd[OFF_BUSY], offcpu_pin_names[OFF_BUSY] },
	};
	char name[32];
	size_t i;
	int e;

	if (c->adopted || !c->pinnable)
		return -EOPNOTSUPP;   /* its links are held by other pins only; no gap sideband */
	e = fsutil_mkdir_p(dir, 0700, 0700);
	if (e)
		return e;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		e = collector_pin_fd(maps[i].fd, dir, maps[i].name);
		if (e)
			return e;
	}
	/* the tracepoint program, for its count of hits it missed */
	if (c->tp_prog_fd >= 0 && (e = collector_pin_fd(c->tp_prog_fd, dir, "tp_prog")))
		return e;
	for (i = 0; i < c->nr_links; i++) {
		snprintf(name, sizeof(name), "link%zu", i);
		e = collector_pin_fd(bpf_link__fd(c->links[i]), dir, name);
		if (e)
			return e;
	}
	e = collector_markers_pin(c, dir);
	if (!e)
		e = collector_agg_pin(c, dir);
	if (e)
		return e;
	e = add_pin_dir(c, dir);
	if (e)
		return e;
	collector_write_filter(c);   /* pinned: the gap sideband on */
	return 0;
}

int collector__unpin(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct collector *c;
	size_t i;
	DIR *d;

	/* the last pin gone: the collector's fds are all that keeps it */
	for (c = collector_registry; c; c = c->next) {
		for (i = 0; i < c->nr_pin_dirs; i++) {
			if (strcmp(c->pin_dirs[i], dir))
				continue;
			free(c->pin_dirs[i]);
			c->pin_dirs[i] = c->pin_dirs[--c->nr_pin_dirs];
			if (!c->nr_pin_dirs)
				c->pinned = false;
			collector_write_filter(c);   /* that session's share is gone */
			break;
		}
	}
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	if (rmdir(dir))
		return -errno;
	return 0;
}

/* a map's value size (0: unknown) */
static uint32_t map_value_size(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.value_size;
}

static int pinned_fd(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

int collector__adopt(struct collector **out, const struct recspec *spec,
		     const char *pin_dir, char *err, size_t errlen)
{
	int ncpus = libbpf_num_possible_cpus(), rb_fd, e;
	struct collector *c;
	uint32_t id;

	*out = NULL;
	err[0] = '\0';
	rb_fd = pinned_fd(pin_dir, "rb");
	if (rb_fd < 0) {
		snprintf(err, errlen, "nothing pinned under %s", pin_dir);
		return -ENOENT;
	}
	id = collector_map_id(rb_fd);
	for (c = collector_registry; c; c = c->next) {
		if (c->adopted && id && c->rb_id == id) {
			close(rb_fd);
			e = add_pin_dir(c, pin_dir);
			if (e)
				return e;
			c->refs++;
			*out = c;
			return 0;
		}
	}
	c = collector_alloc(spec);
	if (!c) {
		close(rb_fd);
		return -ENOMEM;
	}
	c->adopted = true;
	c->rb_redo = true;
	c->own_fds = true;
	e = add_pin_dir(c, pin_dir);
	if (e) {
		close(rb_fd);
		collector_free(c);
		return e;
	}
	c->rb_fd = rb_fd;
	c->targets_fd = pinned_fd(pin_dir, "targets");
	c->bss_fd = pinned_fd(pin_dir, "bss");
	c->cfg_fd = pinned_fd(pin_dir, "cfg");
	c->uids_fd = pinned_fd(pin_dir, "uids");
	c->exec_fd = pinned_fd(pin_dir, "exec");
	if (c->targets_fd < 0 || c->bss_fd < 0 || c->cfg_fd < 0 || c->uids_fd < 0 ||
	    c->exec_fd < 0) {
		e = -ENOENT;
		snprintf(err, errlen, "incomplete pins under %s", pin_dir);
		goto fail;
	}
	c->target_roots = map_value_size(c->targets_fd) == sizeof(uint32_t);
	/*
	 * The union filter stays as the last daemon left it (collection goes
	 * on) and is rewritten as the sessions subscribe again.
	 */
	c->own_sideband_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "pm_sideband",
					    sizeof(int), sizeof(int), ncpus > 0 ? ncpus : 1, NULL);
	if (c->own_sideband_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot create the sideband map: %s", strerror(-e));
		goto fail;
	}
	c->sideband_fd = c->own_sideband_fd;
	/* the unwinder's maps (pins of perfmark before 0.2 have none: ehframe then fails) */
	e = collector_unwind_start(c, pinned_fd(pin_dir, "uw_pools"), pinned_fd(pin_dir, "uw_maps"),
				   pinned_fd(pin_dir, "uw_pids"), err, errlen);
	if (e)
		goto fail;
	/*
	 * --off-cpu's sums (pins of perfmark before 0.2 have none: --off-cpu
	 * then fails; before the second map, one: drained as it was)
	 */
	{
		int off[OFF_FDS];

		for (int i = 0; i < OFF_FDS; i++)
			off[i] = pinned_fd(pin_dir, offcpu_pin_names[i]);
		e = collector_offcpu_start(c, off, err, errlen);   /* c owns them now */
		if (e)
			goto fail;
	}
	if (spec->aggregate) {
		int agg[7];

		collector_agg_pinned_fds(pin_dir, agg);
		e = collector_agg_start(c, agg, err, errlen);
		if (e) {
			for (int i = 0; !c->agg && i < 7; i++)   /* else closed with c */
				if (agg[i] >= 0)
					close(agg[i]);
			goto fail;
		}
	}
	collector_markers_adopt(c);
	c->tp_prog_fd = pinned_fd(pin_dir, "tp_prog");     /* none: no tracepoints */
	return collector_publish(c, 0, out, err, errlen);
fail:
	return collector_publish(c, e ? e : -EINVAL, out, err, errlen);
}
