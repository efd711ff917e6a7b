// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gzip'd profile.proto (lib/analyze/profile.proto, encoded by protobuf-c),
 * as go tool pprof, Pyroscope and Parca read it: `export --format pprof`
 * and perfmarkd's GET /debug/pprof/profile, one writer for both.  The
 * profile is loaded with keep_addrs (profile.h): its stacks by address.
 *
 *   sample types   samples/count and cpu/nanoseconds (the default); with
 *                  off-CPU time in the recording, off_cpu/nanoseconds too
 *                  (its samples labelled "state": R, S, D, ...); of
 *                  -e offcpu-time, samples/count and off_cpu/nanoseconds
 *   mappings       one per file seen, the executable of the most sampled
 *                  process first (pprof takes the first for the main
 *                  binary), with its build id
 *   locations      one per address of a frame; a caller's at its return
 *                  address - 1, inside the call
 *   lines          with pprof_opts.lines, from the file's DWARF, or its
 *                  debug file's, when it has them (lib/analyze/srcline.h):
 *                  inlined functions first, the function itself last, each
 *                  with its source file
 *   functions      one per (name, source file); a frame without a symbol
 *                  is "DSO+0xOFFSET" (symbolizer__frame_name), one function
 *                  per address
 *   samples        one per (address stack, enclosing ranges, pid, off-CPU
 *                  state); labels: "range" for every range the samples were
 *                  inside (innermost first), so `-tagfocus range=render`
 *                  keeps them; "comm"; "pid" (a number); "state" on off-CPU
 *                  time.
 *
 * Every string is copied into this profile's own table: the names come from
 * the recording, the files and lines from DWARF that is closed file by file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "escape.h"
#include "grow.h"
#include "offcpu.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "srcline.h"
#include "symbolize.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__ValueType PbValueType;

#define MAX_LABELS 32
#define MAX_LINES (SRCLINE_MAX_INLINE + 1)

struct pb {
	const struct profile *p;
	PbProfile prof;
	struct strtab strs;         /* pprof's string table: id = index, "" first */
	uint32_t *chain;            /* range instance -> chain id (names up to the root) */
	struct idmap chains;        /* name << 32 | parent chain -> chain id */
	size_t nchains;
	uint32_t *map_id;           /* profile mapping -> pprof mapping id */
	struct idmap fn_ids;        /* name << 32 | file -> function id */
	size_t capfn;
	struct srcline_stats src;
	bool clock_ns;              /* the period is nanoseconds (cpu-clock, task-clock) */
	uint64_t ns_per_sample;     /* else: 1e9 / frequency, or 0 */
	size_t nvalues;             /* 2, or 3 with off_cpu beside cpu */
	int64_t k_range, k_comm, k_state, k_pid;
	struct idmap chpid;         /* range chain << 32 | pid -> a number (< 2^24) */
	struct idmap lab_ids;       /* label key << 32 | value -> index in labs */
	PbLabel **labs;             /* each distinct label once, shared by the samples */
	size_t nlabs, cap_labs;
	uint64_t since;             /* samples before it are left out */
	size_t taken;               /* samples (and off-CPU ones) at or after it */
	bool lines;                 /* read source lines */
	int err;
	char *fix;                  /* a string made valid UTF-8 */
	size_t fix_cap;
};

/* pprof string index of s (0 is ""); on failure b->err */
static int64_t pb_str(struct pb *b, const char *s)
{
	size_t n = s ? strlen(s) : 0, i = 0, l;
	uint32_t id;

	/* profile.proto's strings are UTF-8: an invalid byte becomes U+FFFD */
	while (i < n && (l = escape_utf8_len((const uint8_t *)s + i, n - i)))
		i += l;
	if (i < n) {
		size_t o = 0;

		if (grow_to(&b->fix, &b->fix_cap, 3 * n + 1, 1, 256)) {
			b->err = -ENOMEM;
			return 0;
		}
		for (i = 0; i < n; i += l ? l : 1) {
			l = escape_utf8_len((const uint8_t *)s + i, n - i);
			memcpy(b->fix + o, l ? s + i : "\xEF\xBF\xBD", l ? l : 3);
			o += l ? l : 3;
		}
		s = b->fix;
		n = o;
	}
	id = strtab__intern(&b->strs, s ? s : "", n);

	if (id == TABLE_NONE) {
		b->err = -ENOMEM;
		return 0;
	}
	return id;
}

