// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>

#include "util/strlist.h"

bool strlist_next(const char **pos, const char **item, size_t *len)
{
	const char *p = *pos;

	if (!p)
		return false;
	*item = p;
	*len = strlist_len(p);
	*pos = p[*len] ? p + *len + 1 : NULL;
	return true;
}

size_t strlist_len(const char *item)
{
	return strcspn(item, ",");
}

int strlist_copy(const char *item, size_t len, char *buf, size_t size)
{
	if (len >= size)
		return -ERANGE;
	memcpy(buf, item, len);
	buf[len] = '\0';
	return 0;
}
