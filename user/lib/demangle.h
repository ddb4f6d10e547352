/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Function names for stack frames: C++ (Itanium ABI, "_Z...") names demangled with the
 * system demangler, fitted into a fixed-size field. Symbol names come from the traced
 * process's libraries: hostile input, length-capped before the demangler sees them.
 */
#ifndef __GPUCTX_DEMANGLE_H
#define __GPUCTX_DEMANGLE_H

#include <stddef.h>

#define GCTX_DEMANGLE_MAX_IN 1024  /* longer mangled names are kept as they are */
#define GCTX_NAME_CUT	     "..." /* marks the front of a name cut to fit */

/*
 * Write the display name of symbol name (len bytes, not necessarily terminated) into out
 * (outlen > 0, always terminated). A "_Z" name is demangled; when the result does not fit,
 * its parameter list (and qualifiers after it) is dropped, and when it still does not fit its
 * front is cut and replaced by GCTX_NAME_CUT, so that the innermost name (the method) stays.
 * Other names are copied, cut the same way. Returns 1 if demangled, 0 if not.
 */
int gctx_demangle(const char *name, size_t len, char *out, size_t outlen);

#endif /* __GPUCTX_DEMANGLE_H */
