// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof diff's inputs: JSON reports and folded stack files. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "analyze/diff_load.h"
#include "util/escape.h"
#include "util/log.h"

/* Files larger than this are not read (a report of 1 GiB is not one). */
#define DIFF_MAX_FILE (1ULL << 30)

/* "FILE: [line N: ]message" in one line, the file name escaped. */
static int __attribute__((format(printf, 4, 5)))
load_error(int err, const char *name, size_t line, const char *fmt, ...)
{
	char *e = esc_text(name, strlen(name)), msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		pr_err("%s: line %zu: %s", e ? e : "?", line, msg);
	else
		pr_err("%s: %s", e ? e : "?", msg);
	free(e);
	return err;
}

int diff_read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int err = 0;

	*text = NULL;
	*len = 0;
	if (!f)
		return load_error(-errno, path, 0, "%s", strerror(errno));
	for (;;) {
		size_t got;

		if (cap - n < 65536) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *tmp;

			if (ncap > DIFF_MAX_FILE + 1) {
				err = load_error(-EFBIG, path, 0,
						 "larger than 1 GiB: not a "
						 "report of scprof");
				break;
			}
			tmp = realloc(buf, ncap + 1);
			if (!tmp) {
				err = load_error(-ENOMEM, path, 0,
						 "out of memory");
				break;
			}
			buf = tmp;
			cap = ncap;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got)
			continue;
		if (ferror(f))
			err = load_error(-EIO, path, 0, "cannot read it");
		break;
	}
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return load_error(-ENOMEM, path, 0, "out of memory");
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

static size_t skip_blank(const char *text, size_t len, size_t pos)
{
	while (pos < len && (text[pos] == ' ' || text[pos] == '\t' ||
			     text[pos] == '\n' || text[pos] == '\r'))
		pos++;
	return pos;
}

/* Where the count of a folded line (n bytes, blanks trimmed) starts,
 * after at least one blank; 0 when it has none.
 */
static size_t count_start(const char *s, size_t n)
{
	size_t sp = n;

	while (sp && s[sp - 1] >= '0' && s[sp - 1] <= '9')
		sp--;
	if (sp == n || sp < 2 || n - sp > 19 ||
	    (s[sp - 1] != ' ' && s[sp - 1] != '\t'))
		return 0;
	return sp;
}

