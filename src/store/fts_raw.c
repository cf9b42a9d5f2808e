/*
 * fts_raw.c — one recall_fts token's postings read straight from the
 * FTS5 index's own tables (store.h, zc_fts_raw_postings). Store layer.
 *
 * Why: recall reads a token's postings by term frequency among the
 * newest 1,024 (lexical.c); through an FTS5 cursor (xQueryPhrase, then
 * xPhraseFirst per row) that costs ~640 instructions a row, and at 1M
 * memories it was half of a bot's turn (issue 14). The segments are
 * FTS5's file format (ext/fts5/fts5_index.c, "Details"), which SQLite
 * keeps readable across versions: a structure record (id 10), per
 * segment its leaves (id segid << 37 | pgno) and a term index
 * (recall_fts_idx), a doclist per term of (rowid, poslist) entries, the
 * rowids delta-encoded. A row's entry in the newest segment that holds
 * it is the row's; an entry with an empty poslist is a deleted row. This
 * walks every segment's doclist of the term in rowid order, merged, and
 * hands each live row with its count of positions to the same choice as
 * zc_postings (zc_postings_sel, fts.c) — so the answer is FTS5's,
 * test_recall's issue14_raw_postings_same_as_fts5 compares them token by
 * token over a store with deletes, updates and merges.
 *
 * It never answers what it cannot read exactly: outside a transaction
 * (its pages must be of one snapshot), inside a write transaction (FTS5
 * keeps a transaction's new rows in memory until the commit), a V2
 * structure (contentless_delete), a column other than the first, or any
 * page that does not parse; the caller then asks FTS5. It only reads.
 */
#include <string.h>

#include "base/alloc.h"
#include "store/store.h"

/* FTS5's limits: segment ids are 16 bits, levels at most 64 */
#define RAW_SEGS_MAX 256
#define RAW_PAGE_MAX 65536 /* a leaf's size field is 16 bits */
#define RAW_TERM_MAX 1024 /* a recall_fts term: scope (128) + \x1F + token, and FTS5's prefix */

/* id of leaf pgno of segment segid in recall_fts_data (FTS5_SEGMENT_ROWID) */
static sqlite3_int64 leaf_id(int segid, int pgno)
{
	return ((sqlite3_int64)segid << (31 + 5 + 1)) + pgno;
}