static int64_t pb_sid(struct pb *b, uint32_t id)
{
	return pb_str(b, profile__str(b->p, id));
}

/* Chain ids: two range instances with the same names up to the root share one. */
static int pb_chains(struct pb *b)
{
	size_t nr;
	const struct profile_range *rv = profile__ranges(b->p, &nr);

	b->chain = malloc((nr ? nr : 1) * sizeof(*b->chain));
	if (!b->chain)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		uint32_t up = rv[i].parent == PROFILE_NONE ? 0 : b->chain[rv[i].parent] + 1;
		uint64_t key = (uint64_t)rv[i].name << 32 | up;
		uint32_t c = idmap__get(&b->chains, key);

		if (c == TABLE_NONE) {
			c = (uint32_t)b->nchains++;
			if (idmap__put(&b->chains, key, c) < 0)
				return -ENOMEM;
		}
		b->chain[i] = c;
	}
	return 0;
}

/* ---- mappings ------------------------------------------------------------------- */

/*
 * pprof takes the first mapping for the main binary (`File:` in its
 * output): the executable that the most samples run through, else (no
 * executable known) the user file holding the most sampled leaves.
 */
static int pb_mapping_ids(struct pb *b, size_t nm)
{
	size_t ns, na, nl, nf;
	const struct profile_sample *sv = profile__samples(b->p, &ns);
	const struct profile_anode *an = profile__anodes(b->p, &na);
	const struct profile_loc *lv = profile__locs(b->p, &nl);
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	const struct profile_mapping *mv = profile__mappings(b->p, &nm);
	uint64_t *through = calloc(na ? na : 1, sizeof(*through));
	uint64_t *exe = calloc(nm + 1, sizeof(*exe)), *leaf = calloc(nm + 1, sizeof(*leaf));
	uint32_t main_map = 0;
	bool any_exe = false;

	b->map_id = malloc((nm + 1) * sizeof(*b->map_id));
	if (!through || !exe || !leaf || !b->map_id) {
		free(through);
		free(exe);
		free(leaf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		const struct profile_frame *f = &fv[lv[an[sv[i].anode].loc].frame];

		if (sv[i].time < b->since)
			continue;
		through[sv[i].anode]++;
		if (f->kind == PROFILE_FRAME_USER)
			leaf[f->mapping]++;
	}
	/* samples under each anode; those entering a mapping count for it */
	for (size_t k = na; k-- > 1;) {
		const struct profile_frame *f = &fv[lv[an[k].loc].frame];
		uint32_t up = an[k].parent;
		const struct profile_frame *pf = up ? &fv[lv[an[up].loc].frame] : NULL;

		if (f->kind == PROFILE_FRAME_USER && mv[f->mapping].exe &&
		    (!pf || pf->kind != PROFILE_FRAME_USER || pf->mapping != f->mapping))
			exe[f->mapping] += through[k];
		through[up] += through[k];
	}
	for (uint32_t m = 0; m < nm; m++)
		if (mv[m].exe && (!any_exe || exe[m] > exe[main_map])) {
			main_map = m;
			any_exe = true;
		}
	for (uint32_t m = 1; m < nm && !any_exe; m++)
		if (leaf[m] > leaf[main_map])
			main_map = m;
	for (uint32_t m = 0; m < nm; m++)
		b->map_id[m] = m == main_map ? 1 : m < main_map ? m + 2 : m + 1;
	free(through);
	free(exe);
	free(leaf);
	return 0;
}

static int pb_mappings(struct pb *b)
{
	size_t nm;
	const struct profile_mapping *mv = profile__mappings(b->p, &nm);
	PbProfile *pr = &b->prof;

	pr->mapping = calloc(nm + 1, sizeof(*pr->mapping));
	if (!pr->mapping || pb_mapping_ids(b, nm) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < nm; i++) {
		PbMapping *m = calloc(1, sizeof(*m));

		if (!m)
			return -ENOMEM;
		perftools__profiles__mapping__init(m);
		pr->mapping[b->map_id[i] - 1] = m;
		pr->n_mapping++;
		m->id = b->map_id[i];
		m->memory_start = mv[i].start;
		m->memory_limit = mv[i].end;
		m->file_offset = mv[i].pgoff;
		m->filename = pb_sid(b, mv[i].file);
		m->build_id = mv[i].build_id == PROFILE_NONE ? 0 : pb_sid(b, mv[i].build_id);
		m->has_functions = true;
	}
	return b->err;
}

/* ---- functions and locations ------------------------------------------------------ */

static uint64_t pb_function(struct pb *b, const char *name, const char *file, uint32_t start)
{
	int64_t n = pb_str(b, name), f = pb_str(b, file);
	uint64_t key = (uint64_t)n << 32 | (uint64_t)f;
	uint32_t id = idmap__get(&b->fn_ids, key);
	PbProfile *pr = &b->prof;
	PbFunction *fn;

	if (id != TABLE_NONE)
		return id;
	if (b->err || grow(&pr->function, &b->capfn, pr->n_function + 1, sizeof(*pr->function)) ||
	    !(fn = calloc(1, sizeof(*fn)))) {
		b->err = -ENOMEM;
		return 0;
	}
	perftools__profiles__function__init(fn);
	pr->function[pr->n_function++] = fn;
	fn->id = pr->n_function;
	fn->name = fn->system_name = n;
	fn->filename = f;
	fn->start_line = start;
	if (idmap__put(&b->fn_ids, key, (uint32_t)fn->id) < 0)
		b->err = -ENOMEM;
	return fn->id;
}

/* The location of loc i (its lines: n of them, src NULL when none known) */
static int pb_location(struct pb *b, uint32_t i, const struct srcline *src, size_t n)
{
	size_t nl, nf, nm;
	const struct profile_loc *l = &profile__locs(b->p, &nl)[i];
	const struct profile_frame *fr = &profile__frames(b->p, &nf)[l->frame];
	const struct profile_mapping *m = &profile__mappings(b->p, &nm)[fr->mapping];
	const char *name = profile__str(b->p, fr->name), *file = profile__str(b->p, m->file);
	char unknown[SYMBOLIZER_FRAME_NAME_MAX];
	PbLocation *loc;
	PbLine *lines;

	/* a frame without a symbol: one function per address, named by its file and offset */
	if (!strcmp(name, "[unknown]") && strcmp(file, "[unknown]"))
		name = symbolizer__frame_name(NULL, file, l->offset + l->call, unknown, sizeof(unknown));
	if (!n)
		n = 1;
	loc = calloc(1, sizeof(*loc) + n * (sizeof(PbLine *) + sizeof(PbLine)));
	if (!loc)
		return -ENOMEM;
	perftools__profiles__location__init(loc);
	b->prof.location[b->prof.n_location++] = loc;
	loc->id = i + 1;
	loc->mapping_id = b->map_id[fr->mapping];
	/* the address in the one mapping written for the file (another process may map it elsewhere) */
	loc->address = m->end && l->offset >= m->pgoff && l->offset - m->pgoff < m->end - m->start ?
		       m->start + (l->offset - m->pgoff) : l->addr;
	loc->line = (PbLine **)(loc + 1);
	lines = (PbLine *)(loc->line + n);
	loc->n_line = n;
	for (size_t k = 0; k < n; k++) {
		perftools__profiles__line__init(&lines[k]);
		loc->line[k] = &lines[k];
		if (!src) {
			lines[k].function_id = pb_function(b, name, "", 0);
			continue;
		}
		lines[k].function_id = pb_function(b, src[k].func ? src[k].func : name,
						   src[k].file ? src[k].file : "", src[k].func_line);
		lines[k].line = src[k].line;
	}
	return b->err;
}

static int loc_by_mapping(const void *a, const void *b, void *ctx)
{
	const uint32_t *x = a, *y = b;
	const struct pb *pb = ctx;
	size_t nl, nf;
	const struct profile_loc *lv = profile__locs(pb->p, &nl);
	const struct profile_frame *fv = profile__frames(pb->p, &nf);
	uint32_t mx = fv[lv[*x].frame].mapping, my = fv[lv[*y].frame].mapping;

	if (mx != my)
		return mx < my ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

/* Every loc but the comm frames', file by file: each file's DWARF is open once */
static int pb_locations(struct pb *b)
{
	size_t nl, nf, nm, n = 0;
	const struct profile_loc *lv = profile__locs(b->p, &nl);
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	const struct profile_mapping *mv = profile__mappings(b->p, &nm);
	uint32_t *order = malloc((nl ? nl : 1) * sizeof(*order));
	struct srcline lines[MAX_LINES];
	struct srcfile *src = NULL;
	uint32_t open_map = PROFILE_NONE;
	int err = 0;

	b->prof.location = calloc(nl + 1, sizeof(*b->prof.location));
	if (!order || !b->prof.location) {
		free(order);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nl; i++)
		if (fv[lv[i].frame].kind != PROFILE_FRAME_COMM)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), loc_by_mapping, b);
	for (size_t k = 0; k < n && !err; k++) {
		const struct profile_loc *l = &lv[order[k]];
		uint32_t m = fv[l->frame].mapping;
		size_t got = 0;

		if (m != open_map) {
			srcfile__close(src);
			src = NULL;
			open_map = m;
			if (b->lines && fv[l->frame].kind == PROFILE_FRAME_USER)
				src = srcfile__open(profile__str(b->p, mv[m].file),
						    mv[m].build_id == PROFILE_NONE ? NULL :
						    profile__str(b->p, mv[m].build_id), &b->src);
			if (src) {
				PbMapping *pm = b->prof.mapping[b->map_id[m] - 1];

				pm->has_filenames = pm->has_line_numbers = pm->has_inline_frames = true;
			}
		}
		if (src)
			got = srcfile__find(src, l->offset, lines, MAX_LINES);
		err = pb_location(b, order[k], got ? lines : NULL, got);
	}
	srcfile__close(src);
	free(order);
	return err;
}

