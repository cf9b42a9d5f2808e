/*
 * test_hardening.c — issue 12 ("nothing outside the memory directory, no
 * silent loss"), the part about the files inside the directory and the
 * media cache, through the public API:
 *
 *   #7   a 0-byte memory.db in a directory with data is refused (the
 *        doctor says why); a damaged one is refused and left as it is
 *   #10  a media `file` never hangs on a FIFO and says nothing about the
 *        machine's files; a bound caller cannot name one at all
 *   #12  the media cache is scoped: a conversation sees only the images
 *        of its own messages (route, qq_save_sticker, references)
 *
 * The planted links and FIFOs (#9) are driven as data from
 * tests/hostile/planted.json by tests/e2e/hostile_planted.test.mjs; the
 * cases here are the ones a C test states more sharply.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static const char GIF_B64[] = "R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=";
static const char GIF_BYTES[] = "GIF87a\x01\x00\x01\x00\x00\x00\x00;";

static char *path_in(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len) {
		fprintf(stderr, "cannot write %s\n", path);
		t_failures++;
	}
	if (f)
		fclose(f);
}

static long long file_size(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static json_t *parse(char *out)
{
	json_t *v = json_loads(out ? out : "null", JSON_DECODE_ANY, NULL);
	zcor_free(out);
	return v ? v : json_object();
}

/* zcor_doctor_unopened's report for dir, parsed ({} when it has none). */
static json_t *unopened(const char *dir)
{
	char *out = NULL;
	zcor_doctor_unopened(NULL, dir, &out);
	return parse(out);
}

/* The finding with this code in a doctor report, or NULL. */
static json_t *finding(json_t *report, const char *code)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(report, "findings"), i, f) if (!strcmp(t_str(f, "code"), code)) return f;
	return NULL;
}

/* zcor_open's answer for dir: its code, the message into msg. */
static int open_fails(const char *dir, char *msg, size_t cap)
{
	zcor *z = NULL;
	int rc = zcor_open(&z, dir);
	snprintf(msg, cap, "%s", zcor_errmsg(z));
	zcor_close(z);
	return rc;
}

/* ---- #7: memory.db ------------------------------------------------------ */

/* A directory that has been used (a backup), whose memory.db became 0
 * bytes: zcor refuses to open it as a new, empty store (which is what it
 * did: exit 0, everything gone), says what to do, changes nothing; the
 * doctor reports MEMORY_DB_EMPTY. */
static void I12_7_empty_db_in_a_used_directory_is_refused(void)
{
	zcor *z = t_open();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"猫\",\"content\":\"叫咪咪\"}"));
	json_t *b = t_call_ok(z, NULL, "zcor_memory_backup", "{}");
	char *backup = path_in(dir, t_str(b, "file"));
	json_decref(b);
	zcor_close(z);
	long long backup_size = file_size(backup);
	char *db = path_in(dir, "memory.db");
	CHECK(truncate(db, 0) == 0);
	char msg[2048];
	CHECK_INT(open_fails(dir, msg, sizeof(msg)), ZCOR_EIO);
	CHECK_HAS(msg, "memory.db is empty");
	CHECK_HAS(msg, "backups/memory-state-");
	CHECK_HAS(msg, "zcor restore");
	CHECK_INT(file_size(db), 0); /* nothing written: no schema, no new store */
	CHECK_INT(file_size(backup), backup_size);
	json_t *r = unopened(dir);
	json_t *f = finding(r, "MEMORY_DB_EMPTY");
	CHECK(f != NULL);
	CHECK_STR(t_str(f, "path"), "memory.db");
	CHECK(json_is_true(json_object_get(r, "needsAttention")));
	json_decref(r);
	/* what the message says works: move it aside, restore the backup */
	char *aside = path_in(dir, "memory.db.empty");
	CHECK(rename(db, aside) == 0);
	z = t_open_dir(dir);
	char *slash = strrchr(backup, '/');
	r = t_call_ok(z, NULL, "zcor_memory_restore", "{\"backupFile\":\"%s\"}", slash + 1);
	json_decref(r);
	r = t_call_ok(z, NULL, "zcor_memory_query", "{\"keywords\":[\"猫\"]}");
	CHECK_INT(t_int(r, "total"), 1);
	json_decref(r);
	zcor_close(z);
	free(aside);
	free(db);
	free(backup);
}