/* The length of a line without its trailing blanks (and \r). */
static size_t trim_end(const char *s, size_t n)
{
	while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

/* "# ...": a comment line of a folded file (scprof --stacks-by time and
 * blocked write one first).
 */
static bool folded_comment(const char *s, size_t n)
{
	return n >= 2 && s[0] == '#' && s[1] == ' ';
}

#define BY_TIME_LINE "# scprof --stacks-by time"
#define BY_BLOCKED_LINE "# scprof --stacks-by blocked"

static bool starts(const char *s, size_t n, const char *p)
{
	return n >= strlen(p) && !memcmp(s, p, strlen(p));
}

enum diff_input diff_sniff(const char *text, size_t len)
{
	size_t pos = skip_blank(text, len, 0), n;
	const char *nl;

	while (pos < len && folded_comment(text + pos, len - pos)) {
		nl = memchr(text + pos, '\n', len - pos);
		pos = nl ? skip_blank(text, len, (size_t)(nl - text) + 1) : len;
	}
	if (pos >= len)
		return DIFF_INPUT_OTHER;
	if (text[pos] == '{' || text[pos] == '[')
		return DIFF_INPUT_JSON;
	nl = memchr(text + pos, '\n', len - pos);
	n = trim_end(text + pos, nl ? (size_t)(nl - text) - pos : len - pos);
	return count_start(text + pos, n) && !memchr(text + pos, '\0', n) ?
		       DIFF_INPUT_FOLDED :
		       DIFF_INPUT_OTHER;
}

/* The line at pos, counted on from *line at *from (both moved there). */
static size_t line_at(const char *text, size_t pos, size_t *from, size_t *line)
{
	for (; *from < pos; (*from)++)
		*line += text[*from] == '\n';
	return *line;
}

/* ---- a string -> index map --------------------------------------------- */

struct strmap {
	char **keys; /* NULL: a free slot */
	size_t *val;
	size_t cap, n;
};

struct diff_index {
	struct strmap series, groups;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of key: where it is, or the free slot where it would go. */
static size_t map_slot(const struct strmap *m, const char *key)
{
	size_t i = (size_t)str_hash(key) & (m->cap - 1);

	while (m->keys[i] && strcmp(m->keys[i], key))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int map_grow(struct strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct strmap n = { .cap = cap, .n = m->n };

	n.keys = calloc(cap, sizeof(*n.keys));
	n.val = calloc(cap, sizeof(*n.val));
	if (!n.keys || !n.val) {
		free(n.keys);
		free(n.val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		j = map_slot(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.val[j] = m->val[i];
	}
	free(m->keys);
	free(m->val);
	*m = n;
	return 0;
}

/* key's value into *val: 0, or -ENOENT after adding it with value next
 * (the key copied), or -ENOMEM.
 */
static int map_get_or_add(struct strmap *m, const char *key, size_t next,
			  size_t *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return -ENOMEM;
	i = map_slot(m, key);
	if (m->keys[i]) {
		*val = m->val[i];
		return 0;
	}
	m->keys[i] = strdup(key);
	if (!m->keys[i])
		return -ENOMEM;
	m->val[i] = next;
	m->n++;
	*val = next;
	return -ENOENT;
}

/* key's value, or -1. */
static long map_find(const struct strmap *m, const char *key)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = map_slot(m, key);
	return m->keys[i] ? (long)m->val[i] : -1;
}

static void map_free(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->val);
}

/* Parts joined as "LEN:PART" each, so no part can fake another's end. */
static char *join_key(size_t n, const char *const *parts)
{
	size_t len = 1;
	char *k, *p;

	for (size_t i = 0; i < n; i++)
		len += strlen(parts[i] ? parts[i] : "") + 24;
	k = malloc(len);
	if (!k)
		return NULL;
	p = k;
	*p = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *s = parts[i] ? parts[i] : "";

		/* a NULL part (no fd_type) differs from "" */
		p += sprintf(p, "%c%zu:%s", parts[i] ? '=' : '-', strlen(s), s);
	}
	return k;
}

/* ---- JSON reports ---------------------------------------------------------- */

void diff_run_free(struct diff_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ns; i++) {
		free(r->s[i].name);
		free(r->s[i].fd_type);
		free(r->s[i].abi);
		free(r->s[i].cells);
	}
	free(r->s);
	diff_groups_free(r->groups, r->ngroups);
	if (r->index) {
		map_free(&r->index->series);
		map_free(&r->index->groups);
		free(r->index);
	}
	free(r->by_keys);
	free(r->dur_s);
	free(r->path);
	free(r);
}

/* What is being read, for messages. */
struct parse_ctx {
	struct diff_run *r;
	const char *name; /* the file */
	size_t line;	  /* where the object starts */
	size_t iv;	  /* its interval */
};

static struct json_object *member(struct json_object *o, const char *key,
				  json_type type)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, type))
		return NULL;
	return v;
}

/* A number >= 0 member into *out: 0, or -EINVAL when missing. */
static int number(struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) ||
	      json_object_is_type(v, json_type_double)))
		return -EINVAL;
	*out = json_object_get_double(v);
	if (!isfinite(*out) || *out < 0)
		return -EINVAL;
	return 0;
}

static char *series_key(int group, const char *name, const char *fd_type,
			const char *abi)
{
	char gbuf[16];
	const char *parts[] = { gbuf, name, fd_type, abi };

	snprintf(gbuf, sizeof(gbuf), "%d", group);
	return join_key(4, parts);
}

static char *group_key(const struct diff_group *g)
{
	const char **parts = calloc(2 * g->n + 1, sizeof(*parts));
	char *key;

	if (!parts)
		return NULL;
	for (size_t i = 0; i < g->n; i++) {
		parts[2 * i] = g->keys[i];
		parts[2 * i + 1] = g->vals[i];
	}
	key = join_key(2 * g->n, parts);
	free(parts);
	return key;
}

long diff_run_find(const struct diff_run *r, int group, const char *name,
		   const char *fd_type, const char *abi)
{
	char *key = series_key(group, name, fd_type, abi);
	long i = key ? map_find(&r->index->series, key) : -1;

	free(key);
	return i;
}

int diff_run_find_group(const struct diff_run *r, const struct diff_group *g)
{
	char *key = group_key(g);
	long i = key ? map_find(&r->index->groups, key) : -1;

	free(key);
	return (int)i;
}

