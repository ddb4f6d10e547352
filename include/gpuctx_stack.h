/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Call stacks at rare events (issue 11): the raw stack the kernel captures (GCTX_EV_STACK),
 * the Python layout the collector hands to the kernel, and the resolved stack the collector
 * writes (GCTX_REC_STACK). Included by gpuctx_events.h; fixed-width fields only.
 */
#ifndef __GPUCTX_STACK_H
#define __GPUCTX_STACK_H

/* stk_state (bpf/stack.bpf.h) bit the collector sets too: the process holds GPU state (a
 * process present at attach with GPU files), so its forked children are probed. */
#define GCTX_STK_HOLDS 0x1

#define GCTX_STACK_NREGS   17	/* DWARF x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
#define GCTX_STACK_MAX_IPS 48	/* frame-pointer walk (bpf_get_stack) */
#define GCTX_STACK_MAX_PY  24	/* Python frames */
#define GCTX_STACK_BYTES   8192 /* user stack copied from sp, for DWARF unwinding */
#define GCTX_PY_FILE_LEN   128
#define GCTX_PY_NAME_LEN   64
#define GCTX_PY_LT_LEN	   384 /* prefix of co_linetable */

/* Which rare event a stack belongs to. */
enum gctx_stack_role {
	GCTX_STACK_NONE = 0,
	GCTX_STACK_INIT = 1,  /* first GPU device open of the process (or cuInit/hipInit) */
	GCTX_STACK_FORK = 2,  /* fork by a process holding GPU state; trigger = child pid */
	GCTX_STACK_USE = 3,   /* first use of an inherited GPU file; key = struct file */
	GCTX_STACK_CRASH = 4, /* fatal signal in a process with inherited state; trigger = sig */
	GCTX_STACK_RAISE = 5, /* a Python exception in such a process; key = its seq (pyexc) */
	GCTX_STACK_ROLE_MAX = 6,
};

/* Python frame walk outcome. */
enum gctx_py_status {
	GCTX_PY_NONE = 0, /* not a Python process (no interpreter found in it) */
	GCTX_PY_OK = 1,
	GCTX_PY_UNSUPPORTED = 2, /* interpreter found, layout unknown for its version */
	GCTX_PY_NO_THREAD = 3,	 /* no thread state for this OS thread */
	GCTX_PY_FAULT = 4,	 /* a read faulted (paged out, torn) before the first frame */
	GCTX_PY_TRUNCATED = 5,	 /* more frames than GCTX_STACK_MAX_PY: the outermost cut */
};

#define GCTX_PYF_ENTRY	  0x1 /* outermost frame of one C-level eval call (splice point) */
#define GCTX_PYF_FILE_CUT 0x2 /* file holds the tail of a longer name */
#define GCTX_PYF_LT_CUT	  0x4 /* linetable holds a prefix only */
#define GCTX_PYF_LASTI	  0x8 /* 3.10: instr indexes the 3.10 line table (byte pairs) */

struct gctx_py_frame {
	__u64 code;	   /* code object address (identity) */
	__s32 instr;	   /* instruction index in code units, -1 unknown */
	__s32 firstlineno; /* co_firstlineno */
	__u16 file_len;	   /* bytes valid in file */
	__u16 name_len;	   /* bytes valid in name */
	__u16 lt_len;	   /* bytes valid in lt */
	__u8 file_kind;	   /* bytes per character (1, 2, 4); 0 unreadable */
	__u8 name_kind;
	__u8 flags; /* GCTX_PYF_* */
	__u8 pad[7];
	char file[GCTX_PY_FILE_LEN]; /* co_filename, raw PEP 393 data */
	char name[GCTX_PY_NAME_LEN]; /* co_qualname (co_name before 3.11) */
	__u8 lt[GCTX_PY_LT_LEN];     /* co_linetable prefix */
};

#define GCTX_STK_REGS_OK  0x1 /* regs are the user registers of the thread */
#define GCTX_STK_COPY_CUT 0x2 /* stack copy shorter than asked (end of the stack VMA) */
#define GCTX_STK_VMAS	  0x4 /* GCTX_EV_VMAS records of this thread came right before */
#define GCTX_STK_NO_VMAS  0x8 /* the mappings could not be sent (see GCTX_VMAS_*) */

