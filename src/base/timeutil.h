/*
 * timeutil.h — instants as int64 milliseconds since the epoch (UTC), and
 * their ISO-8601 text. zcor always writes UTC with milliseconds
 * ("2026-11-29T19:25:00.123Z") and reads any offset.
 */
#ifndef ZC_TIMEUTIL_H
#define ZC_TIMEUTIL_H

#include <stdint.h>

#include "base/err.h"

#define ZC_TIME_LEN 32

int64_t zc_time_now_ms(void);
/* A monotonic clock in milliseconds (with fractions), for durations. */
double zc_time_mono_ms(void);
/* Writes the UTC ISO-8601 text of ms into out (ZC_TIME_LEN bytes). */
void zc_time_format(int64_t ms, char out[ZC_TIME_LEN]);
/* Compact UTC stamp for file names: 20261129T192500123Z. */
void zc_time_stamp(int64_t ms, char out[ZC_TIME_LEN]);
/*
 * Parses ISO-8601 date-time with a required zone (Z or ±HH:MM). `field`
 * names the argument in the error. Returns ZCOR_OK or ZCOR_EINVAL.
 */
int zc_time_parse(const char *s, const char *field, int64_t *ms, struct zc_err *e);
/* The local calendar date of ms, "YYYY-MM-DD", in the process's time zone
 * (TZ): the day boundary of seed 003's digest and log files. */
#define ZC_DATE_LEN 11
void zc_time_local_date(int64_t ms, char out[ZC_DATE_LEN]);

#endif