/* ---- samples -------------------------------------------------------------------- */

/* The string index of an off-CPU state letter (offcpu__state_letter's). */
static int64_t state_sid(struct pb *b, char c)
{
	static const char *const letters[] = { "R", "S", "D", "I", "T", "t", "?" };
	size_t i;

	for (i = 0; i < 6 && letters[i][0] != c; i++)
		;
	return pb_str(b, letters[i]);
}

/*
 * The label KEY = STR (a string index) or KEY = NUM, made once and shared
 * by every sample that has it: a sample deep in nested ranges holds up to
 * MAX_LABELS pointers, not MAX_LABELS labels.  NULL: out of memory.
 */
static PbLabel *pb_label(struct pb *b, int64_t key, int64_t str, int64_t num)
{
	uint64_t k = (uint64_t)(uint32_t)key << 32 | (uint32_t)(str ? str : num);
	uint32_t at = idmap__get(&b->lab_ids, k);
	PbLabel *l;

	if (at != TABLE_NONE)
		return b->labs[at];
	if (grow(&b->labs, &b->cap_labs, b->nlabs + 1, sizeof(*b->labs)) ||
	    !(l = calloc(1, sizeof(*l))))
		return NULL;
	if (idmap__put(&b->lab_ids, k, (uint32_t)b->nlabs) < 0) {
		free(l);
		return NULL;
	}
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = str;
	l->num = num;
	b->labs[b->nlabs++] = l;
	return l;
}