/* Kernel record GCTX_EV_STACK. Only stack_len bytes of stack[] are in the record. */
struct gctx_ev_stack {
	struct gctx_ev_hdr hdr;
	__u32 role;    /* enum gctx_stack_role */
	__u32 trigger; /* fd (init/use), child pid (fork), signal (crash) */
	__u64 key;     /* struct file (init/use), 0 otherwise */
	__u64 regs[GCTX_STACK_NREGS];
	__u32 nips;		       /* valid entries in ips */
	__u32 stack_len;	       /* bytes of stack[] present, copied from regs[7] (sp) */
	__u32 py_status;	       /* enum gctx_py_status */
	__u32 py_version;	       /* PY_VERSION_HEX of the interpreter, 0 unknown */
	__u32 npy;		       /* valid entries in py, innermost first */
	__u32 flags;		       /* GCTX_STK_* */
	__u64 ips[GCTX_STACK_MAX_IPS]; /* frame-pointer walk, innermost first */
	struct gctx_py_frame py[GCTX_STACK_MAX_PY];
	__u8 stack[GCTX_STACK_BYTES];
};

#define GCTX_EV_STACK_HDR_LEN ((unsigned long)&((struct gctx_ev_stack *)0)->stack)

/*
 * Kernel record GCTX_EV_VMAS: the file-backed executable mappings of the process, sent right
 * before each GCTX_EV_STACK by the same thread, so that the collector never needs the live
 * /proc/PID/maps of a stack. data holds n packed entries: a struct gctx_vma, then path_len
 * bytes of path, padded to 8 bytes. A set larger than one record continues in the next ones
 * (seq 1, 2, ...); the last one has GCTX_VMAS_LAST. Only hdr..len and len bytes of data are
 * in the record.
 */
#define GCTX_VMAS_BYTES	  16384 /* data per record (a power of two) */
#define GCTX_VMAS_MAX	  1024	/* executable file mappings sent per stack */
#define GCTX_VMA_PATH_MAX 256	/* bytes of path per mapping */
#define GCTX_VMA_STEPS	  24	/* dentries and mount points walked per path */

#define GCTX_VMAS_LAST 0x1 /* the last record of the set */
#define GCTX_VMAS_CUT  0x2 /* more than GCTX_VMAS_MAX such mappings (or VMAs): the rest not sent */
#define GCTX_VMAS_BUSY 0x4 /* the address space could not be locked: no entries */

#define GCTX_VMA_PATH_CUT 0x1 /* path is the innermost part only (too deep or too long) */
#define GCTX_VMA_READ	  0x2
#define GCTX_VMA_WRITE	  0x4
#define GCTX_VMA_SHARED	  0x8

struct gctx_vma {
	__u64 start, end;
	__u64 pgoff; /* file offset in bytes */
	__u64 ino;
	__u32 dev;	/* kernel dev_t (major << 20 | minor) of the file's filesystem */
	__u16 path_len; /* bytes of path after this struct: the components, innermost first,
			 * each NUL-terminated (as the process sees it, in its root) */
	__u8 flags;	/* GCTX_VMA_* */
	__u8 pad;
};

struct gctx_ev_vmas {
	struct gctx_ev_hdr hdr;
	__u32 seq;   /* record of the set, 0 first */
	__u32 flags; /* GCTX_VMAS_* */
	__u32 n;     /* entries in data */
	__u32 len;   /* bytes of data */
	__u8 data[GCTX_VMAS_BYTES];
};

#define GCTX_EV_VMAS_HDR_LEN ((unsigned long)__builtin_offsetof(struct gctx_ev_vmas, data))

/* Where the interpreter's state lives in one process, and its structure layout. Written by the
 * collector into the kernel's pyinfo map (tgid -> this) before the process needs a stack. */
struct gctx_py_layout {
	__u64 runtime;	     /* address of _PyRuntime */
	__u32 version;	     /* PY_VERSION_HEX */
	__u32 supported;     /* 0: layout unknown, emit GCTX_PY_UNSUPPORTED */
	__u16 interp_head;   /* _PyRuntime -> interpreters.head */
	__u16 interp_tstate; /* interp -> first thread state */
	__u16 interp_next;
	__u16 tstate_next;
	__u16 tstate_thread_id; /* == pthread_self() == fs base */
	__u16 tstate_frame;	/* tstate -> frame (3.10), cframe (3.11/3.12), current_frame */
	__s16 cframe_frame;	/* cframe -> current_frame, -1 when tstate_frame is direct */
	__u16 frame_code;
	__u16 frame_back;
	__u16 frame_instr;    /* f_lasti (int, 3.10), prev_instr / instr_ptr (pointer) */
	__s16 frame_owner;    /* u8 owner, -1 none (3.10, 3.11) */
	__s16 frame_is_entry; /* u8 is_entry, -1 none (all but 3.11) */
	__u16 code_firstlineno;
	__u16 code_filename;
	__u16 code_name; /* co_qualname where present */
	__u16 code_linetable;
	__u16 code_adaptive;	/* co_code_adaptive, 0 on 3.10 (f_lasti mode) */
	__u16 str_ascii_data;	/* sizeof(PyASCIIObject) */
	__u16 str_compact_data; /* sizeof(PyCompactUnicodeObject) */
	__u16 pad;
};