static int add_series(struct parse_ctx *c, int group, const char *name,
		      const char *fd_type, const char *abi, size_t *idx)
{
	struct diff_run *r = c->r;
	struct diff_series *s;
	char *key;
	int err;

	key = series_key(group, name, fd_type, abi);
	if (!key)
		return -ENOMEM;
	err = map_get_or_add(&r->index->series, key, r->ns, idx);
	free(key);
	if (err != -ENOENT)
		return err;
	s = realloc(r->s, (r->ns + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	r->s = s;
	s = &r->s[r->ns];
	memset(s, 0, sizeof(*s));
	s->group = group;
	s->name = strdup(name);
	s->fd_type = fd_type ? strdup(fd_type) : NULL;
	s->abi = strdup(abi);
	r->ns++;
	if (!s->name || !s->abi || (fd_type && !s->fd_type))
		return -ENOMEM;
	return 0;
}

static int syscall_error(struct parse_ctx *c, const char *name,
			 const char *what)
{
	char *e = esc_text(name, strlen(name));
	int err = load_error(-EINVAL, c->name, c->line, "syscall \"%s\" %s",
			     e ? e : "?", what);

	free(e);
	return err;
}

/* One syscall object of a "syscalls" list, into group's series. */
static int read_syscall(struct parse_ctx *c, struct json_object *o, int group)
{
	static const char *const keys[] = { "calls",  "errors", "total_ns",
					    "avg_ns", "p50_ns", "p99_ns" };
	struct json_object *name = member(o, "name", json_type_string),
			   *fd = member(o, "fd_type", json_type_string),
			   *abi = member(o, "abi", json_type_string);
	double v[6];
	struct diff_series *s;
	struct diff_cell *cell;
	size_t idx = 0;
	int err;

	if (!json_object_is_type(o, json_type_object) || !name)
		return load_error(-EINVAL, c->name, c->line,
				  "a \"syscalls\" entry without a \"name\": "
				  "not a report of scprof");
	for (size_t k = 0; k < 6; k++) {
		if (number(o, keys[k], &v[k])) {
			char what[64];

			snprintf(what, sizeof(what),
				 "has no \"%s\" (a number >= 0)", keys[k]);
			return syscall_error(c, json_object_get_string(name),
					     what);
		}
	}
	err = add_series(c, group, json_object_get_string(name),
			 fd ? json_object_get_string(fd) : NULL,
			 abi ? json_object_get_string(abi) : "64", &idx);
	if (err)
		return load_error(err, c->name, 0, "out of memory");
	s = &c->r->s[idx];
	if (s->n && s->cells[s->n - 1].iv == c->iv)
		return syscall_error(c, json_object_get_string(name),
				     "is listed twice");
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;

		cell = realloc(s->cells, cap * sizeof(*cell));
		if (!cell)
			return load_error(-ENOMEM, c->name, 0, "out of memory");
		s->cells = cell;
		s->cap = cap;
	}
	cell = &s->cells[s->n++];
	*cell = (struct diff_cell){ .iv = c->iv,
				    .calls = v[0],
				    .errors = v[1],
				    .total_ns = v[2],
				    .avg_ns = v[3],
				    .p50_ns = v[4],
				    .p99_ns = v[5] };
	return 0;
}

static int read_syscalls(struct parse_ctx *c, struct json_object *list,
			 int group)
{
	size_t n = json_object_array_length(list);
	int err = 0;

	for (size_t i = 0; !err && i < n; i++)
		err = read_syscall(c, json_object_array_get_idx(list, i),
				   group);
	return err;
}

/* "comm,pid": the keys of a group's "by", in order. NULL on ENOMEM. */
static char *by_keys_of(struct json_object *by)
{
	size_t len = 1;
	char *out;

	json_object_object_foreach(by, k, v)
	{
		(void)v;
		len += strlen(k) + 1;
	}
	out = calloc(1, len);
	if (!out)
		return NULL;
	json_object_object_foreach(by, k2, v2)
	{
		(void)v2;
		if (*out)
			strcat(out, ",");
		strcat(out, k2);
	}
	return out;
}

/* The group of a "by" object: its index, added when new. */
static int group_of(struct parse_ctx *c, struct json_object *by, int *out)
{
	struct diff_run *r = c->r;
	size_t n = (size_t)json_object_object_length(by), k = 0, idx = 0;
	const char **parts = calloc(2 * n + 1, sizeof(*parts));
	struct diff_group *g;
	char *key;
	int err;

	if (!parts)
		return -ENOMEM;
	json_object_object_foreach(by, name, v)
	{
		if (!json_object_is_type(v, json_type_string)) {
			free(parts);
			return load_error(-EINVAL, c->name, c->line,
					  "a group's \"by\" holds a value "
					  "that is not a string");
		}
		parts[k++] = name;
		parts[k++] = json_object_get_string(v);
	}
	key = join_key(2 * n, parts);
	err = key ? map_get_or_add(&r->index->groups, key, r->ngroups, &idx) :
		    -ENOMEM;
	free(key);
	if (err != -ENOENT) {
		free(parts);
		*out = (int)idx;
		return err;
	}
	g = realloc(r->groups, (r->ngroups + 1) * sizeof(*g));
	if (!g) {
		free(parts);
		return -ENOMEM;
	}
	r->groups = g;
	g = &r->groups[r->ngroups++];
	g->n = n;
	g->keys = calloc(n ? n : 1, sizeof(*g->keys));
	g->vals = calloc(n ? n : 1, sizeof(*g->vals));
	err = g->keys && g->vals ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		g->keys[i] = strdup(parts[2 * i]);
		g->vals[i] = strdup(parts[2 * i + 1]);
		if (!g->keys[i] || !g->vals[i])
			err = -ENOMEM;
	}
	free(parts);
	if (!g->keys)
		g->n = 0;
	*out = (int)idx;
	return err;
}