/*
 * The pprof sample of (address stack, range chain, pid[, off-CPU state]),
 * made at its first use: stack, labels and values in one block.  NULL: out
 * of memory.  The anode under the root is the comm's.
 */
static PbSample *pb_sample(struct pb *b, struct idmap *ids, uint32_t anode, uint32_t range,
			   char state, uint32_t pid)
{
	size_t na, nlc, nf, nr, depth = 0, nl = 0;
	const struct profile_anode *an = profile__anodes(b->p, &na);
	const struct profile_loc *lv = profile__locs(b->p, &nlc);
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	const struct profile_range *rv = profile__ranges(b->p, &nr);
	uint32_t ch = range == PROFILE_NONE ? 0 : b->chain[range] + 1;
	uint64_t cp = (uint64_t)ch << 32 | pid, key;
	uint32_t cpid = idmap__get(&b->chpid, cp), at, k;
	PbProfile *pr = &b->prof;
	PbSample *s;
	PbLabel **lab;

	/* (range chain, pid) -> a number, so that one u64 keys a sample with its state */
	if (cpid == TABLE_NONE) {
		cpid = (uint32_t)b->chpid.n;
		if (cpid >= 1u << 24 || idmap__put(&b->chpid, cp, cpid) < 0)
			return NULL;
	}
	key = (uint64_t)anode << 32 | (uint64_t)(uint8_t)state << 24 | cpid;
	at = idmap__get(ids, key);
	if (at != TABLE_NONE)
		return pr->sample[at];
	for (k = anode; k && an[k].parent; k = an[k].parent)
		depth++;
	s = calloc(1, sizeof(*s) + depth * sizeof(uint64_t) + b->nvalues * sizeof(int64_t) +
		   MAX_LABELS * sizeof(PbLabel *));
	if (!s || idmap__put(ids, key, (uint32_t)pr->n_sample) < 0) {
		free(s);
		return NULL;
	}
	perftools__profiles__sample__init(s);
	pr->sample[pr->n_sample++] = s;
	s->value = (int64_t *)(s + 1);
	s->n_value = b->nvalues;
	s->location_id = (uint64_t *)(s->value + b->nvalues);
	for (k = anode; k && an[k].parent; k = an[k].parent)
		s->location_id[s->n_location_id++] = an[k].loc + 1;
	lab = s->label = (PbLabel **)(s->location_id + depth);
	for (uint32_t r = range; r != PROFILE_NONE && nl < MAX_LABELS - 3; r = rv[r].parent)
		lab[nl++] = pb_label(b, b->k_range, pb_sid(b, rv[r].name), 0);
	if (k)
		lab[nl++] = pb_label(b, b->k_comm, pb_sid(b, fv[lv[an[k].loc].frame].name), 0);
	lab[nl++] = pb_label(b, b->k_pid, 0, pid);
	if (state)
		lab[nl++] = pb_label(b, b->k_state, state_sid(b, state), 0);
	for (uint32_t i = 0; i < nl; i++)
		if (!lab[i])
			return NULL;
	s->n_label = nl;
	return s;
}