/* A 0-byte memory.db beside a WAL that holds changes: SQLite would delete
 * the WAL (and the changes) when opening the empty file. Refused; both
 * files stay exactly as they were. */
static void I12_7_empty_db_beside_a_wal_keeps_the_wal(void)
{
	const char *dir = t_tmpdir();
	char *db = path_in(dir, "memory.db"), *wal = path_in(dir, "memory.db-wal");
	write_bytes(db, "", 0);
	static const char frames[] = "\x37\x7f\x06\x82 pretend WAL frames";
	write_bytes(wal, frames, sizeof(frames));
	char msg[2048];
	CHECK_INT(open_fails(dir, msg, sizeof(msg)), ZCOR_EIO);
	CHECK_HAS(msg, "memory.db-wal");
	CHECK_INT(file_size(db), 0);
	CHECK_INT(file_size(wal), (long long)sizeof(frames));
	free(db);
	free(wal);
}

/* What is not data: a directory holding only what a person writes before
 * the first start (config.json, synonyms.json, PERSONA.md) and a 0-byte
 * memory.db (a first open that stopped before SQLite wrote the header)
 * is new, and opens as new. */
static void I12_7_empty_db_in_a_new_directory_opens(void)
{
	const char *dir = t_tmpdir();
	char *db = path_in(dir, "memory.db"), *cfg = path_in(dir, "config.json"),
	     *persona = path_in(dir, "PERSONA.md"), *syn = path_in(dir, "synonyms.json");
	write_bytes(db, "", 0);
	write_bytes(cfg, "{\"recallChars\": 3000}\n", 22);
	write_bytes(persona, "我是猫娘\n", strlen("我是猫娘\n"));
	write_bytes(syn, "{\"version\":1,\"groups\":[]}\n", 26);
	zcor *z = t_open_dir(dir);
	CHECK(z != NULL);
	json_t *r = t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"新的\",\"content\":\"第一条\"}");
	json_decref(r);
	zcor_close(z);
	CHECK(file_size(db) > 0);
	free(db);
	free(cfg);
	free(persona);
	free(syn);
}

/* The memory directory itself may be a symbolic link (the operator chose
 * it, OPERATIONS.md): a store written through the link opens again
 * through it. memory.db's header check opened it with NOFOLLOW, which
 * SQLite applies to every part of the name, so the second open was
 * refused ("cannot read memory.db"). */
static void I12_7_memory_directory_through_a_link_reopens(void)
{
	const char *real = t_tmpdir();
	char *link = path_in(t_tmpdir(), "linked-memory");
	CHECK(symlink(real, link) == 0);
	zcor *z = t_open_dir(link);
	CHECK(z != NULL);
	json_t *r = t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"经由链接\",\"content\":\"第一条\"}");
	json_decref(r);
	zcor_close(z);
	z = t_open_dir(link);
	CHECK(z != NULL);
	if (z) {
		r = t_call_ok(z, NULL, "zcor_memory_read", "{\"id\":\"m000001\"}");
		CHECK_STR(t_str(r, "node.title"), "经由链接");
		json_decref(r);
		zcor_close(z);
	}
	free(link);
}

/* A memory.db that is not SQLite, or was cut off (its header says more
 * pages than the file has, no WAL to finish from): refused with what to
 * do, never replaced or repaired in place; the doctor's code is
 * MEMORY_DB_DAMAGED. */