/* SQLite's varint (FTS5's), at most 9 bytes; 0 when it runs past end */
static int varint(const unsigned char *p, const unsigned char *end, unsigned long long *v)
{
	unsigned long long x = 0;
	for (int i = 0; i < 9; i++) {
		if (p + i >= end)
			return 0;
		if (i == 8) {
			*v = (x << 8) | p[i];
			return 9;
		}
		x = (x << 7) | (p[i] & 0x7f);
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return 0;
}

/* One segment's doclist of the term: its current leaf (a copy; the
 * statement's blob moves on) and where in it the walk is. */
struct seg {
	int segid, pg, last;
	unsigned char *p;
	int cap, szleaf, nn;
	int first_rowid;      /* the leaf's header: the offset of its first rowid, 0: none */
	int end;              /* where this doclist stops on this leaf: its next term, or szleaf */
	int off;
	sqlite3_int64 rowid;  /* the current entry's */
	int tf;               /* its positions */
	int eof;
};

/* Loads leaf pgno of s into s->p. 0 on success, 1 when it is missing or
 * does not parse (*rc stays SQLITE_OK), else *rc is SQLite's error. */
static int load_leaf(struct zc_store *st, struct seg *s, int pgno, int *rc)
{
	sqlite3_stmt *q = zc_stmt(st, "SELECT block FROM recall_fts_data WHERE id = ?1", NULL);
	if (!q) {
		*rc = SQLITE_ERROR;
		return 1;
	}
	sqlite3_bind_int64(q, 1, leaf_id(s->segid, pgno));
	int step = sqlite3_step(q), bad = 1;
	if (step == SQLITE_ROW) {
		const unsigned char *b = sqlite3_column_blob(q, 0);
		int n = sqlite3_column_bytes(q, 0);
		if (b && n >= 4 && n <= RAW_PAGE_MAX) {
			if (n > s->cap) {
				s->p = zc_realloc(s->p, (size_t)n);
				s->cap = n;
			}
			memcpy(s->p, b, (size_t)n);
			s->nn = n;
			s->pg = pgno;
			s->first_rowid = (s->p[0] << 8) | s->p[1];
			s->szleaf = (s->p[2] << 8) | s->p[3];
			bad = s->szleaf < 4 || s->szleaf > n || s->first_rowid >= s->szleaf ||
			      (s->first_rowid && s->first_rowid < 4);
		}
	} else if (step != SQLITE_DONE) {
		*rc = step;
	}
	sqlite3_reset(q);
	if (bad)
		return 1;
	/* the doclist a walk is in stops at the leaf's first term */
	unsigned long long t = 0;
	s->end = s->szleaf;
	if (s->nn > s->szleaf) {
		if (!varint(s->p + s->szleaf, s->p + s->nn, &t) || t < 4 || t > (unsigned long long)s->szleaf)
			return 1;
		s->end = (int)t;
	}
	return 0;
}

/* The term on s's leaf (loaded): 1 and s->off at its doclist, s->end at
 * its end on this leaf; 0 when the leaf does not hold it; -1: a bad leaf.
 * The leaf's terms are in order, each but the first sharing `keep`
 * bytes with the one before: with m, how much of the term the one before
 * matched, a term keeping more than m is still before it, one keeping
 * less is past it, and only one keeping m is compared — no copy. */
static int leaf_seek(struct seg *s, const unsigned char *term, size_t len)
{
	const unsigned char *fp = s->p + s->szleaf, *fend = s->p + s->nn;
	unsigned long long at = 0, prevn = 0;
	size_t m = 0;
	int first = 1;
	while (fp < fend) {
		unsigned long long d = 0;
		int k = varint(fp, fend, &d);
		if (!k)
			return -1;
		fp += k;
		at += d;
		if (at < 4 || at >= (unsigned long long)s->szleaf)
			return -1;
		const unsigned char *p = s->p + at, *end = s->p + s->szleaf;
		unsigned long long keep = 0, nnew = 0;
		if (!first) {
			if (!(k = varint(p, end, &keep)) || keep > prevn)
				return -1;
			p += k;
		}
		if (!(k = varint(p, end, &nnew)) || nnew > (unsigned long long)(end - p - k))
			return -1;
		p += k;
		first = 0;
		prevn = keep + nnew;
		if (keep > m)
			continue; /* as far before it as the one before */
		if (keep < m)
			return 0; /* past it */
		size_t j = 0;
		while (j < nnew && m + j < len && p[j] == term[m + j])
			j++;
		m += j;
		if (j == nnew && m == len) {
			s->off = (int)(p + nnew - s->p);
			/* its doclist ends at the next term, or with the leaf */
			s->end = s->szleaf;
			if (fp < fend) {
				unsigned long long d2 = 0;
				if (!varint(fp, fend, &d2) || at + d2 > (unsigned long long)s->szleaf)
					return -1;
				s->end = (int)(at + d2);
			}
			return 1;
		}
		if (j < nnew && (m == len || p[j] > term[m]))
			return 0; /* longer than it, or greater: past it */
	}
	return 0;
}

/* The next leaf of the doclist, for a rowid (its first, as a literal):
 * 0 on it (s->off there), 1 at the doclist's end, -1 bad. */
static int next_leaf_rowid(struct zc_store *st, struct seg *s, int *rc)
{
	if (s->pg >= s->last)
		return 1;
	if (load_leaf(st, s, s->pg + 1, rc))
		return -1;
	if (!s->first_rowid)
		return 1; /* the leaf opens with a term: the doclist ended */
	s->off = s->first_rowid;
	return 0;
}

/* Counts the positions of a poslist of n bytes at s->off, on as many
 * leaves as it spans (a poslist is cut between leaves at a varint's
 * boundary); leaves s->off after it. 0, or -1 when it does not parse or
 * holds a column other than the first. */
static int poslist(struct zc_store *st, struct seg *s, unsigned long long n, int *rc)
{
	int tf = 0, start = 1;
	while (n > 0) {
		if (s->off >= s->szleaf) {
			if (s->pg >= s->last || load_leaf(st, s, s->pg + 1, rc))
				return -1;
			s->off = 4;
			start = 1;
		}
		int avail = s->szleaf - s->off;
		int take = n < (unsigned long long)avail ? (int)n : avail;
		const unsigned char *p = s->p + s->off;
		for (int i = 0; i < take; i++) {
			if (start && p[i] == 0x01)
				return -1; /* a column marker: recall_fts has one column */
			start = !(p[i] & 0x80);
			tf += start;
		}
		s->off += take;
		n -= (unsigned long long)take;
	}
	s->tf = tf;
	return 0;
}

/* Reads the entry at s->off (its size varint, its poslist); s->rowid is
 * set. 0, or -1 bad. */
static int read_entry(struct zc_store *st, struct seg *s, int *rc)
{
	unsigned long long sz = 0;
	int k = varint(s->p + s->off, s->p + s->szleaf, &sz);
	if (!k)
		return -1;
	s->off += k;
	return poslist(st, s, sz >> 1, rc);
}

/* Moves s to its next entry: 0 on it, 1 at the end, -1 bad. The first
 * rowid of a doclist, and of each leaf it continues on, is a literal;
 * the others are deltas. */
static int seg_next_slow(struct zc_store *st, struct seg *s, int literal, int *rc);

static inline int seg_next(struct zc_store *st, struct seg *s, int literal, int *rc)
{
	int o = s->off;
	/* most entries: a delta of one to three bytes, a one-byte size, a
	 * short poslist, on this leaf (not a leaf's literal first rowid: o
	 * is never 0) */
	if (!literal && o + 4 <= s->end && o != s->first_rowid) {
		const unsigned char *p = s->p + o;
		unsigned d = p[0];
		int h = 1;
		if (d & 0x80) {
			d = (d & 0x7f) << 7 | (p[1] & 0x7f);
			h = 2;
			if (p[1] & 0x80) {
				d = d << 7 | p[2];
				h = 3;
			}
		}
		int nsz = p[h] >> 1, tf = 0, start = 1;
		if (!(p[h - 1] & 0x80) && !(p[h] & 0x80) && o + h + 1 + nsz <= s->end) {
			for (int i = h + 1; i < h + 1 + nsz; i++) {
				if (start && p[i] == 0x01)
					return -1; /* a column marker: recall_fts has one column */
				start = !(p[i] & 0x80);
				tf += start;
			}
			s->rowid += d;
			s->tf = tf;
			s->off = o + h + 1 + nsz;
			return 0;
		}
	}
	return seg_next_slow(st, s, literal, rc);
}

/* seg_next for the rest: a leaf's literal first rowid, longer varints, a
 * poslist that goes on on the next leaf, the doclist's end */
static int seg_next_slow(struct zc_store *st, struct seg *s, int literal, int *rc)
{
	unsigned long long v = 0;
	int k, r;
	if (s->off > s->end)
		return -1;
	if (s->off == s->end) {
		if (s->end < s->szleaf)
			return 1; /* the next term */
		if ((r = next_leaf_rowid(st, s, rc)))
			return r;
		literal = 1;
	} else if (s->first_rowid && s->off == s->first_rowid) {
		literal = 1; /* after a poslist continued from the leaf before */
	}
	if (!(k = varint(s->p + s->off, s->p + s->end, &v)))
		return -1;
	s->off += k;
	s->rowid = literal ? (sqlite3_int64)v : s->rowid + (sqlite3_int64)v;
	return read_entry(st, s, rc);
}

/* A varint at *p, moved past: 0, or 1 when it runs past end. */
static int take(const unsigned char **p, const unsigned char *end, unsigned long long *v)
{
	int k = varint(*p, end, v);
	*p += k;
	return k == 0;
}

/* The segments of recall_fts's structure record, newest first (level 0
 * first, each level's newest first: the order FTS5 prefers a row's
 * entries in). 0 on success, 1 when it is not one this reads. */
static int read_structure(struct zc_store *st, struct seg *segs, int *nseg, int *rc)
{
	sqlite3_stmt *q = zc_stmt(st, "SELECT block FROM recall_fts_data WHERE id = 10", NULL);
	if (!q) {
		*rc = SQLITE_ERROR;
		return 1;
	}
	int step = sqlite3_step(q), bad = 1;
	*nseg = 0;
	if (step == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(q, 0);
		const unsigned char *end = p + sqlite3_column_bytes(q, 0);
		unsigned long long nlevel = 0, total = 0, writes = 0;
		/* the configuration cookie, then (not V2) the levels */
		bad = !p || end - p < 8 || memcmp(p + 4, "\xff\x00\x00\x01", 4) == 0;
		if (!bad)
			p += 4;
		bad = bad || take(&p, end, &nlevel) || nlevel > 64 || take(&p, end, &total) ||
		      total > RAW_SEGS_MAX || take(&p, end, &writes);
		for (unsigned long long l = 0; !bad && l < nlevel; l++) {
			unsigned long long merge = 0, n = 0;
			bad = take(&p, end, &merge) || take(&p, end, &n) || (unsigned long long)*nseg + n > total;
			/* this level's segments, oldest first in the record */
			for (unsigned long long i = 0; !bad && i < n; i++) {
				unsigned long long id = 0, first = 0, last = 0;
				bad = take(&p, end, &id) || take(&p, end, &first) || take(&p, end, &last) ||
				      id == 0 || id > 0xffff || (first == 0 && last != 0) || last > 0x7fffffff;
				struct seg *s = &segs[*nseg + (int)(n - 1 - i)];
				memset(s, 0, sizeof(*s));
				s->segid = (int)id;
				s->pg = (int)first;
				s->last = (int)last;
			}
			if (!bad)
				*nseg += (int)n;
		}
	} else if (step != SQLITE_DONE) {
		*rc = step;
	}
	sqlite3_reset(q);
	return bad;
}

/* Positions segment s at the term's first entry: 0 there, 1 when the
 * segment does not hold it, -1 bad. */
static int seg_seek(struct zc_store *st, struct seg *s, const unsigned char *key, size_t keyn, int *rc)
{
	if (s->pg == 0 || s->last < s->pg)
		return 1; /* empty: an input of a merge that took all its terms (pages 0, 0) */
	sqlite3_stmt *q = zc_stmt(st,
				  "SELECT pgno FROM recall_fts_idx WHERE segid = ?1 AND term <= ?2 "
				  "ORDER BY term DESC LIMIT 1",
				  NULL);
	if (!q) {
		*rc = SQLITE_ERROR;
		return -1;
	}
	sqlite3_bind_int(q, 1, s->segid);
	sqlite3_bind_blob(q, 2, key, (int)keyn, SQLITE_STATIC);
	int step = sqlite3_step(q);
	long long pg = step == SQLITE_ROW ? sqlite3_column_int64(q, 0) >> 1 : 0; /* low bit: a doclist index */
	sqlite3_reset(q);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		*rc = step;
		return -1;
	}
	if (pg < s->pg)
		pg = s->pg; /* before the first leaf, or none: the first leaf */
	if (pg > s->last)
		return 1;
	if (load_leaf(st, s, (int)pg, rc))
		return -1;
	int r = leaf_seek(s, key, keyn);
	if (r <= 0)
		return r < 0 ? -1 : 1;
	/* the doclist's first rowid follows the term, as a literal */
	return seg_next(st, s, 1, rc);
}

