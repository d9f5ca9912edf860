// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The static scprof has no OTLP push (daemon --otlp-endpoint). libcurl
 * cannot be linked statically from Debian's packages: libcurl.a needs
 * GnuTLS (see no_gnutls.c), Kerberos, LDAP, libssh2, librtmp, libpsl and
 * nghttp2, most of which ship no static library. These stand-ins let the
 * exporter link; curl_global_init fails first, and the exporter says why
 * (curl_easy_strerror) before the daemon exits.
 */
#include <stddef.h>

#define NOT_BUILT_IN 4 /* CURLE_NOT_BUILT_IN */

static const char no_curl_msg[] =
	"OTLP push is not available in the static scprof (libcurl cannot be "
	"linked statically: Debian ships no static GnuTLS, Kerberos or "
	"LDAP); use the packaged or source build";

int curl_global_init(long flags);
int curl_global_init(long flags)
{
	(void)flags;
	return NOT_BUILT_IN;
}

const char *curl_easy_strerror(int code);
const char *curl_easy_strerror(int code)
{
	(void)code;
	return no_curl_msg;
}

/* Never reached once curl_global_init has failed: they do nothing. */
void *curl_easy_init(void);
void *curl_easy_init(void)
{
	return NULL;
}

#define STUB(name)                   \
	long name(void);             \
	long name(void)              \
	{                            \
		return NOT_BUILT_IN; \
	}

STUB(curl_easy_setopt)
STUB(curl_easy_perform)
STUB(curl_easy_getinfo)
STUB(curl_getdate)
STUB(curl_easy_cleanup)
STUB(curl_slist_append)
STUB(curl_slist_free_all)
