// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "render/calib_cache.h"
#include "render/calib_report.h"
#include "render/jsonw.h"
#include "render/output.h"
#include "util/log.h"
#include "util/procfs.h"

bool calib_usable(const struct calibration *c)
{
	const struct cal_loop_result *fl = calibration__loop(c, CAL_FLOOR_LOOP);

	return fl && fl->ns_per_call > 0 && c->probe.measured;
}

int calib_cache_load(const char *path, struct calibration **out)
{
	struct json_object *root;
	struct calibration *c = NULL;
	char boot[MACHINE_BOOT_ID_LEN];
	struct stat st;
	int err;

	*out = NULL;
	if (stat(path, &st))
		return errno == ENOENT ? -ENOENT : -EINVAL;
	if (!S_ISREG(st.st_mode) || st.st_size > (1 << 20))
		return -EINVAL;
	root = json_object_from_file(path);
	if (!root)
		return -EINVAL;
	err = calib_from_json(root, &c);
	json_object_put(root);
	if (err)
		return err == -ENOMEM ? err : -EINVAL;
	if (procfs_boot_id(boot, sizeof(boot)) ||
	    strcmp(boot, c->machine.boot_id) || !c->version ||
	    strcmp(c->version, SCPROF_VERSION) || !calib_usable(c)) {
		calibration__free(c);
		return -ESTALE;
	}
	*out = c;
	return 0;
}

int calib_cache_save(const char *path, const struct calibration *c)
{
	struct output out;
	int err;

	if (!strcmp(path, CALIB_CACHE_PATH) && mkdir(CALIB_CACHE_DIR, 0755) &&
	    errno != EEXIST) {
		err = -errno;
		pr_err("cannot create %s: %s", CALIB_CACHE_DIR,
		       strerror(errno));
		return err;
	}
	err = output_open(&out, path, NULL);
	if (err)
		return err;
	err = calib_write_json(out.f, c);
	if (err) {
		pr_err("cannot write '%s': %s", path, strerror(-err));
		output_abort(&out);
		return err;
	}
	return output_commit(&out);
}