/* Key of the pyexe map: an interpreter executable by filesystem (kernel dev_t) and inode. Its
 * value is the gctx_py_layout with runtime the offset of _PyRuntime from the executable's
 * start_code, so the kernel gives a process that execs it its layout at exec. */
struct gctx_py_exe_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

/* Collector record GCTX_REC_STACK: a resolved stack, frames innermost first. */
#define GCTX_FRAME_PYTHON 1 /* function/file/line from the interpreter */
#define GCTX_FRAME_NATIVE 2 /* function+offset in module, file/line when DWARF has them */
#define GCTX_FRAME_INLINE                                                                          \
	3 /* native, a function inlined at the pc of the next frame (same                          \
	   * addr, module, offset); file/line where it is, or where it calls                       \
	   * the inner one. Readers that know only 1 and 2 show it as native */
#define GCTX_SFN_LEN	      96
#define GCTX_SFILE_LEN	      160
#define GCTX_STACK_MAX_FRAMES 96

struct gctx_rec_frame {
	__u32 kind;   /* GCTX_FRAME_* */
	__u32 line;   /* 0 unknown */
	__u64 addr;   /* native: the pc */
	__u64 offset; /* native: pc - function start (or module-relative if unnamed) */
	char function[GCTX_SFN_LEN];
	char file[GCTX_SFILE_LEN];   /* Python: source file; native: source file or "" */
	char module[GCTX_SFILE_LEN]; /* native: the ELF file; Python: "" */
};

struct gctx_rec_stack {
	__u32 pid;
	__u32 tid;
	__u64 ts_ns;
	__u32 role; /* enum gctx_stack_role */
	__u32 trigger;
	__u64 key;
	__u32 nframes;	 /* frames that follow this header */
	__u32 py_status; /* enum gctx_py_status */
	__u32 py_version;
	__u32 native_frames; /* native frames unwound */
	char note[128];	     /* why the stack may be incomplete, "" if not */
	struct gctx_rec_frame frames[];
};

/* Collector record GCTX_REC_STACK_DROPS, written at the end: stacks lost, and what resolving
 * the others cost the collector. */
struct gctx_rec_stack_drops {
	__u64 lost;	  /* the kernel could not emit them: ring buffer full */
	__u64 unresolved; /* raw stacks the collector could not resolve */
	__u64 resolved;
	__u64 resolve_ns;     /* collector time spent resolving them, in total */
	__u64 resolve_max_ns; /* the slowest one (the first of an address space) */
};

/* Collector record GCTX_REC_CALLER: the call site of API calls (struct gctx_ev_api.caller),
 * symbolised once per address space and address, written once per process and address. */
#define GCTX_CALLER_NO_MAPS   0x1 /* the process was gone before its mappings could be read */
#define GCTX_CALLER_NO_MODULE 0x2 /* no file mapping holds the address (JIT code, trampoline) */

struct gctx_rec_caller {
	__u32 pid;
	__u32 flags;		     /* GCTX_CALLER_* */
	struct gctx_rec_frame frame; /* addr = the return address; module, function, offset
				      * (from the function, or module-relative if unnamed) */
};

/* Collector record GCTX_REC_CALLER_DROPS, written at the end. */
struct gctx_rec_caller_drops {
	__u64 resolved;	  /* GCTX_REC_CALLER records written */
	__u64 capped;	  /* API calls from call sites past GCTX_CALLER_MAX_SITES */
	__u64 resolve_ns; /* collector time spent symbolising, in total */
	__u64 resolve_max_ns;
};
#define GCTX_CALLER_MAX_SITES 256 /* call sites symbolised per address space */

_Static_assert(sizeof(struct gctx_vma) == 40, "vma size");
_Static_assert(__builtin_offsetof(struct gctx_ev_vmas, data) == 56, "vmas header size");
_Static_assert(sizeof(struct gctx_rec_frame) == 440, "frame size");
_Static_assert(sizeof(struct gctx_rec_caller) == 448, "caller size");
_Static_assert(sizeof(struct gctx_rec_caller_drops) == 32, "caller drops size");

#endif /* __GPUCTX_STACK_H */