/* zc_postings_sel_add for a live row (tf > 0); 1 when no further row can
 * change the choice. The rows come in rowid order, so a row no better
 * than the worst of a full by_tf choice (tf no higher) is passed over
 * here, as the call would. */
static inline int keep_row(struct zc_postings_sel *sel, sqlite3_int64 rowid, int tf)
{
	if (tf <= 0)
		return 0; /* a deleted row */
	if (sel->by_tf && sel->n == sel->cap && tf <= sel->rows[0].tf)
		return sel->left > 0 && --sel->left == 0;
	return zc_postings_sel_add(sel, rowid, tf);
}

int zc_fts_raw_postings(struct zc_store *st, const char *term, size_t len, int n, long long scan,
			struct zc_posting *out, int *got, int *done, struct zc_err *e)
{
	struct seg segs[RAW_SEGS_MAX];
	unsigned char key[RAW_TERM_MAX];
	int nseg = 0, rc = SQLITE_OK, bad = 0;
	*got = 0;
	*done = 0;
	/* one snapshot for every page read (a transaction), and none of the
	 * rows FTS5 holds in memory until a write transaction commits */
	if (n <= 0 || n > ZC_POSTINGS_MAX || len + 1 > sizeof(key) || sqlite3_get_autocommit(st->db) ||
	    sqlite3_txn_state(st->db, "main") == SQLITE_TXN_WRITE)
		return ZCOR_OK;
	key[0] = '0'; /* FTS5's main index: its terms carry this prefix */
	memcpy(key + 1, term, len);
	if (read_structure(st, segs, &nseg, &rc))
		goto out;
	int live = 0;
	for (int i = 0; i < nseg && !bad; i++) {
		int r = seg_seek(st, &segs[i], key, len + 1, &rc);
		bad = r < 0;
		segs[i].eof = r != 0;
		live += r == 0;
	}
	struct zc_postings_sel sel;
	zc_postings_sel_init(&sel, out, n, scan);
	while (!bad && live > 0) {
		/* the least rowid; of the segments at it, the newest is the row's */
		int w = -1;
		for (int i = 0; i < nseg; i++)
			if (!segs[i].eof && (w < 0 || segs[i].rowid < segs[w].rowid))
				w = i;
		if (live == 1) { /* the last segment left: its entries in turn */
			int r = 0;
			while (!keep_row(&sel, segs[w].rowid, segs[w].tf) && (r = seg_next(st, &segs[w], 0, &rc)) == 0)
				;
			bad = r < 0;
			break;
		}
		sqlite3_int64 rowid = segs[w].rowid;
		if (keep_row(&sel, rowid, segs[w].tf))
			break;
		for (int i = w; i < nseg && !bad; i++) {
			if (segs[i].eof || segs[i].rowid != rowid)
				continue;
			int r = seg_next(st, &segs[i], 0, &rc);
			if (r < 0)
				bad = 1;
			else if (r > 0) {
				segs[i].eof = 1;
				live--;
			}
		}
	}
	if (!bad && rc == SQLITE_OK) {
		zc_postings_sel_finish(&sel);
		*got = sel.n;
		*done = 1;
	}
out:
	for (int i = 0; i < nseg; i++)
		zc_free(segs[i].p);
	if (rc != SQLITE_OK)
		return zc_store_fail(st, rc, e, "recall (reading postings)");
	return ZCOR_OK;
}
