// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tracepoint filters: a recursive-descent parser that compiles as it goes
 * into one-register code with short-circuit jumps.  See tpfilter.h.
 *
 *   A || B   A; JT end; B; end:       A && B   A; JF end; B; end:
 *   ! A      A; NOT                   (A)      A
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errline.h"
#include "tpfilter.h"
#include "tpformat.h"

struct parser {
	const char *s, *p;            /* the expression, where we are */
	const struct tpformat *f;
	struct pm_tp_cfg *out;
	uint32_t n;                   /* instructions emitted */
	uint32_t nstr;
	int depth;
	char *err;
	size_t errlen;
	int e;                        /* first error */
};

/* A piece of the expression for a message: printable ASCII only, cut short. */
static const char *quote(const char *s, size_t n, char *buf, size_t len)
{
	size_t i;

	if (n > len - 4)
		n = len - 4;
	for (i = 0; i < n && s[i]; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[i] = '\0';
	if (s[i] && i == len - 4)
		strcpy(buf + i, "...");
	return buf;
}

__attribute__((format(printf, 2, 3)))
static int fail(struct parser *ps, const char *fmt, ...)
{
	char msg[160], at[40];
	va_list ap;

	if (ps->e)
		return ps->e;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (*ps->p)
		errline(ps->err, ps->errlen, "bad filter for %s:%s: %s at '%s'", tpformat__sys(ps->f),
			tpformat__name(ps->f), msg, quote(ps->p, 24, at, sizeof(at)));
	else
		errline(ps->err, ps->errlen, "bad filter for %s:%s: %s at its end",
			tpformat__sys(ps->f), tpformat__name(ps->f), msg);
	ps->e = -EINVAL;
	return ps->e;
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
		ps->p++;
}

static bool take(struct parser *ps, const char *tok)
{
	size_t n = strlen(tok);

	skip_space(ps);
	if (strncmp(ps->p, tok, n))
		return false;
	ps->p += n;
	return true;
}

static struct pm_tp_insn *emit(struct parser *ps, uint8_t op)
{
	struct pm_tp_insn *in;

	if (ps->n >= PM_TPF_MAX_INSNS) {
		fail(ps, "too complex (at most %d steps)", PM_TPF_MAX_INSNS);
		return NULL;
	}
	in = &ps->out->insn[ps->n++];
	memset(in, 0, sizeof(*in));
	in->op = op;
	return in;
}

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* --- one comparison -------------------------------------------------------- */

struct value {
	bool quoted;
	const char *s;       /* its text (a quoted one without the quotes) */
	size_t len;
};

static int read_value(struct parser *ps, struct value *v)
{
	skip_space(ps);
	v->quoted = *ps->p == '"' || *ps->p == '\'';
	if (v->quoted) {
		const char *end = strchr(ps->p + 1, *ps->p);

		if (!end)
			return fail(ps, "a string without its closing quote");
		v->s = ps->p + 1;
		v->len = (size_t)(end - v->s);
		ps->p = end + 1;
		return 0;
	}
	v->s = ps->p;
	while (*ps->p && (is_word(*ps->p) || strchr("-+*?.:/[]", *ps->p)))
		ps->p++;
	v->len = (size_t)(ps->p - v->s);
	if (!v->len)
		return fail(ps, "a value expected");
	return 0;
}

static int number(struct parser *ps, const struct value *v, const struct tpfield *fd, uint64_t *out)
{
	char buf[32], *end;

	if (v->quoted || v->len >= sizeof(buf))
		return fail(ps, "'%s' is a number: not a string", fd->name);
	memcpy(buf, v->s, v->len);
	buf[v->len] = '\0';
	errno = 0;
	if (buf[0] == '-')
		*out = (uint64_t)strtoll(buf, &end, 0);
	else
		*out = strtoull(buf, &end, 0);
	if (errno || end == buf || *end || buf[0] == '+')
		return fail(ps, "'%s' is a number: '%s' is not one", fd->name, quote(v->s, v->len, buf, 24));
	/* the constant as the field is loaded: sign-extended from its size */
	if (fd->sgn && fd->size < 8) {
		int64_t lo = -((int64_t)1 << (fd->size * 8 - 1)), hi = ((int64_t)1 << (fd->size * 8 - 1)) - 1;

		if ((int64_t)*out < lo || (int64_t)*out > hi)
			return fail(ps, "%s does not fit in '%s' (%u bytes, signed)", v->len < 24 ? buf : "the value",
				    fd->name, fd->size);
	} else if (!fd->sgn && fd->size < 8 && *out >> (fd->size * 8) && buf[0] != '-') {
		return fail(ps, "%s does not fit in '%s' (%u bytes)", v->len < 24 ? buf : "the value",
			    fd->name, fd->size);
	}
	return 0;
}

/* the string constant's match kind; its text (without the globs) into strs[] */
static int string(struct parser *ps, const struct value *v, bool glob, struct pm_tp_insn *in)
{
	const char *s = v->s;
	size_t len = v->len, i;
	uint8_t cmp = PM_TPF_MATCH_FULL;

	if (glob) {
		bool front = len && s[0] == '*', back = len > front && s[len - 1] == '*';

		s += front;
		len -= front + back;
		cmp = front && back ? PM_TPF_MATCH_MIDDLE : front ? PM_TPF_MATCH_SUFFIX :
		      back ? PM_TPF_MATCH_PREFIX : PM_TPF_MATCH_FULL;
		if (!front && !back && !len)
			cmp = PM_TPF_MATCH_FULL;
		if (memchr(s, '*', len) || memchr(s, '?', len) || memchr(s, '[', len))
			return fail(ps, "globs are \"x*\", \"*x\" and \"*x*\" (no ?, [...] or * inside)");
	}
	if (len > PM_TPF_STR_MAX)
		return fail(ps, "a string of %zu bytes (at most %d)", len, PM_TPF_STR_MAX);
	for (i = 0; i < len; i++)
		if (!s[i])
			return fail(ps, "a NUL in a string");
	if (ps->nstr >= PM_TPF_MAX_STRS)
		return fail(ps, "too many strings (at most %d)", PM_TPF_MAX_STRS);
	memset(ps->out->strs[ps->nstr], 0, PM_TPF_STR_MAX);
	memcpy(ps->out->strs[ps->nstr], s, len);
	in->val = ps->nstr++;
	in->str_len = (uint8_t)len;
	in->cmp = cmp;
	return 0;
}

static const struct { const char *tok; uint8_t cmp; } ops[] = {
	{ "==", PM_TPF_EQ }, { "!=", PM_TPF_NE }, { "<=", PM_TPF_LE }, { ">=", PM_TPF_GE },
	{ "<", PM_TPF_LT }, { ">", PM_TPF_GT }, { "~", 0 }, { "&", PM_TPF_AND },
};

static int compile_predicate(struct parser *ps, const struct tpfield *fd, uint8_t cmp, bool glob,
			     const struct value *v);

static int predicate(struct parser *ps)
{
	const struct tpfield *fd;
	char name[64];
	const char *start, *after;
	struct value v = { 0 };
	uint8_t cmp = 0;
	bool glob = false;
	size_t i, n;
	int e;

	skip_space(ps);
	start = ps->p;
	while (is_word(*ps->p))
		ps->p++;
	n = (size_t)(ps->p - start);
	if (!n) {
		ps->p = start;
		return fail(ps, "a field name expected");
	}
	if (n >= sizeof(name)) {
		ps->p = start;
		return fail(ps, "a field name of %zu bytes", n);
	}
	memcpy(name, start, n);
	name[n] = '\0';
	fd = tpformat__find(ps->f, name);
	if (!fd) {
		ps->p = start;
		return fail(ps, "no field '%s'", name);
	}
	skip_space(ps);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(ps->p, ops[i].tok, strlen(ops[i].tok)) &&
		    !(ops[i].tok[0] == '&' && ps->p[1] == '&'))
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return fail(ps, "a comparison expected (== != < <= > >= & ~)");
	ps->p += strlen(ops[i].tok);
	cmp = ops[i].cmp;
	glob = !strcmp(ops[i].tok, "~");
	if (read_value(ps, &v))
		return ps->e;
	/* what is wrong with the comparison is said where it starts */
	after = ps->p;
	ps->p = start;
	e = compile_predicate(ps, fd, cmp, glob, &v);
	if (!e)
		ps->p = after;
	return e;
}

