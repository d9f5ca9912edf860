/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The saved calibration: the JSON of the last calibration that measured
 * the floor and the probe effect, valid for one boot (it records the boot
 * id) and one scprof version. scprof verdict reads it instead of
 * calibrating again.
 */
#ifndef SCPROF_CALIB_CACHE_H
#define SCPROF_CALIB_CACHE_H

#include <stdbool.h>

#include "model/calibration.h"

/* Under /run, which a reboot empties. */
#define CALIB_CACHE_DIR "/run/scprof"
#define CALIB_CACHE_PATH CALIB_CACHE_DIR "/calibration.json"

/* Does c hold what scprof verdict needs: the floor and the probe effect? */
bool calib_usable(const struct calibration *c);
/*
 * Load path. 0 and *out set; -ENOENT: no file; -ESTALE: from another boot
 * or version, or not usable; -EINVAL: not a calibration (unreadable or
 * corrupt). Nothing is printed.
 */
int calib_cache_load(const char *path, struct calibration **out);
/* Write atomically, creating the default directory. 0 or -errno, reported. */
int calib_cache_save(const char *path, const struct calibration *c);

#endif