/*
 * One pprof sample per (address stack, range chain, pid), its values
 * summed; off-CPU time (beside another event's samples) per state too, in
 * the third value.
 */
static int pb_samples(struct pb *b, bool offcpu_analysed)
{
	size_t ns, no, nt;
	const struct profile_sample *sv = profile__samples(b->p, &ns);
	const struct profile_offcpu *ov = profile__offcpus(b->p, &no);
	const struct profile_thread *tv = profile__threads(b->p, &nt);
	struct idmap ids = { 0 };
	PbProfile *pr = &b->prof;
	int err = -ENOMEM;

	b->k_range = pb_str(b, "range");
	b->k_comm = pb_str(b, "comm");
	b->k_state = pb_str(b, "state");
	b->k_pid = pb_str(b, "pid");
	pr->sample = calloc(ns + (b->nvalues > 2 ? no : 0) + 1, sizeof(*pr->sample));
	if (!pr->sample || b->err)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		PbSample *s;

		if (sv[i].time < b->since)
			continue;
		b->taken++;
		s = pb_sample(b, &ids, sv[i].anode, sv[i].range, 0,
			      sv[i].thread < nt ? tv[sv[i].thread].pid : 0);
		if (!s)
			goto out;
		s->value[0]++;
		s->value[1] += offcpu_analysed || b->clock_ns ? (int64_t)sv[i].period :
			(int64_t)b->ns_per_sample;
	}
	for (size_t i = 0; b->nvalues > 2 && i < no; i++) {
		PbSample *s;

		if (ov[i].time < b->since)
			continue;
		b->taken++;
		s = pb_sample(b, &ids, ov[i].anode, ov[i].range, ov[i].state,
			      ov[i].thread < nt ? tv[ov[i].thread].pid : 0);
		if (!s)
			goto out;
		s->value[2] += (int64_t)ov[i].period;
	}
	err = b->err;
out:
	idmap__free(&ids);
	return err;
}

static int pb_write_gzip(const uint8_t *buf, size_t len, FILE *out)
{
	uint8_t chunk[65536];
	z_stream z = { 0 };
	int zr;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out);
	} while (zr == Z_OK);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

