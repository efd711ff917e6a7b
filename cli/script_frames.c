// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perfmark script's frames, symbolized and formatted once per distinct
 * (process, version of its maps, address): script.h.
 *
 * A sample of a profile repeats the frames of the samples before it: a
 * symbol lookup (a map search and a binary search in a symbol table of up
 * to 100 000s of entries) and the escaping and formatting of its name for
 * every frame were most of `perfmark script`'s run (issue 24).  Here each
 * is done once and kept in a direct-mapped table of FC_SLOTS entries, keyed
 * by (pid, kernel, address) and checked against symbolizer__version(): a
 * process whose maps change (MMAP, exec, FORK, JIT code) gets a new version,
 * and its entries are looked up again.
 *
 * The text of an entry lives in a ring of FC_ARENA bytes; an entry knows
 * where, and whether the ring has written over it since.  A sample's frames
 * write at most FC_SAMPLE_MAX bytes into it, so a text handed out for a
 * sample must stand at least that far from being written over: the texts
 * of one sample all stay until the next.  A text longer than FC_TEXT_MAX
 * is not kept (the printer formats it itself).  Memory is fixed: FC_SLOTS
 * entries and the ring, allocated once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "callchain.h"
#include "script.h"

#define FC_BITS 15
#define FC_SLOTS (1u << FC_BITS)
#define FC_ARENA (4u << 20)
#define FC_TEXT_MAX 1024u
/* a text and the end of the ring it skipped, for a sample's ip and its chain */
#define FC_SAMPLE_MAX ((CALLCHAIN_MAX + 1) * 2 * FC_TEXT_MAX)

_Static_assert(2 * FC_SAMPLE_MAX <= FC_ARENA, "the ring holds a sample's texts and more");

enum fc_text { FC_TEXT_NONE, FC_TEXT_KEPT, FC_TEXT_LONG };

/* What a lookup goes by, and where its text is: small, as every frame reads one */
struct fc_slot {
	uint64_t ip, version;
	uint32_t pid;
	bool kernel, used;
	uint8_t text;           /* enum fc_text */
	uint32_t text_len;
	uint64_t text_pos;      /* where, as a count of the bytes the ring was ever given */
};

struct frame_cache {
	struct symbolizer *sym;
	struct fc_slot *slots;
	struct symbolizer_loc *locs;    /* the lookups, by slot: read for frames without text */
	char *ring;             /* NULL: no text made (JSON) */
	uint64_t pos;           /* the bytes the ring was ever given */
	uint64_t horizon;       /* the current sample writes below it */
	uint32_t pid;           /* the current sample's process */
	uint64_t uver, kver;    /* its versions for user and kernel addresses */
};

int frame_cache__new(struct frame_cache **out, struct symbolizer *sym, bool text)
{
	struct frame_cache *fc = calloc(1, sizeof(*fc));

	if (!fc)
		return -ENOMEM;
	fc->sym = sym;
	fc->slots = calloc(FC_SLOTS, sizeof(*fc->slots));
	fc->locs = calloc(FC_SLOTS, sizeof(*fc->locs));
	fc->ring = text ? malloc(FC_ARENA) : NULL;
	if (!fc->slots || !fc->locs || (text && !fc->ring)) {
		frame_cache__free(fc);
		return -ENOMEM;
	}
	*out = fc;
	return 0;
}

void frame_cache__free(struct frame_cache *fc)
{
	if (!fc)
		return;
	free(fc->slots);
	free(fc->locs);
	free(fc->ring);
	free(fc);
}

void frame_cache__sample(struct frame_cache *fc, uint32_t pid)
{
	fc->pid = pid;
	fc->uver = symbolizer__version(fc->sym, pid, 0);
	fc->kver = symbolizer__version(fc->sym, pid, 1);
	fc->horizon = fc->pos + FC_SAMPLE_MAX;
}

static size_t slot_of(uint64_t ip, uint32_t pid, bool kernel)
{
	uint64_t h = (ip ^ ((uint64_t)pid << 32 | kernel)) * 0x9e3779b97f4a7c15ULL;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (size_t)(h >> (64 - FC_BITS));
}

/* e's text, made into the ring (none when too long, or past what a sample may write) */
static void make_text(struct frame_cache *fc, struct fc_slot *e, const struct script_frame *fr)
{
	uint64_t at = fc->pos;
	size_t n;

	if (FC_ARENA - at % FC_ARENA < FC_TEXT_MAX)
		at += FC_ARENA - at % FC_ARENA;         /* not across the end: to the start */
	if (at + FC_TEXT_MAX > fc->horizon) {
		e->text = FC_TEXT_NONE;
		return;
	}
	n = script_text__frame(fc->ring + at % FC_ARENA, FC_TEXT_MAX, fr);
	e->text = n ? FC_TEXT_KEPT : FC_TEXT_LONG;
	e->text_len = (uint32_t)n;
	e->text_pos = at;
	if (n)
		fc->pos = at + n;
}

void frame_cache__get(struct frame_cache *fc, uint64_t ip, bool kernel, struct script_frame *out)
{
	/* a kernel address is the same in every process */
	uint32_t pid = kernel ? 0 : fc->pid;
	size_t i = slot_of(ip, pid, kernel);
	struct fc_slot *e = &fc->slots[i];
	uint64_t version = kernel ? fc->kver : fc->uver;

	out->ip = ip;
	if (!e->used || e->ip != ip || e->pid != pid || e->kernel != kernel ||
	    e->version != version) {
		*e = (struct fc_slot){ .ip = ip, .version = version, .pid = pid,
				       .kernel = kernel, .used = true };
		symbolizer__lookup(fc->sym, fc->pid, ip, kernel, &fc->locs[i]);
	}
	/* kept, and not to be written over before this sample is printed */
	if (fc->ring && (e->text == FC_TEXT_NONE ||
			 (e->text == FC_TEXT_KEPT && fc->horizon - e->text_pos > FC_ARENA))) {
		out->loc = fc->locs[i];
		make_text(fc, e, out);
	}
	if (fc->ring && e->text == FC_TEXT_KEPT) {
		out->text = fc->ring + e->text_pos % FC_ARENA;
		out->text_len = e->text_len;
		return;
	}
	out->loc = fc->locs[i];
	out->text = NULL;
	out->text_len = 0;
}