static int compile_predicate(struct parser *ps, const struct tpfield *fd, uint8_t cmp, bool glob,
			     const struct value *v)
{
	struct pm_tp_insn *in;
	uint64_t k = 0;
	char buf[40];

	switch (fd->kind) {
	case TPFIELD_NUM:
		if (glob)
			return fail(ps, "'%s' is a number: ~ compares strings", fd->name);
		if (!(in = emit(ps, PM_TPF_NUM)))
			return ps->e;
		in->cmp = cmp;
		in->off = (uint16_t)fd->off;
		in->size = (uint16_t)fd->size;
		in->flags = fd->sgn ? PM_TPF_SIGNED : 0;
		if (number(ps, v, fd, &k))
			return ps->e;
		in->val = k;
		return 0;
	case TPFIELD_CHARS:
	case TPFIELD_DYNSTR:
		if (cmp != PM_TPF_EQ && cmp != PM_TPF_NE && !glob)
			return fail(ps, "'%s' is a string: it compares with ==, != and ~", fd->name);
		if (!(in = emit(ps, PM_TPF_STR)))
			return ps->e;
		in->off = (uint16_t)fd->off;
		in->size = (uint16_t)fd->size;
		in->flags = (fd->kind == TPFIELD_DYNSTR ? PM_TPF_DYN : 0) | (fd->rel ? PM_TPF_REL : 0) |
			    (cmp == PM_TPF_NE ? PM_TPF_NEG : 0);
		return string(ps, v, glob, in);
	default:
		return fail(ps, "'%s' (%s) is neither a number nor a string",
			    fd->name, quote(fd->type, strlen(fd->type), buf, sizeof(buf)));
	}
}

