// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/jsonw.h"
#include "util/escape.h"

int jw_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

int jw_add_u64(struct json_object *obj, const char *key, uint64_t v)
{
	return jw_add(obj, key, json_object_new_uint64(v));
}

int jw_add_null(struct json_object *obj, const char *key)
{
	return json_object_object_add(obj, key, NULL) ? -ENOMEM : 0;
}

int jw_add_bool(struct json_object *obj, const char *key, bool v)
{
	return jw_add(obj, key, json_object_new_boolean(v));
}

int jw_add_int(struct json_object *obj, const char *key, int64_t v)
{
	return jw_add(obj, key, json_object_new_int64(v));
}

int jw_add_array(struct json_object *obj, const char *key,
		 struct json_object **arr)
{
	*arr = json_object_new_array();
	return jw_add(obj, key, *arr);
}

static struct json_object *jw_num(double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	if (decimals >= 0)
		snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	else
		snprintf(buf, sizeof(buf), "%.*g", -decimals, v);
	/* "-0.0" reads oddly in a report */
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf));
	return json_object_new_double_s(v, buf);
}

int jw_add_num(struct json_object *obj, const char *key, double v, int decimals)
{
	if (!isfinite(v))
		return jw_add_null(obj, key);
	return jw_add(obj, key, jw_num(v, decimals));
}

struct json_object *jw_str(const char *s)
{
	char *u = esc_utf8(s, strlen(s));
	struct json_object *v;

	if (!u)
		return NULL;
	v = json_object_new_string(u);
	free(u);
	return v;
}

int jw_add_str(struct json_object *obj, const char *key, const char *s)
{
	struct json_object *v = jw_str(s);

	return v ? jw_add(obj, key, v) : -ENOMEM;
}

int jw_push(struct json_object *arr, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

int jw_print(FILE *f, struct json_object *root)
{
	return jw_print_flags(
		f, root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
}

int jw_print_line(FILE *f, struct json_object *root)
{
	return jw_print_flags(f, root, JSON_C_TO_STRING_PLAIN);
}

int jw_print_flags(FILE *f, struct json_object *root, int flags)
{
	const char *text = json_object_to_json_string_ext(
		root, flags | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!text)
		return -ENOMEM;
	if (fputs(text, f) == EOF || fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}

struct json_object *jw_done(struct json_object *obj, int err)
{
	if (err) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

int jw_write(FILE *f, struct json_object *root, int err)
{
	err = err ?: jw_print(f, root);
	json_object_put(root);
	return err;
}

struct json_object *jw_get(struct json_object *obj, const char *key,
			   json_type type)
{
	struct json_object *v;

	if (!obj || !json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, type))
		return NULL;
	return v;
}

int jw_get_num(struct json_object *obj, const char *key, double *out)
{
	struct json_object *v;
	double d;

	if (!obj || !json_object_object_get_ex(obj, key, &v) ||
	    !(json_object_is_type(v, json_type_double) ||
	      json_object_is_type(v, json_type_int)))
		return -EINVAL;
	d = json_object_get_double(v);
	if (!isfinite(d))
		return -EINVAL;
	*out = d;
	return 0;
}
