/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Function names for stack frames: C++ (Itanium ABI, "_Z...") names demangled with the
 * system demangler, fitted into a fixed-size field. Symbol names come from the traced
 * process's libraries: hostile input, length-capped before the demangler sees them.
 */
#ifndef __GPUCTX_DEMANGLE_H
#define __GPUCTX_DEMANGLE_H

#include <stddef.h>

#define GCTX_DEMANGLE_MAX_IN	1024  /* longer mangled names are kept as they are */
#define GCTX_NAME_CUT		"..." /* marks the front of a name cut to fit */
#define GCTX_DEMANGLE_MAX_OUT	512   /* longer outputs are cut as for a smaller out */
#define GCTX_DEMANGLE_BUDGET_MS 500   /* per name; past it the name is kept mangled */

/*
 * Write the display name of symbol name (len bytes, not necessarily terminated) into out
 * (outlen > 0, always terminated). A "_Z" name is demangled; when the result does not fit,
 * its parameter list (and qualifiers after it) is dropped, and when it still does not fit its
 * front is cut and replaced by GCTX_NAME_CUT, so that the innermost name (the method) stays.
 * Other names are copied, cut the same way. Returns 1 if demangled, 0 if not.
 *
 * The demangler runs in a sandboxed helper process (lib/sandbox.h, started at the first
 * name) with 256 MiB of memory and GCTX_DEMANGLE_BUDGET_MS per name: a crafted name that
 * would take exponential time or memory is kept mangled, and the helper replaced.
 * Thread-safe (one name at a time).
 */
int gctx_demangle(const char *name, size_t len, char *out, size_t outlen);
/* Names kept mangled because the helper was over budget, crashed or could not start. */
unsigned long gctx_demangle_refused(void);
/* Stop the helper (it is started again by the next name). */
void gctx_demangle_stop(void);

#endif /* __GPUCTX_DEMANGLE_H */
