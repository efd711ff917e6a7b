/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tracepoint format of our own for the tests (test-tracepoint.c) and the
 * filter's fuzz target (fuzz/fuzz-tpfilter.c): a field of every kind the
 * filter and the decoder meet, and entries of it.
 */
#ifndef PERFMARK_TP_TESTFMT_H
#define PERFMARK_TP_TESTFMT_H

#include <stdint.h>
#include <string.h>

/* an event with a field of every kind the filter and the decoder meet */
static const char fmt_text[] __attribute__((unused)) =
	"name: tevt\n"
	"ID: 999\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:int val;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned long mask;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned char small;\toffset:40;\tsize:1;\tsigned:0;\n"
	"\tfield:short neg;\toffset:42;\tsize:2;\tsigned:1;\n"
	"\tfield:__data_loc char[] name;\toffset:44;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long args[2];\toffset:48;\tsize:16;\tsigned:0;\n"
	"\tfield:void * ptr;\toffset:64;\tsize:8;\tsigned:0;\n"
	"\tfield:__rel_loc char[] rname;\toffset:72;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"comm=%s val=%d name=%s rname=%s\", REC->comm, REC->val, __get_str(name), "
	"__get_rel_str(rname)\n";

/* an entry of tevt: comm, val, mask, small, neg, name, rname; returns its size */
static inline size_t entry(uint8_t *e, const char *comm, int32_t val, uint64_t mask, uint8_t small,
		    int16_t neg, const char *name, const char *rname)
{
	size_t nl = strlen(name) + 1, rl = strlen(rname) + 1;
	uint32_t loc = 76 | (uint32_t)nl << 16, rloc = (uint32_t)(76 + nl - 76) | (uint32_t)rl << 16;
	uint16_t type = 999;
	uint64_t args[2] = { 7, 8 }, ptr = 0xffffffff81000000ull;

	memset(e, 0, 256);
	memcpy(e, &type, 2);
	strncpy((char *)e + 8, comm, 16);
	memcpy(e + 24, &val, 4);
	memcpy(e + 32, &mask, 8);
	e[40] = small;
	memcpy(e + 42, &neg, 2);
	memcpy(e + 44, &loc, 4);
	memcpy(e + 48, args, 16);
	memcpy(e + 64, &ptr, 8);
	memcpy(e + 72, &rloc, 4);
	memcpy(e + 76, name, nl);
	memcpy(e + 76 + nl, rname, rl);
	return 76 + nl + rl;
}

#endif
