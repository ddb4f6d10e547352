/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Arithmetic on the nanosecond timestamps a trace carries, for every exporter. A trace file is
 * input like any other: a crafted one may hold INT64_MAX or UINT64_MAX anywhere, so nothing
 * here overflows: sums saturate, a difference of values out of order is 0, and values for
 * the signed int64 fields of Perfetto (whose trace processor reads every timestamp as int64)
 * are kept within [0, INT64_MAX]. Saturation is monotonic: an order between two timestamps
 * (a slice's begin not after its end) survives it.
 */
#ifndef __GPUCTX_TSMATH_H
#define __GPUCTX_TSMATH_H

#include <stdint.h>
#include <linux/types.h>

static inline __u64 gctx_ts_add(__u64 a, __u64 b)
{
	__u64 r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline __u64 gctx_ts_sub(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

/* a as an int64 timestamp: values past INT64_MAX saturate */
static inline __s64 gctx_ts_s64(__u64 a)
{
	return a > (__u64)INT64_MAX ? INT64_MAX : (__s64)a;
}

/* b - a (another clock's offset from this one) as int64, saturated both ways */
static inline __s64 gctx_ts_offset(__u64 a, __u64 b)
{
	if (b >= a)
		return gctx_ts_s64(b - a);
	return a - b > (__u64)INT64_MAX ? -INT64_MAX : -(__s64)(a - b);
}

/* a + b and a - b of offsets, saturated both ways */
static inline __s64 gctx_off_add(__s64 a, __s64 b)
{
	__s64 r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline __s64 gctx_off_sub(__s64 a, __s64 b)
{
	__s64 r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* ts moved by off (gctx_ts_offset), as an int64 timestamp within [0, INT64_MAX] */
static inline __s64 gctx_ts_shift(__u64 ts, __s64 off)
{
	__s64 r;

	if (__builtin_add_overflow(gctx_ts_s64(ts), off, &r))
		return off > 0 ? INT64_MAX : 0;
	return r < 0 ? 0 : r;
}

#endif /* __GPUCTX_TSMATH_H */
