/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __GPUCTX_RECORD_H
#define __GPUCTX_RECORD_H

int cmd_record(int argc, char **argv);

#endif /* __GPUCTX_RECORD_H */