static void I12_7_damaged_db_is_refused_and_left_alone(void)
{
	const char *dir = t_tmpdir();
	char *db = path_in(dir, "memory.db");
	char junk[5000];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 7 + 3);
	write_bytes(db, junk, sizeof(junk));
	char msg[2048];
	CHECK_INT(open_fails(dir, msg, sizeof(msg)), ZCOR_EIO);
	CHECK_HAS(msg, "not a SQLite database");
	CHECK_HAS(msg, "restore");
	CHECK_INT(file_size(db), (long long)sizeof(junk));
	FILE *f = fopen(db, "rb");
	char back[sizeof(junk)];
	CHECK(f && fread(back, 1, sizeof(back), f) == sizeof(back) && memcmp(back, junk, sizeof(junk)) == 0);
	if (f)
		fclose(f);
	json_t *r = unopened(dir);
	CHECK(finding(r, "MEMORY_DB_DAMAGED") != NULL);
	json_decref(r);

	/* cut off: a real store, closed (WAL folded in), then shortened */
	const char *dir2 = t_tmpdir();
	zcor *z = t_open_dir(dir2);
	for (int i = 0; i < 50; i++)
		json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"记忆%d\",\"content\":\"%0400d\"}", i, i));
	zcor_close(z);
	char *db2 = path_in(dir2, "memory.db"), *wal2 = path_in(dir2, "memory.db-wal");
	CHECK(file_size(wal2) <= 0);
	long long full = file_size(db2);
	CHECK(full > 3 * 4096);
	CHECK(truncate(db2, 2 * 4096) == 0);
	CHECK_INT(open_fails(dir2, msg, sizeof(msg)), ZCOR_EIO);
	CHECK_HAS(msg, "cut off");
	CHECK_INT(file_size(db2), 2 * 4096);
	r = unopened(dir2);
	CHECK(finding(r, "MEMORY_DB_DAMAGED") != NULL);
	json_decref(r);
	free(db);
	free(db2);
	free(wal2);
}

/* A file that lags its header for a moment is another process's
 * checkpoint under way (page 1 with the new size is written before the
 * pages after it, and the WAL is gone when it ends), not a cut-off
 * file: two CLI writes at the same time once failed on it
 * (e2e/cli). Here a thread puts the missing pages back 100 ms after
 * the file was cut, as the checkpoint would: the open waits for it and
 * succeeds, with every memory there. */
struct lag {
	const char *path;
	char *tail;
	long long at, len;
};

static void *finish_checkpoint(void *ud)
{
	struct lag *l = ud;
	struct timespec pause = {0, 100 * 1000 * 1000};
	nanosleep(&pause, NULL);
	int fd = open(l->path, O_WRONLY);
	if (fd >= 0) {
		(void)!pwrite(fd, l->tail, (size_t)l->len, (off_t)l->at);
		close(fd);
	}
	return NULL;
}

static void issue19_a_checkpoint_under_way_is_not_a_cut_off_file(void)
{
	const char *dir = t_tmpdir();
	zcor *z = t_open_dir(dir);
	for (int i = 0; i < 50; i++)
		json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"记忆%d\",\"content\":\"%0400d\"}", i, i));
	zcor_close(z);
	char *db = path_in(dir, "memory.db");
	long long full = file_size(db);
	CHECK(full > 3 * 4096);
	struct lag l = {db, malloc((size_t)full), 2 * 4096, full - 2 * 4096};
	FILE *f = fopen(db, "rb");
	CHECK(f && l.tail && fseek(f, l.at, SEEK_SET) == 0 && fread(l.tail, 1, (size_t)l.len, f) == (size_t)l.len);
	if (f)
		fclose(f);
	CHECK(truncate(db, l.at) == 0);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, finish_checkpoint, &l) == 0);
	z = NULL;
	int rc = zcor_open(&z, dir);
	CHECK_INT(rc, ZCOR_OK);
	pthread_join(th, NULL);
	CHECK_INT(file_size(db), full);
	if (rc == ZCOR_OK) {
		json_t *r = t_call_ok(z, NULL, "zcor_memory_query", "{\"keywords\":[\"记忆49\"]}");
		CHECK_INT(t_int(r, "total"), 1);
		json_decref(r);
	}
	zcor_close(z);
	free(l.tail);
	free(db);
}

/* ---- #10: a media item's `file` ------------------------------------------------ */

