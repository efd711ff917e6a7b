// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gzip'd profile.proto (lib/analyze/profile.proto, encoded by protobuf-c),
 * as go tool pprof, Pyroscope and Parca read it: `export --format pprof`
 * and perfmarkd's GET /debug/pprof/profile, one writer for both.
 *
 *   sample types   samples/count and cpu/nanoseconds (the default); with
 *                  off-CPU time in the recording, off_cpu/nanoseconds too
 *                  (its samples labelled "state": R, S, D, ...); of
 *                  -e offcpu-time, samples/count and off_cpu/nanoseconds
 *   mappings       one per file seen (has_functions: frames come named)
 *   locations      one per frame (function in a file), at its first address
 *   functions      one per name
 *   samples        one per (call stack, enclosing ranges); labels:
 *                  "range" for every range the samples were inside (innermost
 *                  first), so `-tagfocus range=render` keeps them; "comm";
 *                  "pid" (a number); "state" on off-CPU time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "grow.h"
#include "offcpu.h"
#include "pprof.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__ValueType PbValueType;

#define MAX_LABELS 32

struct pb {
	const struct profile *p;
	PbProfile prof;
	struct idmap str_ids;       /* profile string id + 1 -> pprof string index */
	char **strs;
	size_t nstrs, capstrs;
	uint32_t *chain;            /* range instance -> chain id (names up to the root) */
	struct idmap chains;        /* name << 32 | parent chain -> chain id */
	size_t nchains;
	bool clock_ns;              /* the period is nanoseconds (cpu-clock, task-clock) */
	uint64_t ns_per_sample;     /* else: 1e9 / frequency, or 0 */
	size_t nvalues;             /* 2, or 3 with off_cpu beside cpu */
	int64_t k_range, k_comm, k_state, k_pid;
	struct idmap chpid;         /* range chain << 32 | pid -> a number (< 2^24) */
	uint64_t since;             /* samples before it are left out */
	int64_t state_sid[8];       /* the string of each state letter, once (0: not yet) */
};

/* pprof string index of s (0 is ""). */
static int64_t pb_str(struct pb *b, const char *s)
{
	if (grow_to(&b->strs, &b->capstrs, b->nstrs + 1, sizeof(*b->strs), 1024))
		return -1;
	b->strs[b->nstrs] = (char *)s;
	return (int64_t)b->nstrs++;
}

