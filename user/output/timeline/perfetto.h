/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Perfetto protobuf output: the timeline sink that writes Perfetto TracePackets with our
 * protobuf writer (lib/pb.h), one packet at a time (field numbers and the trace processor's
 * rules: shared/reference/perfetto.md).
 */
#ifndef __GPUCTX_PERFETTO_H
#define __GPUCTX_PERFETTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "lib/pb.h"
#include "output/timeline/export.h"

/* trusted_packet_sequence_id of every packet we write */
#define GCTX_PERFETTO_SEQ_ID 1

/* The timeline sink writing a Perfetto trace to out. NULL when out of memory. */
struct gctx_tl_sink *gctx_perfetto__new(FILE *out);
/* The same for one host of several in one trace (gpuctx merge): every packet carries machine
 * (0: the host machine), on sequence GCTX_PERFETTO_SEQ_ID + machine; track uuids are the
 * machine's own; BOOTTIME is moved by boot_shift ns (the hosts' clocks aligned); name (kept
 * by the caller until the sink is freed) names the machine (SystemInfo.machine_name). */
struct gctx_tl_sink *gctx_perfetto__new_machine(FILE *out, __u32 machine, const char *name,
						__s64 boot_shift);

#endif /* __GPUCTX_PERFETTO_H */