static json_t *log_file(zcor *z, const char *bound, const char *conv, const char *id, const char *file,
			int *rc)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, bound};
	char batch[8192], *out = NULL;
	snprintf(batch, sizeof(batch),
		 "{\"messages\":[{\"id\":\"%s\",\"senderId\":\"1\",\"media\":[{\"type\":\"image\",\"file\":\"%s\"}]}]}",
		 id, file);
	*rc = zcor_log_messages(z, &ctx, conv, batch, &out);
	return t_answer(z, *rc, out);
}

/* The message with every occurrence of path replaced by "<path>". */
static char *without(const char *msg, const char *path)
{
	size_t cap = strlen(msg) + 64, n = 0;
	char *out = calloc(1, cap);
	const char *p = msg, *q;
	while ((q = strstr(p, path)) && n + (size_t)(q - p) + 7 < cap) {
		n += (size_t)snprintf(out + n, cap - n, "%.*s<path>", (int)(q - p), p);
		p = q + strlen(path);
	}
	snprintf(out + n, cap - n, "%s", p);
	return out;
}

/* A FIFO named as an image's file: the request answers at once (it hung
 * its thread), and the answer for a FIFO, a missing file, a directory and
 * a file that is no image is one message: nothing about the machine's
 * files can be learnt from it. A good file is still taken (host plane). */
static void I12_10_media_file_fifo_and_one_message(void)
{
	zcor *z = t_open();
	const char *tmp = t_tmpdir();
	char *fifo = path_in(tmp, "pipe.gif"), *missing = path_in(tmp, "missing.gif"),
	     *text = path_in(tmp, "notes.txt"), *good = path_in(tmp, "good.gif");
	CHECK(mkfifo(fifo, 0600) == 0);
	write_bytes(text, "just words", 10);
	write_bytes(good, GIF_BYTES, sizeof(GIF_BYTES) - 1);
	/* a hang fails the test instead of stalling the suite */
	signal(SIGALRM, SIG_DFL);
	alarm(20);
	const char *paths[] = {fifo, missing, tmp, text, "/etc/shadow", "/proc/self/environ"};
	char *first = NULL;
	int rc;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char id[16];
		snprintf(id, sizeof(id), "f%zu", i);
		json_t *r = log_file(z, NULL, "group:1", id, paths[i], &rc);
		CHECK_INT(rc, ZCOR_EINVAL);
		CHECK_HAS(t_errmsg(r), "messages[0].media[0].file");
		char *m = without(t_errmsg(r) ? t_errmsg(r) : "", paths[i]);
		if (!first)
			first = m;
		else {
			CHECK_STR(m, first);
			free(m);
		}
		json_decref(r);
	}
	alarm(0);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages"), 0);
	json_t *r = log_file(z, NULL, "group:1", "ok", good, &rc);
	CHECK_INT(rc, ZCOR_OK);
	CHECK_INT(t_int(r, "logged"), 1);
	json_decref(r);
	free(first);
	free(fifo);
	free(missing);
	free(text);
	free(good);
	zcor_close(z);
}

/* A caller bound to a conversation (X-Zcor-Conversation, a conversation's
 * MCP) cannot name a server file at all — the same answer whether it
 * exists or not — and nothing is logged; the bytes as data are fine. */
