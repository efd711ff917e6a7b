// SPDX-License-Identifier: LGPL-2.1-or-later
/* Mapped files: segments, symbols, build-ids (dso.h) */
#include "dso.h"
#include "fsafe.h"
#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define DSO_DEBUG_DIR "/usr/lib/debug/.build-id"

/* Append a name to the DSO's arena; returns its offset or -1. */
static ssize_t dso_store_name(struct dso *d, const char *name)
{
	size_t len = strlen(name) + 1, off = d->names_len;

	if (grow_to(&d->names, &d->names_cap, d->names_len + len, 1, 16384))
		return -1;
	memcpy(d->names + off, name, len);
	d->names_len += len;
	return (ssize_t)off;
}

static int dso_read_segs(struct dso *d, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -EINVAL;
	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	if (!d->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t size;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		size = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
		/* the file is anyone's: a segment that wraps past 2^64 maps nothing */
		if (size > UINT64_MAX - ph.p_offset || size > UINT64_MAX - ph.p_vaddr)
			continue;
		d->segs[d->nsegs++] = (struct load_seg){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = size,
		};
	}
	return 0;
}

static int sym_prio(unsigned bind)
{
	switch (bind) {
	case STB_GLOBAL: return 0;
	case STB_WEAK: return 2;
	default: return 1;
	}
}

/*
 * Function symbols of one symbol table section.  Names are stored as arena
 * offsets first (the arena moves while it grows) and turned into pointers
 * by dso_fix_names().
 */
static int dso_read_symtab(struct dso *d, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count, nsec = 0;
	uint8_t *exec = NULL;
	int r = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	/* which sections hold code: zero-sized NOTYPE labels count there (as in perf) */
	if (elf_getshdrnum(elf, &nsec) == 0 && nsec > 0 && (exec = calloc(nsec, 1))) {
		for (size_t i = 0; i < nsec; i++) {
			GElf_Shdr ssh;
			Elf_Scn *sc = elf_getscn(elf, i);

			exec[i] = sc && gelf_getshdr(sc, &ssh) && (ssh.sh_flags & SHF_EXECINSTR);
		}
	}
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type;
		ssize_t off;

		if (!gelf_getsym(data, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_value == 0)
			continue;
		if (type == STT_NOTYPE) {
			if (s.st_size || !exec || s.st_shndx >= nsec || !exec[s.st_shndx])
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		off = dso_store_name(d, name);
		if (off < 0 ||
		    symtab__add(&d->syms, s.st_value, s.st_size, (const char *)(uintptr_t)off,
			       sym_prio(GELF_ST_BIND(s.st_info))) < 0) {
			r = -ENOMEM;
			break;
		}
	}
	free(exec);
	return r;
}

/* .symtab if it has functions, else .dynsym. */
static int dso_read_syms(struct dso *d, Elf *elf)
{
	Elf_Scn *scn = NULL, *dynsym = NULL;
	GElf_Shdr dynsh;
	size_t before = d->syms.n;
	int r;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			r = dso_read_symtab(d, elf, scn, &sh);
			if (r < 0)
				return r;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsh = sh;
		}
	}
	if (d->syms.n == before && dynsym)
		return dso_read_symtab(d, elf, dynsym, &dynsh);
	return 0;
}

static bool dso_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

static int dso_elf_build_id(Elf *elf, uint8_t *buf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, next, no, dof;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &no, &dof)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + no, "GNU", 4) &&
			    nh.n_descsz > 0 && nh.n_descsz <= DSO_BUILD_ID_MAX) {
				memcpy(buf, (char *)data->d_buf + dof, nh.n_descsz);
				return (int)nh.n_descsz;
			}
			off = next;
		}
	}
	return 0;
}

/* Symbols from a separate debug file, /usr/lib/debug/.build-id/xx/yyyy.debug */
static void dso_load_debug_file(struct dso *d)
{
	char path[sizeof(DSO_DEBUG_DIR) + 2 * DSO_BUILD_ID_MAX + 16];
	size_t len;
	Elf *elf;
	int fd;

	if (d->build_id_len < 2)
		return;
	len = (size_t)snprintf(path, sizeof(path), DSO_DEBUG_DIR "/%02x/", d->build_id[0]);
	for (size_t i = 1; i < d->build_id_len; i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", d->build_id[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	fd = fsafe_open_regular(path);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		size_t before = d->syms.n, before_names = d->names_len;

		if (dso_has_symtab(elf) && dso_read_syms(d, elf) < 0) {
			d->syms.n = before;   /* keep what the main file gave */
			d->names_len = before_names;
		}
		elf_end(elf);
	}
	close(fd);
}

static void dso_fix_names(struct dso *d)
{
	for (size_t i = 0; i < d->syms.n; i++)
		d->syms.v[i].name = d->names + (uintptr_t)d->syms.v[i].name;
	symtab__finish(&d->syms);
}

void dso__load(struct dso *d)
{
	Elf *elf = NULL;
	int fd = -1;
	bool has_symtab = false;

	d->loaded = true;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	if (d->image) {
		elf = elf_memory(d->image, d->image_size);
	} else {
		fd = fsafe_open_regular(d->path);
		if (fd < 0)
			return;
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	if (dso_read_segs(d, elf) < 0)
		goto out;
	if (!d->build_id_len) {
		int n = dso_elf_build_id(elf, d->build_id);

		d->build_id_len = n > 0 ? (uint8_t)n : 0;
	}
	has_symtab = dso_has_symtab(elf);
	if (dso_read_syms(d, elf) < 0) {
		d->syms.n = 0;
		d->names_len = 0;
	}
	dso_plt_collect(d, elf);
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (!has_symtab && !d->image)
		dso_load_debug_file(d);
	dso_fix_names(d);
	dso_plt_add(d);
}

void dso__free(struct dso *d)
{
	if (!d)
		return;
	free(d->path);
	free(d->segs);
	symtab__free(&d->syms);
	free(d->names);
	free(d->image);
	dso_plt_free(d);
	free(d);
}

bool dso__offset_to_vaddr(const struct dso *d, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct load_seg *s = &d->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

struct dso *dso__new(const char *path, const uint8_t *bid, size_t bid_len)
{
	struct dso *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->path = strdup(path);
	if (!d->path) {
		free(d);
		return NULL;
	}
	if (bid && bid_len > 0 && bid_len <= DSO_BUILD_ID_MAX) {
		memcpy(d->build_id, bid, bid_len);
		d->build_id_len = (uint8_t)bid_len;
	}
	return d;
}

/* Our own vdso image: samples of any process on this kernel run the same code. */
struct dso *dso__new_vdso(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	uint64_t start = 0, end = 0;
	char line[512];
	struct dso *d;
	FILE *f;

	if (!base)
		return NULL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2)
			break;
		start = end = 0;
	}
	fclose(f);
	if (start != base || end <= start)
		return NULL;
	d = dso__new("[vdso]", NULL, 0);
	if (!d)
		return NULL;
	d->image = malloc(end - start);
	if (!d->image) {
		dso__free(d);
		return NULL;
	}
	memcpy(d->image, (const void *)base, end - start);
	d->image_size = end - start;
	return d;
}
