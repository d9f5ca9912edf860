// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <crypt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <yaml.h>

#include "util/web_config.h"

/* A certificate chain or key larger than this is not one. */
#define PEM_MAX (1 << 20)

struct web_user {
	char *name;
	char *hash;
};

struct web_config {
	char *cert_pem;
	char *key_pem;
	struct web_user *users;
	size_t nusers;
	struct crypt_data *cd; /* crypt_r's scratch (32 KiB): on the heap */
};

/* What a load is working on: the file, its document and the first error. */
struct loader {
	const char *path;
	char *dir; /* the file's folder, for relative names */
	yaml_document_t doc;
	struct web_config *c;
	char *err;
	size_t errlen;
	/* tls_server_config's files, as given, and the lines that named them */
	const char *cert_file, *key_file;
	size_t cert_line, key_line;
};

__attribute__((format(printf, 3, 4))) static int
fail(struct loader *l, size_t line, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (line)
		n = (size_t)snprintf(l->err, l->errlen, "%s:%zu: ", l->path,
				     line);
	else
		n = (size_t)snprintf(l->err, l->errlen, "%s: ", l->path);
	if (n < l->errlen) {
		va_start(ap, fmt);
		vsnprintf(l->err + n, l->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static size_t line_of(const yaml_node_t *n)
{
	return n->start_mark.line + 1;
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A plain empty, "~" or "null" scalar: YAML's null. */
static bool is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/*
 * The pairs of a mapping node, after checking that no key comes twice and
 * that every key is a string. A null node is an empty mapping.
 */
static int mapping(struct loader *l, const yaml_node_t *n, const char *what,
		   yaml_node_pair_t **start, yaml_node_pair_t **end)
{
	yaml_node_pair_t *p, *q;

	*start = *end = NULL;
	if (is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail(l, line_of(n), "%s must be a mapping", what);
	*start = n->data.mapping.pairs.start;
	*end = n->data.mapping.pairs.top;
	for (p = *start; p < *end; p++) {
		yaml_node_t *k = yaml_document_get_node(&l->doc, p->key);

		if (!k || k->type != YAML_SCALAR_NODE)
			return fail(l, k ? line_of(k) : 0,
				    "keys of %s must be strings", what);
		if (strlen(scalar(k)) != k->data.scalar.length)
			return fail(l, line_of(k), "a key of %s holds a NUL",
				    what);
		for (q = *start; q < p; q++) {
			yaml_node_t *k2 =
				yaml_document_get_node(&l->doc, q->key);

			if (!strcmp(scalar(k), scalar(k2)))
				return fail(l, line_of(k),
					    "'%s' appears twice in %s (first "
					    "on line %zu)",
					    scalar(k), what, line_of(k2));
		}
	}
	return 0;
}

/* A string value (a scalar without NUL); null is "". */
static int string(struct loader *l, const yaml_node_t *key,
		  const yaml_node_t *v, const char **out)
{
	if (is_null(v)) {
		*out = "";
		return 0;
	}
	if (v->type != YAML_SCALAR_NODE)
		return fail(l, line_of(v), "%s must be a string", scalar(key));
	if (strlen(scalar(v)) != v->data.scalar.length)
		return fail(l, line_of(v), "%s holds a NUL", scalar(key));
	*out = scalar(v);
	return 0;
}

/* Keys of the exporter-toolkit format that scprof does not implement. */
static const char *const unsupported_tls[] = {
	"min_version",
	"max_version",
	"cipher_suites",
	"curve_preferences",
	"prefer_server_cipher_suites",
	"client_allowed_sans",
	"cert",
	"key",
	NULL,
};

static bool listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static int parse_tls(struct loader *l, const yaml_node_t *n)
{
	yaml_node_pair_t *p, *end;
	int err;

	err = mapping(l, n, "tls_server_config", &p, &end);
	for (; !err && p < end; p++) {
		yaml_node_t *k = yaml_document_get_node(&l->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&l->doc, p->value);
		const char *key = scalar(k), *s;

		if (listed(unsupported_tls, key))
			return fail(l, line_of(k),
				    "tls_server_config: %s is not supported "
				    "by scprof daemon",
				    key);
		err = string(l, k, v, &s);
		if (err)
			return err;
		if (!strcmp(key, "cert_file")) {
			l->cert_file = s;
			l->cert_line = line_of(v);
		} else if (!strcmp(key, "key_file")) {
			l->key_file = s;
			l->key_line = line_of(v);
		} else if (!strcmp(key, "client_auth_type")) {
			if (*s && strcmp(s, "NoClientCert"))
				return fail(
					l, line_of(v),
					"client_auth_type '%s' is not "
					"supported by scprof daemon (only "
					"NoClientCert: use basic_auth_users)",
					s);
		} else if (!strcmp(key, "client_ca_file")) {
			if (*s)
				return fail(l, line_of(v),
					    "client_ca_file: client "
					    "certificates are not supported by "
					    "scprof daemon (use "
					    "basic_auth_users)");
		} else {
			return fail(l, line_of(k),
				    "unknown key '%s' in tls_server_config",
				    key);
		}
	}
	return err;
}

/* A bcrypt hash that crypt_r takes as its setting. */
static bool valid_bcrypt(struct web_config *c, const char *hash)
{
	const char *r;

	if (strncmp(hash, "$2a$", 4) && strncmp(hash, "$2b$", 4) &&
	    strncmp(hash, "$2y$", 4))
		return false;
	if (strlen(hash) != 60)
		return false;
	memset(c->cd, 0, sizeof(*c->cd));
	r = crypt_r("", hash, c->cd);
	return r && r[0] != '*' && strlen(r) == 60 && !strncmp(r, hash, 29);
}

static int parse_users(struct loader *l, const yaml_node_t *n)
{
	struct web_config *c = l->c;
	yaml_node_pair_t *p, *end;
	int err;

	err = mapping(l, n, "basic_auth_users", &p, &end);
	if (err || p == end)
		return err;
	c->users = calloc((size_t)(end - p), sizeof(*c->users));
	if (!c->users)
		return fail(l, 0, "out of memory");
	for (; p < end; p++) {
		yaml_node_t *k = yaml_document_get_node(&l->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&l->doc, p->value);
		struct web_user *u = &c->users[c->nusers];
		const char *hash;

		if (!*scalar(k) || strchr(scalar(k), ':'))
			return fail(l, line_of(k),
				    "basic_auth_users: a user name must be "
				    "non-empty and without ':'");
		err = string(l, k, v, &hash);
		if (err)
			return err;
		if (!valid_bcrypt(c, hash))
			return fail(l, line_of(v),
				    "basic_auth_users: the password of '%s' "
				    "is not a bcrypt hash ($2b$... of 60 "
				    "characters, e.g. from htpasswd -nbB)",
				    scalar(k));
		u->name = strdup(scalar(k));
		u->hash = strdup(hash);
		if (!u->name || !u->hash) {
			free(u->name);
			free(u->hash);
			return fail(l, 0, "out of memory");
		}
		c->nusers++;
	}
	return 0;
}

/* name relative to the configuration file's folder, as exporter-toolkit. */
static char *resolve(struct loader *l, const char *name)
{
	char *s;

	if (name[0] == '/')
		return strdup(name);
	if (asprintf(&s, "%s/%s", l->dir, name) < 0)
		return NULL;
	return s;
}

/* Read a PEM file whole, NUL-terminated. */
static int read_pem(struct loader *l, const char *name, size_t line, char **out)
{
	char *path = resolve(l, name), *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	if (!path)
		return fail(l, 0, "out of memory");
	f = fopen(path, "re");
	if (!f) {
		err = fail(l, line, "cannot read %s: %s", path,
			   strerror(errno));
		goto out;
	}
	buf = malloc(PEM_MAX + 1);
	if (!buf) {
		err = fail(l, 0, "out of memory");
		goto out;
	}
	len = fread(buf, 1, PEM_MAX + 1, f);
	if (ferror(f))
		err = fail(l, line, "cannot read %s: %s", path,
			   strerror(errno));
	else if (len > PEM_MAX)
		err = fail(l, line, "%s: larger than 1 MiB", path);
	else if (memchr(buf, '\0', len) || !len)
		err = fail(l, line, "%s: not a PEM file", path);
out:
	if (f)
		fclose(f);
	if (err) {
		if (buf)
			explicit_bzero(buf, len);
		free(buf);
	} else {
		buf[len] = '\0';
		*out = buf;
	}
	free(path);
	return err;
}

/* The certificate and key, read and checked to be a matching pair. */
static int load_tls(struct loader *l)
{
	struct web_config *c = l->c;
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert, key;
	int err, ret;

	if (!*l->cert_file && !*l->key_file)
		return 0; /* exporter-toolkit: TLS disabled */
	if (!*l->cert_file)
		return fail(l, l->key_line,
			    "tls_server_config: key_file without cert_file");
	if (!*l->key_file)
		return fail(l, l->cert_line,
			    "tls_server_config: cert_file without key_file");
	err = read_pem(l, l->cert_file, l->cert_line, &c->cert_pem);
	if (!err)
		err = read_pem(l, l->key_file, l->key_line, &c->key_pem);
	if (err)
		return err;
	ret = gnutls_certificate_allocate_credentials(&cred);
	if (ret < 0) /* ENOMEM, or a build without TLS */
		return fail(l, l->cert_line, "cannot use cert_file %s: %s",
			    l->cert_file, gnutls_strerror(ret));
	cert.data = (unsigned char *)c->cert_pem;
	cert.size = (unsigned int)strlen(c->cert_pem);
	key.data = (unsigned char *)c->key_pem;
	key.size = (unsigned int)strlen(c->key_pem);
	ret = gnutls_certificate_set_x509_key_mem(cred, &cert, &key,
						  GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (ret < 0)
		return fail(l, l->cert_line,
			    "cert_file %s and key_file %s are not a matching "
			    "PEM certificate and private key (GnuTLS: %s)",
			    l->cert_file, l->key_file, gnutls_strerror(ret));
	return 0;
}

static int parse_root(struct loader *l)
{
	yaml_node_t *root = yaml_document_get_root_node(&l->doc);
	yaml_node_pair_t *p, *end;
	int err;

	if (!root)
		return 0; /* an empty file: plain HTTP, no auth */
	err = mapping(l, root, "the web configuration", &p, &end);
	for (; !err && p < end; p++) {
		yaml_node_t *k = yaml_document_get_node(&l->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&l->doc, p->value);

		if (!strcmp(scalar(k), "tls_server_config"))
			err = parse_tls(l, v);
		else if (!strcmp(scalar(k), "basic_auth_users"))
			err = parse_users(l, v);
		else if (!strcmp(scalar(k), "http_server_config"))
			err = fail(l, line_of(k),
				   "http_server_config is not supported by "
				   "scprof daemon");
		else
			err = fail(l, line_of(k), "unknown key '%s'",
				   scalar(k));
	}
	return err;
}

/* Parse the file's one YAML document into l->doc. */
static int parse_yaml(struct loader *l, FILE *f)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	int err = 0;

	if (!yaml_parser_initialize(&parser))
		return fail(l, 0, "out of memory");
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &l->doc)) {
		err = fail(l, parser.problem_mark.line + 1,
			   "invalid YAML: %s%s%s",
			   parser.problem ? parser.problem : "syntax error",
			   parser.context ? " " : "",
			   parser.context ? parser.context : "");
		memset(&l->doc, 0, sizeof(l->doc));
		goto out;
	}
	/* A second document would be ignored: refuse it. */
	if (!yaml_parser_load(&parser, &extra)) {
		err = fail(l, parser.problem_mark.line + 1, "invalid YAML: %s",
			   parser.problem ? parser.problem : "syntax error");
	} else {
		if (yaml_document_get_root_node(&extra))
			err = fail(l, extra.start_mark.line + 1,
				   "more than one YAML document");
		yaml_document_delete(&extra);
	}
	if (err) /* the caller has a document only on success */
		yaml_document_delete(&l->doc);
out:
	yaml_parser_delete(&parser);
	return err;
}

int web_config_load(const char *path, struct web_config **out, char *err,
		    size_t errlen)
{
	struct loader l = { .path = path,
			    .err = err,
			    .errlen = errlen,
			    .cert_file = "",
			    .key_file = "" };
	const char *slash = strrchr(path, '/');
	bool have_doc = false;
	FILE *f;
	int ret;

	*out = NULL;
	l.c = calloc(1, sizeof(*l.c));
	if (l.c)
		l.c->cd = calloc(1, sizeof(*l.c->cd));
	l.dir = slash ? strndup(path,
				(size_t)(slash - path + (slash == path))) :
			strdup(".");
	if (!l.c || !l.c->cd || !l.dir) {
		ret = fail(&l, 0, "out of memory");
		goto out;
	}
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", path,
			 strerror(errno));
		goto out;
	}
	ret = parse_yaml(&l, f);
	fclose(f);
	have_doc = !ret;
	if (!ret)
		ret = parse_root(&l);
	if (!ret)
		ret = load_tls(&l);
out:
	if (have_doc)
		yaml_document_delete(&l.doc);
	free(l.dir);
	if (ret) {
		web_config_free(l.c);
		return ret;
	}
	*out = l.c;
	return 0;
}

void web_config_free(struct web_config *c)
{
	size_t i;

	if (!c)
		return;
	if (c->key_pem) {
		explicit_bzero(c->key_pem, strlen(c->key_pem));
		free(c->key_pem);
	}
	free(c->cert_pem);
	for (i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	free(c->users);
	if (c->cd)
		explicit_bzero(c->cd, sizeof(*c->cd));
	free(c->cd);
	free(c);
}

const char *web_config_cert_pem(const struct web_config *c)
{
	return c ? c->cert_pem : NULL;
}

const char *web_config_key_pem(const struct web_config *c)
{
	return c ? c->key_pem : NULL;
}

bool web_config_auth_required(const struct web_config *c)
{
	return c && c->nusers;
}

/* Whether a and b are equal, in a time that depends on their lengths only. */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	volatile unsigned char d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

bool web_config_check_user(struct web_config *c, const char *user,
			   const char *password)
{
	const struct web_user *u = NULL;
	const char *r;
	size_t i;
	bool ok;

	if (!c || !c->nusers)
		return false;
	for (i = 0; i < c->nusers; i++)
		if (!strcmp(c->users[i].name, user))
			u = &c->users[i];
	/* An unknown user is hashed against the first user's setting: the
	 * reply takes as long as for a known one with a wrong password.
	 */
	memset(c->cd, 0, sizeof(*c->cd));
	r = crypt_r(password, u ? u->hash : c->users[0].hash, c->cd);
	ok = u && r && r[0] != '*' && same(r, u->hash);
	explicit_bzero(c->cd, sizeof(*c->cd));
	return ok;
}