static void I12_10_bound_caller_cannot_name_a_server_file(void)
{
	zcor *z = t_open();
	const char *tmp = t_tmpdir();
	char *good = path_in(tmp, "good.gif"), *missing = path_in(tmp, "missing.gif");
	write_bytes(good, GIF_BYTES, sizeof(GIF_BYTES) - 1);
	int rc;
	json_t *r1 = log_file(z, "group:1", "group:1", "a", good, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	CHECK_HAS(t_errmsg(r1), "cannot name a file on the server");
	json_t *r2 = log_file(z, "group:1", "group:1", "a", missing, &rc);
	CHECK_INT(rc, ZCOR_EINVAL);
	char *m1 = without(t_errmsg(r1) ? t_errmsg(r1) : "", good),
	     *m2 = without(t_errmsg(r2) ? t_errmsg(r2) : "?", missing);
	CHECK_STR(m1, m2);
	free(m1);
	free(m2);
	json_decref(r1);
	json_decref(r2);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages"), 0);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM media"), 0);
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, "group:1"};
	char batch[512], *out = NULL;
	snprintf(batch, sizeof(batch),
		 "{\"messages\":[{\"id\":\"b\",\"senderId\":\"1\",\"media\":[{\"type\":\"image\",\"data\":\"%s\"}]}]}",
		 GIF_B64);
	CHECK_INT(zcor_log_messages(z, &ctx, "group:1", batch, &out), ZCOR_OK);
	zcor_free(out);
	free(good);
	free(missing);
	zcor_close(z);
}

/* ---- #12: the media cache's scope ------------------------------------------------- */

/* An image sent in private:111, cached (host plane logs it, as the bridge
 * does); its reference as that conversation's messages show it. */
static char *private_image(zcor *z)
{
	char batch[512], *out = NULL;
	snprintf(batch, sizeof(batch),
		 "{\"messages\":[{\"id\":\"p1\",\"senderId\":\"111\",\"text\":\"只给你看\",\"media\":[{\"type\":\"image\",\"data\":\"%s\"}]}]}",
		 GIF_B64);
	CHECK_INT(zcor_log_messages(z, NULL, "private:111", batch, &out), ZCOR_OK);
	zcor_free(out);
	json_t *r = t_call_ok(z, NULL, "qq_transcript", "{\"action\":\"read\",\"conversation\":\"private:111\"}");
	char *ref = strdup(t_str(r, "items.0.media.0") ? t_str(r, "items.0.media.0") : "");
	json_decref(r);
	CHECK(strncmp(ref, "media/", 6) == 0);
	return ref;
}

static int media_read(zcor *z, const char *conv, const char *file, char *msg, size_t cap)
{
	struct zcor_ctx ctx = {ZCOR_ACTOR_UI, conv};
	char *data = NULL;
	size_t len = 0;
	const char *mime = NULL;
	int rc = zcor_media_read(z, &ctx, file, &data, &len, &mime);
	if (msg)
		snprintf(msg, cap, "%s", zcor_errmsg(z));
	if (!rc)
		CHECK(len > 0 && !strcmp(mime, "image/gif"));
	zcor_free(data);
	return rc;
}

/* group:222, knowing the hash, neither fetches the image nor saves it as
 * a global sticker, and the answer is the one for an image never cached;
 * private:111 and the host plane do both. */
static void I12_12_a_conversation_sees_only_its_own_media(void)
{
	zcor *z = t_open();
	char *ref = private_image(z);
	const char *file = ref + 6;
	char msg[1024], never[1024];
	CHECK_INT(media_read(z, "group:222", file, msg, sizeof(msg)), ZCOR_ENOTFOUND);
	char fake[80];
	snprintf(fake, sizeof(fake), "%064d.gif", 5);
	CHECK_INT(media_read(z, "group:222", fake, never, sizeof(never)), ZCOR_ENOTFOUND);
	char *a = without(msg, file), *b = without(never, fake);
	CHECK_STR(a, b);
	free(a);
	free(b);
	CHECK_INT(media_read(z, "private:111", file, NULL, 0), ZCOR_OK);
	CHECK_INT(media_read(z, NULL, file, NULL, 0), ZCOR_OK);

	int rc;
	json_t *r = t_call_rc(z, "group:222", &rc, "qq_save_sticker", "{\"media\":\"%s\",\"name\":\"偷来的\"}", ref);
	CHECK_INT(rc, ZCOR_ENOTFOUND);
	CHECK_HAS(t_errmsg(r), "not in the media cache");
	json_decref(r);
	char *st = path_in(zcor_dir(z), "stickers/偷来的.gif");
	CHECK(access(st, F_OK) != 0);
	r = t_call_ok(z, NULL, "qq_save_sticker", "{\"media\":\"%s\",\"name\":\"主人收藏\"}", ref);
	json_decref(r);
	/* a group that saw it too may then use it */
	char batch[512], *out = NULL;
	snprintf(batch, sizeof(batch), "{\"messages\":[{\"id\":\"g1\",\"senderId\":\"5\",\"media\":[{\"type\":\"image\",\"data\":\"%s\"}]}]}",
		 GIF_B64);
	CHECK_INT(zcor_log_messages(z, NULL, "group:222", batch, &out), ZCOR_OK);
	zcor_free(out);
	CHECK_INT(media_read(z, "group:222", file, NULL, 0), ZCOR_OK);
	free(st);
	free(ref);
	zcor_close(z);
}