/* --- expressions ------------------------------------------------------------ */

static int expr(struct parser *ps);

static int unary(struct parser *ps)
{
	int e;

	if (++ps->depth > TPFILTER_DEPTH_MAX)
		return fail(ps, "nested more than %d deep", TPFILTER_DEPTH_MAX);
	skip_space(ps);
	if (ps->p[0] == '!' && ps->p[1] != '=') {
		ps->p++;
		e = unary(ps);
		if (!e && !emit(ps, PM_TPF_NOT))
			e = ps->e;
	} else if (take(ps, "(")) {
		e = expr(ps);
		if (!e && !take(ps, ")"))
			e = fail(ps, "')' expected");
	} else {
		e = predicate(ps);
	}
	ps->depth--;
	return e;
}

/* terms joined by op (&& or ||): each but the last jumps to the end when it decides */
static int chain(struct parser *ps, const char *op, uint8_t jump, int (*term)(struct parser *))
{
	uint32_t pending[PM_TPF_MAX_INSNS], np = 0, i;
	int e = term(ps);

	while (!e && take(ps, op)) {
		struct pm_tp_insn *in = emit(ps, jump);

		if (!in)
			return ps->e;
		pending[np++] = ps->n - 1;
		e = term(ps);
	}
	for (i = 0; !e && i < np; i++)
		ps->out->insn[pending[i]].val = ps->n;
	return e;
}

static int conjunction(struct parser *ps)
{
	return chain(ps, "&&", PM_TPF_JF, unary);
}

static int expr(struct parser *ps)
{
	return chain(ps, "||", PM_TPF_JT, conjunction);
}

int tpfilter_compile(const char *s, const struct tpformat *f, struct pm_tp_cfg *out,
		     char *err, size_t errlen)
{
	struct parser ps = { .s = s, .p = s, .f = f, .out = out, .err = err, .errlen = errlen };
	size_t len = strnlen(s, TPFILTER_LEN_MAX + 1);

	out->nr_insns = 0;
	if (len > TPFILTER_LEN_MAX)
		return errline(err, errlen, "bad filter for %s:%s: longer than %d bytes",
			       tpformat__sys(f), tpformat__name(f), TPFILTER_LEN_MAX);
	if (!expr(&ps)) {
		skip_space(&ps);
		if (*ps.p)
			fail(&ps, ps.p[0] == ')' ? "a ')' without its '('" : "&& or || expected");
	}
	if (!ps.e && !ps.n)
		fail(&ps, "an empty filter");
	if (ps.e)
		return ps.e;
	out->nr_insns = ps.n;
	return 0;
}

