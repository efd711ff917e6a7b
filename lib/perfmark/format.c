// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The formats most markers use, formatted without glibc's vfprintf: plain
 * text, %%, and %d %i %u %x %X %o %c %s %p with the length modifiers
 * hh h l ll j z t, no flags, width or precision.  Byte for byte what
 * vsnprintf writes for them (glibc: "(null)" for a NULL %s, "(nil)" for a
 * NULL %p).  Anything else, or a text longer than the buffer, is left to
 * vsnprintf: pm_format returns -1 and the caller starts over from its own
 * va_list.  For "bench %ld" vsnprintf costs about 40 ns on this project's
 * machine, this about 11 (it was 23: a digit per division by a variable
 * base, three libc calls per piece of text, and a va_copy that stalled).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

enum len { L_INT, L_CHAR, L_SHORT, L_LONG, L_LLONG, L_INTMAX, L_SIZE, L_PTRDIFF };

/* "00" "01" ... "99": two decimal digits per step */
static const char pairs[200] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* 0 and 10^1 .. 10^19: the digit count is bits * log10(2), give or take one */
static const uint64_t tens[20] = {
	0, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
	1000000000000ull, 10000000000000ull, 100000000000000ull,
	1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
	1000000000000000000ull, 10000000000000000000ull,
};

static inline unsigned bits(uint64_t v)
{
	return 64u - (unsigned)__builtin_clzll(v | 1);
}

/*
 * Written from the last digit back, its length known first: two digits per
 * division by a constant (a multiply), no reversal.  What was a digit per
 * division by a variable base and a reversed copy cost about 12 ns for six
 * digits on this project's machine; this, about 4.
 */
static size_t put_dec(char *out, uint64_t v)
{
	unsigned t = (bits(v) * 1233u) >> 12;   /* 1233 / 4096 ~ log10(2) */
	size_t len = t + (v >= tens[t]), i = len;

	while (v >= 100) {
		uint64_t q = v / 100;

		i -= 2;
		memcpy(out + i, pairs + 2 * (v - q * 100), 2);
		v = q;
	}
	if (v >= 10)
		memcpy(out + i - 2, pairs + 2 * v, 2);
	else
		out[i - 1] = (char)('0' + v);
	return len;
}

/* shift: 4 (hex) or 3 (octal) */
static size_t put_pow2(char *out, uint64_t v, unsigned shift, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t len = (bits(v) + shift - 1) / shift, i = len;
	unsigned mask = (1u << shift) - 1;

	do {
		out[--i] = digits[v & mask];
		v >>= shift;
	} while (i);
	return len;
}

static int64_t signed_arg(enum len l, va_list *ap)
{
	switch (l) {
	case L_CHAR:    return (signed char)va_arg(*ap, int);
	case L_SHORT:   return (short)va_arg(*ap, int);
	case L_LONG:    return va_arg(*ap, long);
	case L_LLONG:   return va_arg(*ap, long long);
	case L_INTMAX:  return va_arg(*ap, intmax_t);
	case L_SIZE:    return va_arg(*ap, ptrdiff_t);   /* %zd: the signed size_t */
	case L_PTRDIFF: return va_arg(*ap, ptrdiff_t);
	default:        return va_arg(*ap, int);
	}
}

static uint64_t unsigned_arg(enum len l, va_list *ap)
{
	switch (l) {
	case L_CHAR:    return (unsigned char)va_arg(*ap, unsigned);
	case L_SHORT:   return (unsigned short)va_arg(*ap, unsigned);
	case L_LONG:    return va_arg(*ap, unsigned long);
	case L_LLONG:   return va_arg(*ap, unsigned long long);
	case L_INTMAX:  return va_arg(*ap, uintmax_t);
	case L_SIZE:    return va_arg(*ap, size_t);
	case L_PTRDIFF: return (uint64_t)va_arg(*ap, ptrdiff_t);
	default:        return va_arg(*ap, unsigned);
	}
}

static const char *length(const char *f, enum len *l)
{
	*l = L_INT;
	switch (*f) {
	case 'h':
		if (f[1] == 'h') {
			*l = L_CHAR;
			return f + 2;
		}
		*l = L_SHORT;
		return f + 1;
	case 'l':
		if (f[1] == 'l') {
			*l = L_LLONG;
			return f + 2;
		}
		*l = L_LONG;
		return f + 1;
	case 'j': *l = L_INTMAX; return f + 1;
	case 'z': *l = L_SIZE; return f + 1;
	case 't': *l = L_PTRDIFF; return f + 1;
	default:  return f;
	}
}

/*
 * The text up to the next '%' or the end, copied to buf + *n: where it
 * stops, or NULL when it would run past room.  The few bytes most formats
 * have between conversions go one by one (a call into libc costs more than
 * they do), what is left of a long run through strchrnul and memcpy.
 */
static const char *literal(char *buf, size_t *n, size_t room, const char *f)
{
	size_t i = *n, lit;
	const char *end;

	for (unsigned k = 0; k < 8; k++, f++) {
		if (*f == '%' || !*f) {
			*n = i;
			return f;
		}
		if (i >= room)
			return NULL;
		buf[i++] = *f;
	}
	end = strchrnul(f, '%');
	lit = (size_t)(end - f);
	if (lit > room - i)
		return NULL;
	memcpy(buf + i, f, lit);
	*n = i + lit;
	return end;
}

int pm_format(char *buf, size_t cap, const char *fmt, va_list *ap)
{
	size_t n = 0, room = cap - 64;   /* 64: more than the widest conversion */
	const char *f = fmt;

	if (cap <= 64)
		return -1;
	while (*f) {
		enum len l;
		int64_t sv;

		if (n > room || !(f = literal(buf, &n, room, f)))
			goto bail;
		if (!*f)
			break;
		f = length(f + 1, &l);
		switch (*f) {
		case '%':
			if (l != L_INT)
				goto bail;
			buf[n++] = '%';
			break;
		case 'd':
		case 'i':
			sv = signed_arg(l, ap);
			if (sv < 0) {
				buf[n++] = '-';
				n += put_dec(buf + n, (uint64_t)0 - (uint64_t)sv);
			} else {
				n += put_dec(buf + n, (uint64_t)sv);
			}
			break;
		case 'u':
			n += put_dec(buf + n, unsigned_arg(l, ap));
			break;
		case 'x':
		case 'X':
			n += put_pow2(buf + n, unsigned_arg(l, ap), 4, *f == 'X');
			break;
		case 'o':
			n += put_pow2(buf + n, unsigned_arg(l, ap), 3, false);
			break;
		case 'c':
			if (l != L_INT)
				goto bail;
			buf[n++] = (char)va_arg(*ap, int);
			break;
		case 's': {
			const char *s;
			size_t sl;

			if (l != L_INT)
				goto bail;
			s = va_arg(*ap, const char *);
			if (!s)
				s = "(null)";
			sl = strnlen(s, room - n + 1);
			if (n + sl > room)
				goto bail;
			memcpy(buf + n, s, sl);
			n += sl;
			break;
		}
		case 'p': {
			void *p;

			if (l != L_INT)
				goto bail;
			p = va_arg(*ap, void *);
			if (!p) {
				memcpy(buf + n, "(nil)", 5);
				n += 5;
			} else {
				buf[n++] = '0';
				buf[n++] = 'x';
				n += put_pow2(buf + n, (uintptr_t)p, 4, false);
			}
			break;
		}
		default:
			goto bail;      /* flags, width, precision, floats, %n, %m, ... */
		}
		f++;
	}
	buf[n] = '\0';
	return (int)n;
bail:
	return -1;
}
