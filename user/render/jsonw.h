/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers for building json-c objects: each add takes ownership of
 * the value (even on failure) and returns 0 or -ENOMEM, so a whole object
 * is built with `err = err ?: jw_add(...)` chains:
 *
 *	struct json_object *o = json_object_new_object();
 *	int err = o ? 0 : -ENOMEM;
 *
 *	err = err ?: jw_add_u64(o, "calls", calls);
 *	...
 *	return jw_done(o, err);
 *
 * and a report ends with `return jw_write(f, root, err);`.
 */
#ifndef SCPROF_JSONW_H
#define SCPROF_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

int jw_add(struct json_object *obj, const char *key, struct json_object *val);
int jw_add_u64(struct json_object *obj, const char *key, uint64_t v);
/* A number printed with `decimals` digits after the point (as "%.*f"),
 * or, with decimals < 0, -decimals significant digits ("%.*g").
 * Not finite: null.
 */
int jw_add_num(struct json_object *obj, const char *key, double v,
	       int decimals);
int jw_add_null(struct json_object *obj, const char *key);
int jw_add_bool(struct json_object *obj, const char *key, bool v);
int jw_add_int(struct json_object *obj, const char *key, int64_t v);
/* A new empty array under key, into *arr (owned by obj). */
int jw_add_array(struct json_object *obj, const char *key,
		 struct json_object **arr);
/* A string value of raw bytes, made valid UTF-8; NULL: no memory. */
struct json_object *jw_str(const char *s);
/* A string of raw bytes, made valid UTF-8 first. */
int jw_add_str(struct json_object *obj, const char *key, const char *s);
int jw_push(struct json_object *arr, struct json_object *val);
/* Print pretty, with a final newline. 0 or -errno. */
int jw_print(FILE *f, struct json_object *root);
/* The same on one line (JSON lines). */
int jw_print_line(FILE *f, struct json_object *root);
/* With json-c's JSON_C_TO_STRING_* flags. */
int jw_print_flags(FILE *f, struct json_object *root, int flags);
/* The end of a builder: obj, or NULL after freeing obj when err is set. */
struct json_object *jw_done(struct json_object *obj, int err);
/* The end of a report: print root unless err, then free it. err, or
 * jw_print's.
 */
int jw_write(FILE *f, struct json_object *root, int err);

/* Reading: the member of a given type, or NULL. */
struct json_object *jw_get(struct json_object *obj, const char *key,
			   json_type type);
/* A finite number member (int or double) into *out. 0 or -EINVAL. */
int jw_get_num(struct json_object *obj, const char *key, double *out);

#endif