static int read_groups(struct parse_ctx *c, struct json_object *groups)
{
	struct diff_run *r = c->r;
	size_t n = json_object_array_length(groups);
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		struct json_object *g = json_object_array_get_idx(groups, i),
				   *by = member(g, "by", json_type_object),
				   *list = member(g, "syscalls",
						  json_type_array);
		char *keys;
		int idx = -1;

		if (!by || !list)
			return load_error(-EINVAL, c->name, c->line,
					  "a group without \"by\" or "
					  "\"syscalls\": not a report of "
					  "scprof");
		keys = by_keys_of(by);
		if (!keys)
			return load_error(-ENOMEM, c->name, 0, "out of memory");
		if (r->by_keys && strcmp(r->by_keys, keys)) {
			free(keys);
			return load_error(-EINVAL, c->name, c->line,
					  "groups by different keys in one "
					  "run");
		}
		if (!r->by_keys)
			r->by_keys = keys;
		else
			free(keys);
		err = group_of(c, by, &idx);
		if (err == -ENOMEM)
			return load_error(err, c->name, 0, "out of memory");
		err = err ?: read_syscalls(c, list, idx);
	}
	return err;
}

/* One report object (a run, or one interval of it). */
static int read_report(struct parse_ctx *c, struct json_object *o)
{
	struct diff_run *r = c->r;
	struct json_object *list = member(o, "syscalls", json_type_array),
			   *groups = member(o, "groups", json_type_array),
			   *dropped = member(o, "dropped", json_type_object),
			   *co = member(o, "count_only", json_type_boolean);
	double dur, lost;
	double *d;

	if (!json_object_is_type(o, json_type_object) || !list)
		return load_error(-EINVAL, c->name, c->line,
				  "not a report of scprof (no \"syscalls\" "
				  "list)");
	if (number(o, "duration_ns", &dur))
		return load_error(-EINVAL, c->name, c->line,
				  "not a report of scprof (no "
				  "\"duration_ns\")");
	if (dur < 1)
		return load_error(-EINVAL, c->name, c->line,
				  "a report of no duration (\"duration_ns\" "
				  "0)");
	d = realloc(r->dur_s, (r->nint + 1) * sizeof(*d));
	if (!d)
		return load_error(-ENOMEM, c->name, 0, "out of memory");
	r->dur_s = d;
	r->dur_s[r->nint++] = dur / 1e9;
	if (dropped && !number(dropped, "calls", &lost))
		r->dropped += (uint64_t)lost;
	if (co && json_object_get_boolean(co))
		r->count_only = true;
	if (groups)
		r->by = true;
	return read_syscalls(c, list, -1) ?:
		       groups		  ? read_groups(c, groups) :
					    0;
}

int diff_run_parse(const char *text, size_t len, const char *name,
		   struct diff_run **out)
{
	struct diff_run *r = calloc(1, sizeof(*r));
	struct json_tokener *tok = json_tokener_new();
	struct parse_ctx c = { .r = r, .name = name };
	size_t pos = 0, counted = 0, line = 1;
	int err = 0;

