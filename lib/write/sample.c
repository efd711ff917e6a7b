// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Encoding of perfmark's samples and sample_id trailers (perfdata.h).  The
 * decoding side, for any sample_type, is evlist.c.
 */
#include "perfdata.h"

#include <errno.h>
#include <string.h>

static size_t raw_field_size(uint32_t raw_size)
{
	/* u32 size + data, padded so the pair is a multiple of 8 */
	return ((size_t)raw_size + 4 + 7) & ~(size_t)7;
}

size_t perfdata_sample_size(uint64_t sample_type, const struct perfdata_sample *s)
{
	size_t size = sizeof(struct perf_event_header);

	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		size += 8;
	if (sample_type & PERF_SAMPLE_IP)
		size += 8;
	if (sample_type & PERF_SAMPLE_TID)
		size += 8;
	if (sample_type & PERF_SAMPLE_TIME)
		size += 8;
	if (sample_type & PERF_SAMPLE_CPU)
		size += 8;
	if (sample_type & PERF_SAMPLE_PERIOD)
		size += 8;
	if (sample_type & PERF_SAMPLE_CALLCHAIN)
		size += 8 + (size_t)s->nr_ips * 8;
	if (sample_type & PERF_SAMPLE_RAW)
		size += raw_field_size(s->raw_size);
	if (sample_type & PERF_SAMPLE_REGS_USER)
		size += 8 + (s->regs_abi ? (size_t)s->nr_regs * 8 : 0);
	if (sample_type & PERF_SAMPLE_STACK_USER)
		size += 8 + (s->stack_size ? (size_t)s->stack_size + 8 : 0);
	return size;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static uint8_t *put32x2(uint8_t *p, uint32_t a, uint32_t b)
{
	memcpy(p, &a, 4);
	memcpy(p + 4, &b, 4);
	return p + 8;
}

size_t perfdata_encode_sample(void *buf, uint64_t sample_type,
			      const struct perfdata_sample *s)
{
	size_t size = perfdata_sample_size(sample_type, s);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, s->misc, (uint16_t)size };
	uint8_t *p = buf;

	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		p = put64(p, s->id);
	if (sample_type & PERF_SAMPLE_IP)
		p = put64(p, s->ip);
	if (sample_type & PERF_SAMPLE_TID)
		p = put32x2(p, s->pid, s->tid);
	if (sample_type & PERF_SAMPLE_TIME)
		p = put64(p, s->time);
	if (sample_type & PERF_SAMPLE_CPU)
		p = put32x2(p, s->cpu, 0);
	if (sample_type & PERF_SAMPLE_PERIOD)
		p = put64(p, s->period);
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		p = put64(p, s->nr_ips);
		if (s->nr_ips)
			memcpy(p, s->ips, (size_t)s->nr_ips * 8);
		p += (size_t)s->nr_ips * 8;
	}
	if (sample_type & PERF_SAMPLE_RAW) {
		size_t field = raw_field_size(s->raw_size);
		uint32_t padded = (uint32_t)(field - 4);

		memcpy(p, &padded, 4);
		if (s->raw_size)
			memcpy(p + 4, s->raw, s->raw_size);
		memset(p + 4 + s->raw_size, 0, padded - s->raw_size);
		p += field;
	}
	if (sample_type & PERF_SAMPLE_REGS_USER) {
		p = put64(p, s->regs_abi);
		if (s->regs_abi) {
			memcpy(p, s->regs, (size_t)s->nr_regs * 8);
			p += (size_t)s->nr_regs * 8;
		}
	}
	if (sample_type & PERF_SAMPLE_STACK_USER) {
		p = put64(p, s->stack_size);
		if (s->stack_size) {
			memcpy(p, s->stack, s->stack_size);
			p = put64(p + s->stack_size, s->stack_size);
		}
	}
	return (size_t)(p - (uint8_t *)buf);
}

void perfdata_encode_sample_id(void *p, const struct perfdata_sample_id *sid)
{
	uint8_t *q = p;

	q = put32x2(q, sid->pid, sid->tid);
	q = put64(q, sid->time);
	q = put32x2(q, sid->cpu, 0);
	put64(q, sid->id);
}

int perfdata_decode_sample_id(const void *rec, size_t len, struct perfdata_sample_id *sid)
{
	const uint8_t *q = (const uint8_t *)rec + len - PERFDATA_SAMPLE_ID_SIZE;

	if (len < sizeof(struct perf_event_header) + PERFDATA_SAMPLE_ID_SIZE)
		return -EINVAL;
	memcpy(&sid->pid, q, 4);
	memcpy(&sid->tid, q + 4, 4);
	memcpy(&sid->time, q + 8, 8);
	memcpy(&sid->cpu, q + 16, 4);
	memcpy(&sid->id, q + 24, 8);
	return 0;
}

int perfdata_set_sample_id(void *rec, size_t len, const struct perfdata_sample_id *sid)
{
	if (len < sizeof(struct perf_event_header) + PERFDATA_SAMPLE_ID_SIZE)
		return -EINVAL;
	perfdata_encode_sample_id((uint8_t *)rec + len - PERFDATA_SAMPLE_ID_SIZE, sid);
	return 0;
}