/* A bound caller cannot claim another conversation's image by posting its
 * reference in a message of its own (that would make it "its own"): the
 * batch is refused and nothing logged; the host may (it sees all). */
static void I12_12_a_reference_cannot_claim_another_conversations_image(void)
{
	zcor *z = t_open();
	char *ref = private_image(z);
	struct zcor_ctx bound = {ZCOR_ACTOR_UI, "group:222"};
	char batch[512], *out = NULL;
	snprintf(batch, sizeof(batch), "{\"messages\":[{\"id\":\"g1\",\"senderId\":\"5\",\"media\":[\"%s\"]}]}", ref);
	CHECK_INT(zcor_log_messages(z, &bound, "group:222", batch, &out), ZCOR_EINVAL);
	json_t *r = t_answer(z, ZCOR_EINVAL, out);
	CHECK_HAS(t_errmsg(r), "messages[0].media[0]");
	json_decref(r);
	CHECK_INT(t_sql_int(zcor_dir(z), "SELECT count(*) FROM messages WHERE conversation = 'group:222'"), 0);
	CHECK_INT(media_read(z, "group:222", ref + 6, NULL, 0), ZCOR_ENOTFOUND);
	/* its own conversation may refer to it again */
	struct zcor_ctx own = {ZCOR_ACTOR_UI, "private:111"};
	snprintf(batch, sizeof(batch), "{\"messages\":[{\"id\":\"p2\",\"senderId\":\"111\",\"media\":[\"%s\"]}]}", ref);
	CHECK_INT(zcor_log_messages(z, &own, "private:111", batch, &out), ZCOR_OK);
	zcor_free(out);
	/* the host may put it anywhere */
	snprintf(batch, sizeof(batch), "{\"messages\":[{\"id\":\"g2\",\"senderId\":\"5\",\"media\":[\"%s\"]}]}", ref);
	CHECK_INT(zcor_log_messages(z, NULL, "group:222", batch, &out), ZCOR_OK);
	zcor_free(out);
	CHECK_INT(media_read(z, "group:222", ref + 6, NULL, 0), ZCOR_OK);
	free(ref);
	zcor_close(z);
}

/* The media route serves only what the cache's table knows: a file
 * dropped into media/ under a valid name is not served, to anyone. */
static void I12_9_media_serves_only_what_the_cache_knows(void)
{
	zcor *z = t_open();
	char name[80];
	snprintf(name, sizeof(name), "%064d.gif", 9);
	char *dir = path_in(zcor_dir(z), "media");
	mkdir(dir, 0755);
	char *p = path_in(dir, name);
	write_bytes(p, GIF_BYTES, sizeof(GIF_BYTES) - 1);
	CHECK_INT(media_read(z, NULL, name, NULL, 0), ZCOR_ENOTFOUND);
	CHECK_INT(media_read(z, "group:1", name, NULL, 0), ZCOR_ENOTFOUND);
	free(p);
	free(dir);
	zcor_close(z);
}

