/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cli/: the gpuctx command line, one file per subcommand (main.c dispatches). The top of the
 * data path: it may include every other stage; nothing includes it.
 */
#ifndef __GPUCTX_CLI_H
#define __GPUCTX_CLI_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif /* __GPUCTX_CLI_H */
