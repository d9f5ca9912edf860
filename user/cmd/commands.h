/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Subcommands; each takes its own argv (argv[0] is the command name) and
 * returns the process exit status.
 */
#ifndef SCPROF_COMMANDS_H
#define SCPROF_COMMANDS_H

int cmd_profile(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_verdict(int argc, char **argv);
int cmd_features(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
