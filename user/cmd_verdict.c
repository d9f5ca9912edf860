// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "commands.h"
int cmd_verdict(int argc, char **argv) { (void)argc; (void)argv; return 1; }
