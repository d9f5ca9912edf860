// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The static scprof has no TLS. libmicrohttpd.a is built with HTTPS support
 * and calls GnuTLS, but GnuTLS cannot be linked statically from Debian's
 * packages: it needs p11-kit, which ships no static library (and
 * libunistring-dev is needed too). These stand-ins let libmicrohttpd link;
 * plain HTTP never calls them, and asking for TLS fails with the message
 * below instead of serving anything.
 *
 * Each takes whatever arguments it is given (the calling convention leaves
 * unused ones alone) and returns GNUTLS_E_UNIMPLEMENTED_FEATURE; the first
 * one called says why on stderr.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define NO_TLS (-1250) /* GNUTLS_E_UNIMPLEMENTED_FEATURE */

static const char no_tls_msg[] =
	"TLS is not available in the static scprof (GnuTLS cannot be "
	"linked statically: Debian ships no static p11-kit); use the "
	"packaged or source build";

/* The first call into TLS says why it fails, once, on stderr: the
 * caller's own message (libmicrohttpd's "Failed to initialize TLS
 * support.") does not.
 */
static long no_tls(void)
{
	static bool said;

	if (!said) {
		said = true;
		fprintf(stderr, "scprof: %s\n", no_tls_msg);
	}
	return NO_TLS;
}

#define STUB(name)               \
	long name(void);         \
	long name(void)          \
	{                        \
		return no_tls(); \
	}

/* gnutls_malloc and gnutls_free are variables, not functions. */
void *(*gnutls_malloc)(size_t) = malloc;
void (*gnutls_free)(void *) = free;

const char *gnutls_strerror(int err);
const char *gnutls_strerror(int err)
{
	(void)err;
	return no_tls_msg;
}

void *gnutls_session_get_ptr(void *session);
void *gnutls_session_get_ptr(void *session)
{
	(void)session;
	return NULL;
}

/* libmicrohttpd initializes GnuTLS when it loads: let that succeed. */
int gnutls_global_init(void);
int gnutls_global_init(void)
{
	return 0;
}

void gnutls_global_deinit(void);
void gnutls_global_deinit(void)
{
}

STUB(gnutls_alpn_set_protocols)
STUB(gnutls_bye)
STUB(gnutls_certificate_allocate_credentials)
STUB(gnutls_certificate_free_credentials)
STUB(gnutls_certificate_server_set_request)
STUB(gnutls_certificate_set_dh_params)
STUB(gnutls_certificate_set_retrieve_function2)
STUB(gnutls_certificate_set_retrieve_function3)
STUB(gnutls_certificate_set_x509_key_mem)
STUB(gnutls_certificate_set_x509_key_mem2)
STUB(gnutls_certificate_set_x509_trust_mem)
STUB(gnutls_cipher_get)
STUB(gnutls_credentials_set)
STUB(gnutls_deinit)
STUB(gnutls_dh_params_deinit)
STUB(gnutls_dh_params_import_pkcs3)
STUB(gnutls_dh_params_init)
STUB(gnutls_handshake)
STUB(gnutls_init)
STUB(gnutls_priority_deinit)
STUB(gnutls_priority_init)
STUB(gnutls_priority_set)
STUB(gnutls_protocol_get_version)
STUB(gnutls_psk_allocate_server_credentials)
STUB(gnutls_psk_free_server_credentials)
STUB(gnutls_psk_set_server_credentials_function)
STUB(gnutls_record_check_pending)
STUB(gnutls_record_get_direction)
STUB(gnutls_record_recv)
STUB(gnutls_record_send)
STUB(gnutls_session_set_ptr)
STUB(gnutls_transport_set_int2)
