/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A Prometheus web configuration file, the format of Prometheus'
 * exporter-toolkit (--web-config FILE): TLS certificate and key, and
 * basic-auth users with bcrypt hashes, checked with libcrypt's crypt_r.
 *
 *   tls_server_config:
 *     cert_file: server.crt        # relative to the file's folder
 *     key_file: server.key
 *     client_auth_type: NoClientCert   # the only type supported
 *   basic_auth_users:
 *     prometheus: $2b$10$...       # bcrypt ($2a$, $2b$ or $2y$)
 */
#ifndef SCPROF_WEB_CONFIG_H
#define SCPROF_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct web_config;

/*
 * Parse and check path (YAML, libyaml): every key known, the certificate
 * and key readable and matching (GnuTLS), every hash a valid bcrypt one.
 * 0 and *out (free with web_config_free), or -errno with a one-line
 * "PATH:LINE: what" (no newline) in err.
 */
int web_config_load(const char *path, struct web_config **out, char *err,
		    size_t errlen);
void web_config_free(struct web_config *c);

/* The PEM certificate chain and key to serve HTTPS with; NULL: plain HTTP.
 * Valid until web_config_free.
 */
const char *web_config_cert_pem(const struct web_config *c);
const char *web_config_key_pem(const struct web_config *c);
/* Whether requests need basic auth (basic_auth_users is not empty). */
bool web_config_auth_required(const struct web_config *c);
/*
 * Whether user and password match a basic_auth_users entry: crypt_r of
 * the password with the user's hash as setting, compared in constant
 * time. An unknown user costs a bcrypt all the same.
 */
bool web_config_check_user(struct web_config *c, const char *user,
			   const char *password);

#endif
