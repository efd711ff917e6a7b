// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The pre-scan of CFA programs and the pointer encodings it shares with the
 * table builder.  See cfi_scan.h.
 *
 * The decoding follows DWARF 5 section 6.4.2 and what libdw 0.188's
 * execute_cfi() does with each op (which ops it knows, which operands it
 * reads, where it stops with an error), strictly: an op whose operands are
 * not all inside the program is where the run stops (the caller makes
 * libdw see it so).
 */
#include <dwarf.h>
#include <stddef.h>

#include "cfi_scan.h"

#define PE_FMT_MASK 0x0f
#define PE_APP_MASK 0x70
#define PE_ULEB128  0x01
#define PE_UDATA2   0x02
#define PE_UDATA4   0x03
#define PE_UDATA8   0x04
#define PE_SLEB128  0x09
#define PE_SDATA2   0x0a
#define PE_SDATA4   0x0b
#define PE_SDATA8   0x0c

bool cfi_read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return false;
		b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	*out = v;
	return true;
}

/* little-endian fixed-size value (x86-64 only) */
static bool read_fixed(const uint8_t **p, const uint8_t *end, size_t n, bool sign, uint64_t *out)
{
	uint64_t v = 0;

	if (*p > end || (size_t)(end - *p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	*p += n;
	*out = v;
	return true;
}

bool cfi_read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end,
		      uint64_t field_addr, bool with_app, uint64_t *out)
{
	static const struct { uint8_t fmt, size; bool sign; } fixed[] = {
		{ PE_ABSPTR, 8, false }, { PE_UDATA2, 2, false }, { PE_UDATA4, 4, false },
		{ PE_UDATA8, 8, false }, { PE_SDATA2, 2, true }, { PE_SDATA4, 4, true },
		{ PE_SDATA8, 8, true },
	};
	uint8_t fmt = enc & PE_FMT_MASK, app = enc & PE_APP_MASK;
	bool ok = false;
	size_t i;

	if (enc == PE_OMIT || (enc & 0x80))   /* omitted, or indirect: not for FDEs */
		return false;
	if (fmt == PE_ULEB128 || fmt == PE_SLEB128) {
		ok = cfi_read_leb(p, end, fmt == PE_SLEB128, out);
	} else {
		for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
			if (fixed[i].fmt == fmt)
				ok = read_fixed(p, end, fixed[i].size, fixed[i].sign, out);
	}
	if (!ok || !with_app)
		return ok;
	if (app == PE_PCREL)
		*out += field_addr;
	else if (app != 0)
		return false;
	return true;
}

/* --- the scan ---------------------------------------------------------------- */

struct scan {
	const struct cfi_prog *pr;
	struct cfi_cost *c;
	const uint8_t *p;
	uint64_t remembered;        /* remember_state ops run so far */
	uint32_t depth;
	uint64_t loc, max_loc;
	bool done;                  /* no call runs further than here */
};

/* work units of running the program up to s->p */
static uint64_t cum(const struct scan *s)
{
	return (uint64_t)(s->p - s->pr->p) + s->remembered * CFI_REMEMBER_COST;
}

/*
 * A row boundary at s->loc.  The builder asks libdw for the row at a
 * (first the FDE's start, then each row's end); a call runs the program
 * until an advance takes the location past a.  So a call ends exactly at
 * each advance to a new highest location, and the next call starts unless
 * that location is past the FDE or the builder's cap on calls is reached.
 */
static void advanced(struct scan *s)
{
	struct cfi_cost *c = s->c;

	if (s->done || s->loc <= s->max_loc)
		return;
	c->work += cum(s) + CFI_CALL_COST;
	s->max_loc = s->loc;
	if (s->loc >= s->pr->hi || c->calls >= s->pr->max_calls)
		s->done = true;
	else
		c->calls++;
}

static bool reg(struct scan *s, uint64_t r)
{
	if (r > s->c->reg)
		s->c->reg = r;
	return true;
}

static bool uleb(struct scan *s, uint64_t *v)
{
	return cfi_read_leb(&s->p, s->pr->end, false, v);
}

static bool sleb(struct scan *s)
{
	uint64_t v;

	return cfi_read_leb(&s->p, s->pr->end, true, &v);
}

static bool uleb_reg(struct scan *s)
{
	uint64_t r;

	return uleb(s, &r) && reg(s, r);
}

/* a DW_FORM_block: ULEB128 length, then that many bytes */
static bool block(struct scan *s)
{
	uint64_t n;

	if (!uleb(s, &n) || n > (uint64_t)(s->pr->end - s->p))
		return false;
	s->p += n;
	s->c->expr += n;
	if (n > s->c->expr_max)
		s->c->expr_max = n;
	return true;
}

static bool advance(struct scan *s, size_t n, uint64_t delta)
{
	uint64_t v = delta;

	if (n && !read_fixed(&s->p, s->pr->end, n, false, &v))
		return false;
	if (s->pr->cie)                 /* libdw: no row can start in a CIE */
		return false;
	s->loc += v * s->pr->caf;
	advanced(s);
	return true;
}

/* One op at s->p; false: libdw's run stops there with an error. */
static bool op(struct scan *s)
{
	uint8_t o = *s->p++;
	uint64_t v;

	switch (o & 0xc0) {
	case DW_CFA_advance_loc:
		return advance(s, 0, o & 0x3f);
	case DW_CFA_offset:
		return reg(s, o & 0x3f) && uleb(s, &v);
	case DW_CFA_restore:
		return !s->pr->cie && reg(s, o & 0x3f);
	}
	switch (o) {
	case DW_CFA_nop:
	case DW_CFA_GNU_window_save:    /* x86-64: SPARC's shorthand, registers 8..31 */
		return o == DW_CFA_nop || reg(s, 31);
	case DW_CFA_set_loc:
		if (s->pr->cie || !s->pr->addr_of ||
		    !cfi_read_encoded(s->pr->fde_enc, &s->p, s->pr->end,
				      s->pr->addr_of(s->pr->ctx, s->p), true, &s->loc))
			return false;
		advanced(s);
		return true;
	case DW_CFA_advance_loc1:
		return advance(s, 1, 0);
	case DW_CFA_advance_loc2:
		return advance(s, 2, 0);
	case DW_CFA_advance_loc4:
		return advance(s, 4, 0);
	case DW_CFA_MIPS_advance_loc8:
		return advance(s, 8, 0);
	case DW_CFA_offset_extended:
	case DW_CFA_val_offset:
	case DW_CFA_GNU_negative_offset_extended:
	case DW_CFA_def_cfa:
	case DW_CFA_register:
		return uleb_reg(s) && (o == DW_CFA_register ? uleb_reg(s) : uleb(s, &v));
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
	case DW_CFA_def_cfa_sf:
		return uleb_reg(s) && sleb(s);
	case DW_CFA_restore_extended:
		return !s->pr->cie && uleb_reg(s);
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_def_cfa_register:
		return uleb_reg(s);
	case DW_CFA_def_cfa_offset:
	case DW_CFA_GNU_args_size:
		return uleb(s, &v);
	case DW_CFA_def_cfa_offset_sf:
		return sleb(s);
	case DW_CFA_def_cfa_expression:
		return block(s);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		return uleb_reg(s) && block(s);
	case DW_CFA_remember_state:
		s->remembered++;
		if (++s->depth > s->c->depth)
			s->c->depth = s->depth;
		return true;
	case DW_CFA_restore_state:
		if (!s->depth)
			return false;
		s->depth--;
		return true;
	default:                        /* not an op libdw knows */
		return false;
	}
}

void cfi_scan(const struct cfi_prog *pr, struct cfi_cost *c)
{
	struct scan s = { .pr = pr, .c = c, .p = pr->p, .loc = pr->lo, .max_loc = pr->lo };

	*c = (struct cfi_cost){ .calls = 1 };
	while (s.p < pr->end) {
		const uint8_t *at = s.p;

		if (!op(&s)) {
			s.p = at;
			c->fail = at;
			break;
		}
		/* past the limits: the object is refused, no need to read on */
		if (!cfi_cost_ok(c))
			break;
	}
	c->cost = cum(&s);
	if (!s.done)                    /* the last call runs to the end, or to the error */
		c->work += c->cost + CFI_CALL_COST;
}

bool cfi_cost_ok(const struct cfi_cost *c)
{
	return c->depth <= CFI_MAX_DEPTH && c->reg <= CFI_MAX_REG && c->expr_max <= CFI_MAX_EXPR &&
	       c->expr <= CFI_MAX_EXPR_TOTAL;
}
