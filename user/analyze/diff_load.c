// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof diff's reports: a JSON report of scprof read into a diff_run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "analyze/diff_input.h"
#include "analyze/diff_load.h"
#include "util/escape.h"
#include "util/intern.h"

/* The line at pos, counted on from *line at *from (both moved there). */
static size_t line_at(const char *text, size_t pos, size_t *from, size_t *line)
{
	for (; *from < pos; (*from)++)
		*line += text[*from] == '\n';
	return *line;
}

/* A run's syscalls and groups by key, each key's index theirs. */
struct diff_index {
	struct strtab series, groups;
};

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
		strtab_free(&r->index->series);
		strtab_free(&r->index->groups);
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
	long i = key ? (long)strtab_find(&r->index->series, key) : -1;

	free(key);
	return i;
}

int diff_run_find_group(const struct diff_run *r, const struct diff_group *g)
{
	char *key = group_key(g);
	long i = key ? (long)strtab_find(&r->index->groups, key) : -1;

	free(key);
	return (int)i;
}

static int add_series(struct parse_ctx *c, int group, const char *name,
		      const char *fd_type, const char *abi, size_t *idx)
{
	struct diff_run *r = c->r;
	struct diff_series *s;
	int64_t at;

	/* a new key's index is the next series' */
	at = strtab_take(&r->index->series,
			 series_key(group, name, fd_type, abi));
	if (at < 0)
		return -ENOMEM;
	*idx = (size_t)at;
	if (*idx < r->ns)
		return 0;
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
	int err = diff_input_error(-EINVAL, c->name, c->line,
				   "syscall \"%s\" %s", e ? e : "?", what);

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
		return diff_input_error(
			-EINVAL, c->name, c->line,
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
		return diff_input_error(err, c->name, 0, "out of memory");
	s = &c->r->s[idx];
	if (s->n && s->cells[s->n - 1].iv == c->iv)
		return syscall_error(c, json_object_get_string(name),
				     "is listed twice");
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;

		cell = realloc(s->cells, cap * sizeof(*cell));
		if (!cell)
			return diff_input_error(-ENOMEM, c->name, 0,
						"out of memory");
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
	int64_t at;
	int err;

	if (!parts)
		return -ENOMEM;
	json_object_object_foreach(by, name, v)
	{
		if (!json_object_is_type(v, json_type_string)) {
			free(parts);
			return diff_input_error(
				-EINVAL, c->name, c->line,
				"a group's \"by\" holds a value "
				"that is not a string");
		}
		parts[k++] = name;
		parts[k++] = json_object_get_string(v);
	}
	/* a new key's index is the next group's */
	at = strtab_take(&r->index->groups, join_key(2 * n, parts));
	if (at < 0) {
		free(parts);
		return -ENOMEM;
	}
	idx = (size_t)at;
	if (idx < r->ngroups) {
		free(parts);
		*out = (int)idx;
		return 0;
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
			return diff_input_error(-EINVAL, c->name, c->line,
						"a group without \"by\" or "
						"\"syscalls\": not a report of "
						"scprof");
		keys = by_keys_of(by);
		if (!keys)
			return diff_input_error(-ENOMEM, c->name, 0,
						"out of memory");
		if (r->by_keys && strcmp(r->by_keys, keys)) {
			free(keys);
			return diff_input_error(
				-EINVAL, c->name, c->line,
				"groups by different keys in one "
				"run");
		}
		if (!r->by_keys)
			r->by_keys = keys;
		else
			free(keys);
		err = group_of(c, by, &idx);
		if (err == -ENOMEM)
			return diff_input_error(err, c->name, 0,
						"out of memory");
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
		return diff_input_error(
			-EINVAL, c->name, c->line,
			"not a report of scprof (no \"syscalls\" "
			"list)");
	if (number(o, "duration_ns", &dur))
		return diff_input_error(-EINVAL, c->name, c->line,
					"not a report of scprof (no "
					"\"duration_ns\")");
	if (dur < 1)
		return diff_input_error(
			-EINVAL, c->name, c->line,
			"a report of no duration (\"duration_ns\" "
			"0)");
	d = realloc(r->dur_s, (r->nint + 1) * sizeof(*d));
	if (!d)
		return diff_input_error(-ENOMEM, c->name, 0, "out of memory");
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
		err = diff_input_error(-ENOMEM, name, 0, "out of memory");
		goto out;
	}
	if (len > INT32_MAX) {
		err = diff_input_error(-EFBIG, name, 0, "too large");
		goto out;
	}
	for (;;) {
		struct json_object *o, *iv;
		enum json_tokener_error jerr;

		pos = diff_skip_blank(text, len, pos);
		if (pos >= len)
			break;
		c.line = line_at(text, pos, &counted, &line);
		json_tokener_reset(tok);
		o = json_tokener_parse_ex(tok, text + pos, (int)(len - pos));
		jerr = json_tokener_get_error(tok);
		if (!o) {
			err = diff_input_error(
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
			err = diff_input_error(
				-EINVAL, name, c.line,
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
		err = diff_input_error(-EINVAL, name, 0,
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