/* Schema 9 fills media_refs from the log that was there before it. */
static void I12_12_migration_fills_the_references(void)
{
	zcor *z = t_open();
	char *ref = private_image(z);
	t_sql_exec(z, "DROP TABLE media_refs");
	t_sql_exec(z, "DROP TRIGGER media_refs_ai");
	t_sql_exec(z, "ALTER TABLE messages DROP COLUMN recalled_at"); /* (schema 13's) */
	t_sql_exec(z, "ALTER TABLE conversations DROP COLUMN title");
	t_sql_exec(z, "PRAGMA user_version = 8");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
	zcor_close(z);
	z = t_open_dir(dir);
	CHECK_INT(t_sql_int(dir, "PRAGMA user_version"), T_SCHEMA);
	CHECK_INT(media_read(z, "private:111", ref + 6, NULL, 0), ZCOR_OK);
	CHECK_INT(media_read(z, "group:222", ref + 6, NULL, 0), ZCOR_ENOTFOUND);
	free(ref);
	zcor_close(z);
}

/* memory.db-wal or -shm planted as a link or a FIFO (SQLite opens them by
 * name, following a link, blocking on a FIFO): the directory is refused
 * before SQLite sees them, the target is untouched, and the doctor names
 * the planted file (audit of issue 12: a cryptic "unable to open" and a
 * silent doctor before). */
static void I12_9_planted_wal_and_shm_are_refused(void)
{
	static const char *const which[] = {"memory.db-wal", "memory.db-shm"};
	for (int i = 0; i < 2; i++)
		for (int fifo = 0; fifo < 2; fifo++) {
			zcor *z = t_open();
			char dir[4096];
			snprintf(dir, sizeof(dir), "%s", zcor_dir(z));
			json_decref(t_call_ok(z, NULL, "zcor_memory_write", "{\"title\":\"猫\",\"content\":\"咪\"}"));
			zcor_close(z);
			char *p = path_in(dir, which[i]), *target = path_in(t_tmpdir(), "outside-target");
			write_bytes(target, "outside", 7);
			unlink(p);
			CHECK(fifo ? mkfifo(p, 0600) == 0 : symlink(target, p) == 0);
			char msg[2048];
			CHECK_INT(open_fails(dir, msg, sizeof(msg)), ZCOR_EIO);
			CHECK_HAS(msg, which[i]);
			CHECK_HAS(msg, fifo ? "a special file" : "a symbolic link");
			CHECK_INT(file_size(target), 7);
			json_t *r = unopened(dir);
			json_t *f = finding(r, "UNSAFE_PATH");
			CHECK(f != NULL);
			CHECK_STR(f ? t_str(f, "path") : NULL, which[i]);
			json_decref(r);
			free(p);
			free(target);
		}
}

const struct t_case t_cases[] = {
	{"I12_9_planted_wal_and_shm_are_refused", I12_9_planted_wal_and_shm_are_refused},
	{"I12_7_empty_db_in_a_used_directory_is_refused", I12_7_empty_db_in_a_used_directory_is_refused},
	{"I12_7_empty_db_beside_a_wal_keeps_the_wal", I12_7_empty_db_beside_a_wal_keeps_the_wal},
	{"I12_7_empty_db_in_a_new_directory_opens", I12_7_empty_db_in_a_new_directory_opens},
	{"I12_7_memory_directory_through_a_link_reopens", I12_7_memory_directory_through_a_link_reopens},
	{"I12_7_damaged_db_is_refused_and_left_alone", I12_7_damaged_db_is_refused_and_left_alone},
	{"issue19_a_checkpoint_under_way_is_not_a_cut_off_file", issue19_a_checkpoint_under_way_is_not_a_cut_off_file},
	{"I12_10_media_file_fifo_and_one_message", I12_10_media_file_fifo_and_one_message},
	{"I12_10_bound_caller_cannot_name_a_server_file", I12_10_bound_caller_cannot_name_a_server_file},
	{"I12_12_a_conversation_sees_only_its_own_media", I12_12_a_conversation_sees_only_its_own_media},
	{"I12_12_a_reference_cannot_claim_another_conversations_image",
	 I12_12_a_reference_cannot_claim_another_conversations_image},
	{"I12_9_media_serves_only_what_the_cache_knows", I12_9_media_serves_only_what_the_cache_knows},
	{"I12_12_migration_fills_the_references", I12_12_migration_fills_the_references},
	{0},
};