static void pb_free(struct pb *b)
{
	PbProfile *pr = &b->prof;

	free(b->fix);

	for (size_t i = 0; i < pr->n_mapping; i++)
		free(pr->mapping[i]);
	for (size_t i = 0; i < pr->n_location; i++)
		free(pr->location[i]);
	for (size_t i = 0; i < pr->n_function; i++)
		free(pr->function[i]);
	for (size_t i = 0; i < pr->n_sample; i++)
		free(pr->sample[i]);
	free(pr->mapping);
	free(pr->location);
	free(pr->function);
	free(pr->sample);
	free(pr->sample_type);
	free(pr->string_table);
	strtab__free(&b->strs);
	free(b->chain);
	free(b->map_id);
	idmap__free(&b->chains);
	idmap__free(&b->fn_ids);
	idmap__free(&b->chpid);
	for (size_t i = 0; i < b->nlabs; i++)
		free(b->labs[i]);
	free(b->labs);
	idmap__free(&b->lab_ids);
}

static int pb_pack(struct pb *b, FILE *out)
{
	PbProfile *pr = &b->prof;
	uint8_t *buf;
	size_t len;
	int err;

	pr->string_table = malloc((b->strs.n ? b->strs.n : 1) * sizeof(char *));
	if (!pr->string_table)
		return -ENOMEM;
	for (uint32_t i = 0; i < b->strs.n; i++)
		pr->string_table[i] = (char *)strtab__str(&b->strs, i);
	pr->n_string_table = b->strs.n;
	len = perftools__profiles__profile__get_packed_size(pr);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	perftools__profiles__profile__pack(pr, buf);
	err = pb_write_gzip(buf, len, out);
	free(buf);
	return err;
}

int pprof__write(const struct profile *p, const struct pprof_opts *o, FILE *out)
{
	struct pb b = { .p = p, .since = o ? o->since : 0, .lines = o && o->lines };
	PbValueType types[4];
	const char *ev = profile__event_name(p);
	bool off_analysed = offcpu__event(ev);
	uint64_t freq = profile__sample_freq(p);
	size_t no, na;
	int err;

	profile__anodes(p, &na);
	if (!na)
		return -EINVAL;     /* not loaded with keep_addrs */
	perftools__profiles__profile__init(&b.prof);
	b.clock_ns = !strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock");
	b.ns_per_sample = freq ? 1000000000u / freq : 0;
	profile__offcpus(p, &no);
	b.nvalues = no && !off_analysed ? 3 : 2;
	pb_str(&b, "");
	for (int i = 0; i < 4; i++) {
		/* samples, cpu (off_cpu of -e offcpu-time), off_cpu, and cpu again for the period */
		static const char *const names[] = { "samples", "cpu", "off_cpu", "cpu" };

		perftools__profiles__value_type__init(&types[i]);
		types[i].type = pb_str(&b, i == 1 && off_analysed ? "off_cpu" : names[i]);
		types[i].unit = pb_str(&b, i == 0 ? "count" : "nanoseconds");
	}
	b.prof.sample_type = calloc(3, sizeof(*b.prof.sample_type));
	err = b.err ? b.err : !b.prof.sample_type ? -ENOMEM : 0;
	if (!err) {
		for (size_t i = 0; i < b.nvalues; i++)
			b.prof.sample_type[i] = &types[i];
		b.prof.n_sample_type = b.nvalues;
		b.prof.period_type = &types[3];
		b.prof.period = b.clock_ns ? (int64_t)b.ns_per_sample : 1;
		uint64_t from = b.since > profile__start(p) ? b.since : profile__start(p);

		/* nothing at or after since: no span (not a negative one) */
		b.prof.duration_nanos = profile__end(p) > from ? (int64_t)(profile__end(p) - from) : 0;
		b.prof.default_sample_type = types[1].type;
		err = pb_chains(&b);
	}
	if (!err)
		err = pb_mappings(&b);
	if (!err)
		err = pb_locations(&b);
	if (!err)
		err = pb_samples(&b, off_analysed);
	if (!err)
		err = pb_pack(&b, out);
	if (o && o->src)
		*o->src = b.src;
	if (o && o->taken)
		*o->taken = b.taken;
	b.prof.period_type = NULL;
	pb_free(&b);
	return err;
}