/* --- the reference evaluator ----------------------------------------------- */

static uint64_t load(const uint8_t *p, uint32_t size, bool sgn)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return sgn ? (uint64_t)(int64_t)(int8_t)u8 : u8;
	case 2:
		memcpy(&u16, p, 2);
		return sgn ? (uint64_t)(int64_t)(int16_t)u16 : u16;
	case 4:
		memcpy(&u32, p, 4);
		return sgn ? (uint64_t)(int64_t)(int32_t)u32 : u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

static bool eval_num(const struct pm_tp_insn *in, const uint8_t *e, size_t size)
{
	bool sgn = in->flags & PM_TPF_SIGNED;
	uint64_t v, k = in->val;

	if (in->size != 1 && in->size != 2 && in->size != 4 && in->size != 8)
		return false;
	if ((size_t)in->off + in->size > size)
		return false;
	v = load(e + in->off, in->size, sgn);
	switch (in->cmp) {
	case PM_TPF_EQ: return v == k;
	case PM_TPF_NE: return v != k;
	case PM_TPF_LT: return sgn ? (int64_t)v < (int64_t)k : v < k;
	case PM_TPF_LE: return sgn ? (int64_t)v <= (int64_t)k : v <= k;
	case PM_TPF_GT: return sgn ? (int64_t)v > (int64_t)k : v > k;
	case PM_TPF_GE: return sgn ? (int64_t)v >= (int64_t)k : v >= k;
	case PM_TPF_AND: return (v & k) != 0;
	}
	return false;
}

static bool eval_str(const struct pm_tp_cfg *c, const struct pm_tp_insn *in, const uint8_t *e,
		     size_t size)
{
	size_t off = in->off, len = in->size, n = in->str_len, i;
	const char *pat;
	uint32_t loc;
	bool m = false;

	if (in->val >= PM_TPF_MAX_STRS || n > PM_TPF_STR_MAX)
		return false;
	pat = c->strs[in->val];
	if (in->flags & PM_TPF_DYN) {
		if (off + 4 > size)
			return false;
		memcpy(&loc, e + off, 4);
		len = loc >> 16;
		off = ((in->flags & PM_TPF_REL) ? off + 4 : 0) + (loc & 0xffff);
	}
	if (off >= size)
		len = 0;
	else if (len > size - off)
		len = size - off;
	if (len)
		len = strnlen((const char *)e + off, len);
	switch (in->cmp) {
	case PM_TPF_MATCH_FULL:
		m = len == n && !memcmp(e + off, pat, n);
		break;
	case PM_TPF_MATCH_PREFIX:
		m = len >= n && !memcmp(e + off, pat, n);
		break;
	case PM_TPF_MATCH_SUFFIX:
		m = len >= n && !memcmp(e + off + len - n, pat, n);
		break;
	case PM_TPF_MATCH_MIDDLE:
		for (i = 0; !m && i + n <= len; i++)
			m = !memcmp(e + off + i, pat, n);
		break;
	}
	return (in->flags & PM_TPF_NEG) ? !m : m;
}

bool tpfilter_eval(const struct pm_tp_cfg *c, const uint8_t *e, size_t size)
{
	uint32_t pc = 0, steps;
	bool r = true;

	if (!c->nr_insns)
		return true;
	for (steps = 0; steps < PM_TPF_MAX_INSNS && pc < c->nr_insns && pc < PM_TPF_MAX_INSNS; steps++) {
		const struct pm_tp_insn *in = &c->insn[pc++];

		switch (in->op) {
		case PM_TPF_NUM:
			r = eval_num(in, e, size);
			break;
		case PM_TPF_STR:
			r = eval_str(c, in, e, size);
			break;
		case PM_TPF_NOT:
			r = !r;
			break;
		case PM_TPF_JF:
			if (!r)
				pc = (uint32_t)in->val;
			break;
		case PM_TPF_JT:
			if (r)
				pc = (uint32_t)in->val;
			break;
		default:
			return false;
		}
	}
	return r;
}
