/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * USDT probe lookup with libelf.
 *
 * A probe is an NT_STAPSDT (3) note named "stapsdt" in .note.stapsdt whose
 * descriptor holds three addresses (pc, base, semaphore) then three
 * NUL-terminated strings (provider, name, arguments).  The note is not
 * loaded, so its addresses are link-time addresses: when the file was
 * prelinked the .stapsdt.base section moved while the note did not, and
 * both addresses shift by (actual .stapsdt.base address - note base).
 * Uprobes want file offsets: the pc goes through the PT_LOAD segment that
 * holds it, the semaphore through the section that holds it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "usdt.h"

#define NT_STAPSDT 3

struct note_probe {
	uint64_t pc, base, sema;
	const char *provider, *name, *args;
};

/* Parse one descriptor; false when it is malformed. */
static bool parse_desc(const char *desc, size_t len, bool is64, bool swap, struct note_probe *p)
{
	size_t asz = is64 ? 8 : 4, off = 3 * asz;
	uint64_t v[3];
	const char *s[3];

	if (len < off)
		return false;
	for (int i = 0; i < 3; i++) {
		if (is64) {
			uint64_t x;
			memcpy(&x, desc + i * asz, 8);
			v[i] = swap ? __builtin_bswap64(x) : x;
		} else {
			uint32_t x;
			memcpy(&x, desc + i * asz, 4);
			v[i] = swap ? __builtin_bswap32(x) : x;
		}
	}
	for (int i = 0; i < 3; i++) {
		const char *end = memchr(desc + off, '\0', len - off);
		if (!end)
			return false;
		s[i] = desc + off;
		off = (size_t)(end - desc) + 1;
		if (i < 2 && off >= len)
			return false;
	}
	p->pc = v[0];
	p->base = v[1];
	p->sema = v[2];
	p->provider = s[0];
	p->name = s[1];
	p->args = s[2];
	return true;
}

/* file offset of vaddr through the PT_LOAD segment with file bytes for it */
static int vaddr_to_offset_phdr(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* file offset of vaddr through the allocated section with file bytes for it */
static int vaddr_to_offset_shdr(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		if (vaddr >= sh.sh_addr && vaddr < sh.sh_addr + sh.sh_size) {
			*off = vaddr - sh.sh_addr + sh.sh_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* the probe of note p, as file offsets */
static int resolve(Elf *elf, const struct note_probe *p, uint64_t base_addr, bool have_base,
		   struct usdt_probe *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->pc_vaddr = p->pc;
	out->sema_vaddr = p->sema;
	if (have_base && p->base) {
		out->pc_vaddr += base_addr - p->base;
		if (p->sema)
			out->sema_vaddr += base_addr - p->base;
	}
	err = vaddr_to_offset_phdr(elf, out->pc_vaddr, &out->pc_offset);
	if (err)
		return err;
	if (out->sema_vaddr) {
		err = vaddr_to_offset_shdr(elf, out->sema_vaddr, &out->sema_offset);
		if (err)
			err = vaddr_to_offset_phdr(elf, out->sema_vaddr, &out->sema_offset);
		if (err)
			return err;
	}
	if (strlen(p->args) >= sizeof(out->args) || strlen(p->name) >= sizeof(out->name))
		return -ENAMETOOLONG;
	strcpy(out->args, p->args);
	strcpy(out->name, p->name);
	return 0;
}

/* every probe of provider in the file, to fn (which stops the walk by returning non-zero) */
static int foreach_in_elf(Elf *elf, const char *provider, usdt_probe_fn fn, void *ctx)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf_Scn *scn = NULL, *notes[16];
	size_t nnotes = 0;
	uint64_t base_addr = 0;
	bool have_base = false, is64, swap;
	int found = 0;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	swap = eh.e_ident[EI_DATA] != ELFDATA2LSB;
#else
	swap = eh.e_ident[EI_DATA] != ELFDATA2MSB;
#endif

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname)
			continue;
		if (!strcmp(sname, ".stapsdt.base")) {
			base_addr = sh.sh_addr;
			have_base = true;
		} else if (sh.sh_type == SHT_NOTE && !strcmp(sname, ".note.stapsdt") &&
			   nnotes < sizeof(notes) / sizeof(notes[0])) {
			notes[nnotes++] = scn;
		}
	}

	for (size_t k = 0; k < nnotes; k++) {
		Elf_Data *data = NULL;

		while ((data = elf_getdata(notes[k], data))) {
			size_t off = 0, next, name_off, desc_off;
			GElf_Nhdr nh;

			while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
				const char *buf = data->d_buf;
				struct usdt_probe up;
				struct note_probe p;
				int r;

				off = next;
				if (nh.n_type != NT_STAPSDT || nh.n_namesz != sizeof("stapsdt") ||
				    memcmp(buf + name_off, "stapsdt", sizeof("stapsdt")))
					continue;
				if (!parse_desc(buf + desc_off, nh.n_descsz, is64, swap, &p))
					continue;
				if (strcmp(p.provider, provider))
					continue;
				r = resolve(elf, &p, base_addr, have_base, &up);
				if (r)
					return r;
				found++;
				r = fn(ctx, &up);
				if (r)
					return r > 0 ? found : r;
			}
		}
	}
	return found;
}

int usdt_foreach_fd(int fd, const char *provider, usdt_probe_fn fn, void *ctx)
{
	Elf *elf;
	int err;

	if (fd < 0 || !provider || !fn)
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = foreach_in_elf(elf, provider, fn, ctx);
	elf_end(elf);
	return err;
}

struct find_one {
	const char *name;
	struct usdt_probe *out;
};

static int take_named(void *ctx, const struct usdt_probe *p)
{
	struct find_one *f = ctx;

	if (strcmp(p->name, f->name))
		return 0;
	*f->out = *p;
	return 1;
}

int usdt_find(const char *path, const char *provider, const char *name, struct usdt_probe *out)
{
	struct find_one f = { .name = name, .out = out };
	struct usdt_probe tmp;
	int fd, err;

	if (!path || !provider || !name || !out)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	tmp.name[0] = '\0';
	f.out = &tmp;
	err = usdt_foreach_fd(fd, provider, take_named, &f);
	close(fd);
	if (err < 0)
		return err;
	if (!tmp.name[0])
		return -ENOENT;
	*out = tmp;
	return 0;
}
