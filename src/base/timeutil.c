/*
 * timeutil.c — base layer: ISO-8601 instants without the C library's time zone state
 * (timegm and friends are not thread-safe everywhere and read TZ). The
 * one exception is zc_time_local_date: a local day needs the zone rules,
 * so it asks localtime_r (thread-safe). It never reads the clock for a
 * rule: the caller's clock (injectable, zcor_set_clock) is passed in.
 */
#include "base/timeutil.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/utf8.h"

int64_t zc_time_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double zc_time_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Howard Hinnant's days_from_civil / civil_from_days. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yy + (*m <= 2);
}

struct parts {
	int64_t y;
	unsigned mo, d, h, mi, s, ms;
};

static void split(int64_t ms, struct parts *p)
{
	int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
	int64_t rem = ms - days * 86400000;
	civil_from_days(days, &p->y, &p->mo, &p->d);
	p->h = (unsigned)(rem / 3600000);
	p->mi = (unsigned)(rem / 60000 % 60);
	p->s = (unsigned)(rem / 1000 % 60);
	p->ms = (unsigned)(rem % 1000);
}

/* Writes v as exactly n decimal digits (v < 10^n). */
static char *put_digits(char *o, unsigned v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		o[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return o + n;
}

void zc_time_format(int64_t ms, char out[ZC_TIME_LEN])
{
	struct parts p;
	split(ms, &p);
	if (p.y < 0 || p.y > 9999) { /* what %04lld makes of any other year */
		snprintf(out, ZC_TIME_LEN, "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", (long long)p.y, p.mo,
			 p.d, p.h, p.mi, p.s, p.ms);
		return;
	}
	/* the same text without snprintf: three in every search hit and every
	 * logged QQ message (issues 19 and 15), where
	 * snprintf was 3,500 instructions each */
	char *o = put_digits(out, (unsigned)p.y, 4);
	*o++ = '-';
	o = put_digits(o, p.mo, 2);
	*o++ = '-';
	o = put_digits(o, p.d, 2);
	*o++ = 'T';
	o = put_digits(o, p.h, 2);
	*o++ = ':';
	o = put_digits(o, p.mi, 2);
	*o++ = ':';
	o = put_digits(o, p.s, 2);
	*o++ = '.';
	o = put_digits(o, p.ms, 3);
	*o++ = 'Z';
	*o = '\0';
}

void zc_time_stamp(int64_t ms, char out[ZC_TIME_LEN])
{
	struct parts p;
	split(ms, &p);
	snprintf(out, ZC_TIME_LEN, "%04lld%02u%02uT%02u%02u%02u%03uZ", (long long)p.y, p.mo, p.d, p.h,
		 p.mi, p.s, p.ms);
}

static int digits(const char **s, int n, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*s)[i];
		if (c < '0' || c > '9')
			return -1;
		v = v * 10 + (unsigned)(c - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

static int bad(struct zc_err *e, const char *field, const char *s, const char *why)
{
	return zc_fail(e, ZCOR_EINVAL,
		       "argument '%s': '%s' %s; use ISO-8601 with a time zone, e.g. "
		       "2026-11-29T20:00:00+08:00",
		       field, ZC_Q(s, 64), why);
}

int zc_time_parse(const char *str, const char *field, int64_t *ms, struct zc_err *e)
{
	const char *s = str;
	unsigned y, mo, d, h = 0, mi = 0, sec = 0, frac = 0;
	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' || digits(&s, 2, &d))
		return bad(e, field, str, "is not a date-time");
	if (*s == '\0')
		return bad(e, field, str, "has no time and no time zone");
	if (*s != 'T' && *s != 't' && *s != ' ')
		return bad(e, field, str, "is not a date-time");
	s++;
	if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi))
		return bad(e, field, str, "has no valid time");
	if (*s == ':') {
		s++;
		if (digits(&s, 2, &sec))
			return bad(e, field, str, "has no valid seconds");
		if (*s == '.' || *s == ',') {
			s++;
			int n = 0;
			unsigned scale = 100;
			while (*s >= '0' && *s <= '9') {
				if (n < 3)
					frac += (unsigned)(*s - '0') * scale;
				scale /= 10;
				n++;
				s++;
			}
			if (n == 0)
				return bad(e, field, str, "has an empty fraction");
		}
	}
	int offset_min;
	if (*s == 'Z' || *s == 'z') {
		offset_min = 0;
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s == '-' ? -1 : 1;
		unsigned oh, om = 0;
		s++;
		if (digits(&s, 2, &oh))
			return bad(e, field, str, "has a malformed time zone");
		if (*s == ':')
			s++;
		if (*s && digits(&s, 2, &om))
			return bad(e, field, str, "has a malformed time zone");
		if (oh > 23 || om > 59)
			return bad(e, field, str, "has a malformed time zone");
		offset_min = sign * (int)(oh * 60 + om);
	} else if (*s == '\0') {
		return bad(e, field, str, "has no time zone");
	} else {
		return bad(e, field, str, "has trailing text");
	}
	if (*s != '\0')
		return bad(e, field, str, "has trailing text");
	static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60)
		return bad(e, field, str, "is out of range");
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return bad(e, field, str, "is out of range");
	if (sec == 60)
		sec = 59;
	int64_t days = days_from_civil(y, mo, d);
	*ms = ((days * 24 + h) * 60 + mi) * 60000 + (int64_t)sec * 1000 + frac -
	      (int64_t)offset_min * 60000;
	return ZCOR_OK;
}

void zc_time_local_date(int64_t ms, char out[ZC_DATE_LEN])
{
	time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	struct tm tm;
	if (!localtime_r(&t, &tm)) {
		snprintf(out, ZC_DATE_LEN, "0000-00-00");
		return;
	}
	char buf[48];
	snprintf(buf, sizeof(buf), "%04d-%02d-%02d", (tm.tm_year + 1900) % 10000, tm.tm_mon + 1,
		 tm.tm_mday);
	memcpy(out, buf, ZC_DATE_LEN - 1);
	out[ZC_DATE_LEN - 1] = '\0';
}