static int64_t pb_sid(struct pb *b, uint32_t id)
{
	uint32_t i = idmap__get(&b->str_ids, (uint64_t)id + 1);
	int64_t k;

	if (i != TABLE_NONE)
		return i;
	k = pb_str(b, profile__str(b->p, id));
	if (k < 0 || idmap__put(&b->str_ids, (uint64_t)id + 1, (uint32_t)k) < 0)
		return -1;
	return k;
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

/*
 * pprof takes the first mapping for the main binary: the user file holding
 * the most sampled leaves goes first, the others keep their order.
 */
static uint32_t *pb_mapping_ids(struct pb *b, size_t nm)
{
	size_t ns, nn, nf;
	const struct profile_sample *sv = profile__samples(b->p, &ns);
	const struct profile_node *nodes = profile__nodes(b->p, &nn);
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	uint64_t *hits = calloc(nm + 1, sizeof(*hits));
	uint32_t *id = malloc((nm + 1) * sizeof(*id)), main_map = 0;

	if (!hits || !id) {
		free(hits);
		free(id);
		return NULL;
	}
	for (size_t i = 0; i < ns; i++) {
		const struct profile_frame *f = &fv[nodes[sv[i].node].frame];

		if (f->kind == PROFILE_FRAME_USER)
			hits[f->mapping]++;
	}
	for (uint32_t m = 1; m < nm; m++)
		if (hits[m] > hits[main_map])
			main_map = m;
	for (uint32_t m = 0; m < nm; m++)
		id[m] = m == main_map ? 1 : m < main_map ? m + 2 : m + 1;
	free(hits);
	return id;
}

static int pb_tables(struct pb *b)
{
	size_t nm, nf;
	const struct profile_mapping *mv = profile__mappings(b->p, &nm);
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	uint32_t *map_id = pb_mapping_ids(b, nm);
	struct idmap fn_ids = { 0 };
	PbProfile *pr = &b->prof;
	int err = -ENOMEM;

	pr->mapping = calloc(nm + 1, sizeof(*pr->mapping));
	pr->location = calloc(nf + 1, sizeof(*pr->location));
	pr->function = calloc(nf + 1, sizeof(*pr->function));
	if (!map_id || !pr->mapping || !pr->location || !pr->function)
		goto out;
	for (size_t i = 0; i < nm; i++) {
		PbMapping *m = calloc(1, sizeof(*m));

		if (!m)
			goto out;
		perftools__profiles__mapping__init(m);
		pr->mapping[map_id[i] - 1] = m;
		pr->n_mapping++;
		m->id = map_id[i];
		m->memory_start = mv[i].start;
		m->memory_limit = mv[i].end;
		m->file_offset = mv[i].pgoff;
		m->filename = pb_sid(b, mv[i].file);
		m->build_id = mv[i].build_id == PROFILE_NONE ? 0 : pb_sid(b, mv[i].build_id);
		m->has_functions = true;
	}
	for (size_t i = 0; i < nf; i++) {
		uint32_t fid;
		PbLocation *l;

		if (fv[i].kind == PROFILE_FRAME_COMM)
			continue;
		fid = idmap__get(&fn_ids, fv[i].name);
		if (fid == TABLE_NONE) {
			PbFunction *f = calloc(1, sizeof(*f));

			if (!f)
				goto out;
			perftools__profiles__function__init(f);
			pr->function[pr->n_function++] = f;
			f->id = pr->n_function;
			f->name = f->system_name = pb_sid(b, fv[i].name);
			f->filename = pb_sid(b, mv[fv[i].mapping].file);
			fid = (uint32_t)f->id;
			if (idmap__put(&fn_ids, fv[i].name, fid) < 0)
				goto out;
		}
		l = calloc(1, sizeof(*l) + sizeof(PbLine) + sizeof(PbLine *));
		if (!l)
			goto out;
		perftools__profiles__location__init(l);
		pr->location[pr->n_location++] = l;
		l->id = i + 1;
		l->mapping_id = map_id[fv[i].mapping];
		l->address = fv[i].addr;
		/* one line, stored in the same block */
		l->line = (PbLine **)(l + 1);
		l->line[0] = (PbLine *)((char *)(l + 1) + sizeof(PbLine *));
		perftools__profiles__line__init(l->line[0]);
		l->line[0]->function_id = fid;
		l->n_line = 1;
	}
	err = 0;
out:
	free(map_id);
	idmap__free(&fn_ids);
	return err;
}

/* The string index of an off-CPU state letter (offcpu__state_letter's). */
static int64_t state_sid(struct pb *b, char c)
{
	static const char *const letters[] = { "R", "S", "D", "I", "T", "t", "?" };
	size_t i;

	for (i = 0; i < 6 && letters[i][0] != c; i++)
		;
	if (!b->state_sid[i])
		b->state_sid[i] = pb_str(b, letters[i]);
	return b->state_sid[i];
}

/*
 * The pprof sample of (node, range chain[, off-CPU state]), made at its
 * first use: stack, labels and values in one block.  NULL: out of memory.
 */
static PbSample *pb_sample(struct pb *b, struct idmap *ids, uint32_t node, uint32_t range,
			   char state, uint32_t pid)
{
	size_t nn, nf, nr, depth = 0, nl = 0;
	const struct profile_node *nodes = profile__nodes(b->p, &nn);
	const struct profile_frame *fv = profile__frames(b->p, &nf);
	const struct profile_range *rv = profile__ranges(b->p, &nr);
	uint32_t ch = range == PROFILE_NONE ? 0 : b->chain[range] + 1;
	uint64_t cp = (uint64_t)ch << 32 | pid, key;
	uint32_t cpid = idmap__get(&b->chpid, cp), at;
	PbProfile *pr = &b->prof;
	PbSample *s;
	PbLabel *lab;

	/* (range chain, pid) -> a number, so that one u64 keys a sample with its state */
	if (cpid == TABLE_NONE) {
		cpid = (uint32_t)b->chpid.n;
		if (cpid >= 1u << 24 || idmap__put(&b->chpid, cp, cpid) < 0)
			return NULL;
	}
	key = (uint64_t)node << 32 | (uint64_t)(uint8_t)state << 24 | cpid;
	at = idmap__get(ids, key);
	if (at != TABLE_NONE)
		return pr->sample[at];
	for (uint32_t k = node; k && nodes[k].parent; k = nodes[k].parent)
		depth++;
	s = calloc(1, sizeof(*s) + depth * sizeof(uint64_t) + b->nvalues * sizeof(int64_t) +
		   MAX_LABELS * (sizeof(PbLabel) + sizeof(PbLabel *)));
	if (!s || idmap__put(ids, key, (uint32_t)pr->n_sample) < 0) {
		free(s);
		return NULL;
	}
	perftools__profiles__sample__init(s);
	pr->sample[pr->n_sample++] = s;
	s->value = (int64_t *)(s + 1);
	s->n_value = b->nvalues;
	s->location_id = (uint64_t *)(s->value + b->nvalues);
	for (uint32_t k = node; k && nodes[k].parent; k = nodes[k].parent)
		s->location_id[s->n_location_id++] = nodes[k].frame + 1;
	s->label = (PbLabel **)(s->location_id + depth);
	lab = (PbLabel *)(s->label + MAX_LABELS);
	for (uint32_t r = range; r != PROFILE_NONE && nl < MAX_LABELS - 3; r = rv[r].parent) {
		perftools__profiles__label__init(&lab[nl]);
		lab[nl].key = b->k_range;
		lab[nl].str = pb_sid(b, rv[r].name);
		s->label[nl] = &lab[nl];
		nl++;
	}
	for (uint32_t k = node; k; k = nodes[k].parent) {
		if (nodes[k].parent != 0)
			continue;
		perftools__profiles__label__init(&lab[nl]);
		lab[nl].key = b->k_comm;
		lab[nl].str = pb_sid(b, fv[nodes[k].frame].name);
		s->label[nl] = &lab[nl];
		nl++;
	}
	perftools__profiles__label__init(&lab[nl]);
	lab[nl].key = b->k_pid;
	lab[nl].num = pid;
	s->label[nl] = &lab[nl];
	nl++;
	if (state) {
		perftools__profiles__label__init(&lab[nl]);
		lab[nl].key = b->k_state;
		lab[nl].str = state_sid(b, state);
		s->label[nl] = &lab[nl];
		nl++;
	}
	s->n_label = nl;
	return s;
}

/*
 * One pprof sample per (node, range chain), its values summed; off-CPU
 * time (beside another event's samples) per state too, in the third value.
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
	if (!pr->sample || b->k_range < 0 || b->k_comm < 0 || b->k_state < 0 || b->k_pid < 0)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		PbSample *s;

		if (sv[i].time < b->since)
			continue;
		s = pb_sample(b, &ids, sv[i].node, sv[i].range, 0, sv[i].thread < nt ? tv[sv[i].thread].pid : 0);
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
		s = pb_sample(b, &ids, ov[i].node, ov[i].range, ov[i].state,
			      ov[i].thread < nt ? tv[ov[i].thread].pid : 0);
		if (!s)
			goto out;
		s->value[2] += (int64_t)ov[i].period;
	}
	err = 0;
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
	free(b->strs);
	free(b->chain);
	idmap__free(&b->str_ids);
	idmap__free(&b->chains);
	idmap__free(&b->chpid);
}

int pprof__write(const struct profile *p, const struct pprof_opts *o, FILE *out)
{
	struct pb b = { .p = p, .since = o ? o->since : 0 };
	PbValueType types[4];
	const char *ev = profile__event_name(p);
	bool off_analysed = offcpu__event(ev);
	size_t no;
	uint64_t freq = profile__sample_freq(p);
	uint8_t *buf = NULL;
	size_t len;
	int err;

	perftools__profiles__profile__init(&b.prof);
	b.clock_ns = !strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock");
	b.ns_per_sample = freq ? 1000000000u / freq : 0;
	profile__offcpus(p, &no);
	b.nvalues = no && !off_analysed ? 3 : 2;
	err = pb_str(&b, "") < 0 ? -ENOMEM : 0;
	for (int i = 0; i < 4 && !err; i++) {
		/* samples, cpu (off_cpu of -e offcpu-time), off_cpu, and cpu again for the period */
		static const char *const names[] = { "samples", "cpu", "off_cpu", "cpu" };

		perftools__profiles__value_type__init(&types[i]);
		types[i].type = pb_str(&b, i == 1 && off_analysed ? "off_cpu" : names[i]);
		types[i].unit = pb_str(&b, i == 0 ? "count" : "nanoseconds");
	}
	b.prof.sample_type = calloc(3, sizeof(*b.prof.sample_type));
	if (!err && !b.prof.sample_type)
		err = -ENOMEM;
	if (!err) {
		for (size_t i = 0; i < b.nvalues; i++)
			b.prof.sample_type[i] = &types[i];
		b.prof.n_sample_type = b.nvalues;
		b.prof.period_type = &types[3];
		b.prof.period = b.clock_ns ? (int64_t)b.ns_per_sample : 1;
		b.prof.duration_nanos = (int64_t)(profile__end(p) -
			(b.since > profile__start(p) ? b.since : profile__start(p)));
		b.prof.default_sample_type = types[1].type;
		err = pb_chains(&b);
	}
	if (!err)
		err = pb_tables(&b);
	if (!err)
		err = pb_samples(&b, off_analysed);
	if (!err) {
		b.prof.string_table = b.strs;
		b.prof.n_string_table = b.nstrs;
		len = perftools__profiles__profile__get_packed_size(&b.prof);
		buf = malloc(len ? len : 1);
		if (!buf)
			err = -ENOMEM;
	}
	if (!err) {
		perftools__profiles__profile__pack(&b.prof, buf);
		err = pb_write_gzip(buf, len, out);
	}
	b.prof.string_table = NULL;
	b.prof.period_type = NULL;
	pb_free(&b);
	free(buf);
	return err;
}
