// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: tracepoint filters (lib/collect/tpfilter.c), the
 * expressions a client sends root perfmarkd.  The input is an expression,
 * compiled against a format with a field of every kind
 * (tests/tp-testfmt.h).  Whatever compiles must be a program the BPF side
 * can run as it is (CHECKed: its size, forward jumps, known operations and
 * strings, fields inside the entry), and it must evaluate on entries whole,
 * cut short and mangled (the reference evaluator, which the BPF program
 * mirrors) without reading outside them (ASan).  What does not compile
 * must say why, in one printable line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "tpfilter.h"
#include "tpformat.h"
#include "../tp-testfmt.h"

static struct tpformat *fmt;

static void check_program(const struct pm_tp_cfg *c)
{
	uint32_t i, fixed = tpformat__fixed(fmt);

	CHECK(c->nr_insns >= 1 && c->nr_insns <= PM_TPF_MAX_INSNS, "%u instructions", c->nr_insns);
	for (i = 0; i < c->nr_insns; i++) {
		const struct pm_tp_insn *in = &c->insn[i];

		switch (in->op) {
		case PM_TPF_NUM:
			CHECK(in->size == 1 || in->size == 2 || in->size == 4 || in->size == 8,
			      "size %u", in->size);
			CHECK(in->off + in->size <= fixed, "field at %u+%u", in->off, in->size);
			CHECK(in->cmp >= PM_TPF_EQ && in->cmp <= PM_TPF_AND, "cmp %u", in->cmp);
			break;
		case PM_TPF_STR:
			CHECK(in->val < PM_TPF_MAX_STRS && in->str_len <= PM_TPF_STR_MAX, "string %llu",
			      (unsigned long long)in->val);
			CHECK(strnlen(c->strs[in->val], PM_TPF_STR_MAX) == in->str_len, "string length");
			CHECK(in->off + in->size <= fixed, "field at %u+%u", in->off, in->size);
			CHECK(in->cmp >= PM_TPF_MATCH_FULL && in->cmp <= PM_TPF_MATCH_MIDDLE, "cmp %u", in->cmp);
			break;
		case PM_TPF_JF:
		case PM_TPF_JT:
			CHECK(in->val > i && in->val <= c->nr_insns, "jump from %u to %llu", i,
			      (unsigned long long)in->val);
			break;
		case PM_TPF_NOT:
			break;
		default:
			CHECK(0, "op %u", in->op);
		}
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct pm_tp_cfg c;
	uint8_t e[256];
	char *expr, err[256] = "";
	size_t n, i;
	int r;

	if (!fmt) {
		CHECK(!tpformat__parse(&fmt, "test", fmt_text, sizeof(fmt_text) - 1, err, sizeof(err)),
		      "%s", err);
	}
	expr = malloc(size + 1);
	CHECK(expr, "out of memory");
	memcpy(expr, data, size);
	expr[size] = '\0';
	memset(&c, 0xa5, sizeof(c));
	r = tpfilter_compile(expr, fmt, &c, err, sizeof(err));
	if (r) {
		CHECK(r == -EINVAL, "returned %d", r);
		CHECK(c.nr_insns == 0, "a refused filter left %u instructions", c.nr_insns);
		CHECK(err[0], "no message");
		for (i = 0; err[i]; i++)
			CHECK(err[i] >= 0x20 && err[i] < 0x7f, "byte 0x%02x in the message", (unsigned char)err[i]);
		free(expr);
		return 0;
	}
	check_program(&c);
	n = entry(e, "kworker/0:1", -5, 0x14, 200, -300, "/etc/passwd", "relative");
	/* whole, cut anywhere, and with its dynamic fields pointing anywhere */
	for (i = 0; i <= n; i++) {
		uint8_t *cut = malloc(i ? i : 1);

		CHECK(cut, "out of memory");
		memcpy(cut, e, i);
		(void)tpfilter_eval(&c, cut, i);
		free(cut);
	}
	for (i = 0; i < size && i < 16; i++) {
		e[44 + (i & 3)] = data[i];
		e[72 + (i & 3)] = data[size - 1 - i];
		(void)tpfilter_eval(&c, e, n);
	}
	free(expr);
	return 0;
}