	*out = NULL;
	if (r) {
		r->path = strdup(name);
		r->index = calloc(1, sizeof(*r->index));
	}
	if (!r || !tok || !r->path || !r->index) {
		err = load_error(-ENOMEM, name, 0, "out of memory");
		goto out;
	}
	if (len > INT32_MAX) {
		err = load_error(-EFBIG, name, 0, "too large");
		goto out;
	}
	for (;;) {
		struct json_object *o, *iv;
		enum json_tokener_error jerr;

		pos = skip_blank(text, len, pos);
		if (pos >= len)
			break;
		c.line = line_at(text, pos, &counted, &line);
		json_tokener_reset(tok);
		o = json_tokener_parse_ex(tok, text + pos, (int)(len - pos));
		jerr = json_tokener_get_error(tok);
		if (!o) {
			err = load_error(
				-EINVAL, name, c.line, "%s",
				jerr == json_tokener_continue ?
					"the JSON ends in the middle "
					"of an object" :
				jerr == json_tokener_success ?
					"null: not a report of scprof" :
					"not JSON");
			goto out;
		}
		pos += json_tokener_get_parse_end(tok);
		iv = member(o, "interval", json_type_int);
		if (!r->nint)
			r->intervals = iv != NULL;
		if ((r->nint && !r->intervals) || (r->intervals && !iv)) {
			err = load_error(-EINVAL, name, c.line,
					 "a second report that is not an "
					 "interval of -i: give one run per "
					 "file");
		} else {
			c.iv = r->nint;
			err = read_report(&c, o);
		}
		json_object_put(o);
		if (err)
			goto out;
	}
	if (!r->nint) {
		err = load_error(-EINVAL, name, 0,
				 "empty: not a report of scprof");
		goto out;
	}
	*out = r;
	r = NULL;
out:
	if (tok)
		json_tokener_free(tok);
	diff_run_free(r);
	return err;
}

/* ---- folded stacks ---------------------------------------------------------- */

void folded_free(struct folded_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		for (size_t k = 0; k < f->v[i].nframes; k++)
			free(f->v[i].frames[k]);
		free(f->v[i].frames);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

/* "a;b;c" (len bytes) into decoded frames. 0 or -ENOMEM. */
static int split_frames(const char *s, size_t len, struct folded_stack *st)
{
	size_t n = 1, k = 0, start = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == ';';
	st->frames = calloc(n, sizeof(*st->frames));
	if (!st->frames)
		return -ENOMEM;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ';')
			continue;
		st->frames[k] = esc_text_decode(s + start, i - start);
		if (!st->frames[k])
			return -ENOMEM;
		k++;
		st->nframes = k;
		start = i + 1;
	}
	return 0;
}

/* Samples a file may hold: exact in a double, and no sum overflows. */
#define FOLDED_MAX_COUNT (1ULL << 53)

int folded_parse(const char *text, size_t len, const char *name,
		 struct folded_file *out)
{
	size_t pos = 0, line = 0, cap = 0;
	uint64_t total = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	while (!err && pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos, sp, end;
		struct folded_stack *st;
		uint64_t count = 0;

		pos += n + 1;
		line++;
		end = n;
		while (end && (s[end - 1] == '\r' || s[end - 1] == ' ' ||
			       s[end - 1] == '\t'))
			end--;
		if (!end)
			continue;
		if (folded_comment(s, end)) {
			if (starts(s, end, BY_TIME_LINE))
				out->by = SC_STACKS_BY_TIME;
			else if (starts(s, end, BY_BLOCKED_LINE))
				out->by = SC_STACKS_BY_BLOCKED;
			continue;
		}
		sp = end;
		while (sp && s[sp - 1] >= '0' && s[sp - 1] <= '9')
			sp--;
		if (sp == end || !sp ||
		    (s[sp - 1] != ' ' && s[sp - 1] != '\t') || end - sp > 19 ||
		    memchr(s, '\0', end)) {
			err = load_error(-EINVAL, name, line,
					 "not a folded stack line (FRAME;"
					 "FRAME;... COUNT)");
			break;
		}
		for (size_t i = sp; i < end; i++)
			count = count * 10 + (uint64_t)(s[i] - '0');
		total += count;
		if (count > FOLDED_MAX_COUNT || total > FOLDED_MAX_COUNT) {
			err = load_error(-EINVAL, name, line,
					 "more than 2^53 samples");
			break;
		}
		if (out->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;

			st = realloc(out->v, ncap * sizeof(*st));
			if (!st) {
				err = -ENOMEM;
				break;
			}
			out->v = st;
			cap = ncap;
		}
		st = &out->v[out->n++];
		memset(st, 0, sizeof(*st));
		st->count = count;
		/* the stack is what comes before the blanks and the count */
		while (sp && (s[sp - 1] == ' ' || s[sp - 1] == '\t'))
			sp--;
		err = split_frames(s, sp, st);
	}
	if (err == -ENOMEM)
		load_error(err, name, 0, "out of memory");
	if (!err && !out->n)
		err = load_error(-EINVAL, name, 0,
				 "empty: no folded stack in it");
	if (err)
		folded_free(out);
	return err;
}
