// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libwl_cuda_init.so: a library that initialises CUDA for the program that loads it, as cuML or
 * torch do (used by tests/workloads/api_cuda_caller.c). Its cuInit call is the call site the
 * report must name: the call is not in tail position (a jmp would leave the program's return
 * address on the stack, and the program would be named).
 */
#include <cuda.h>
#include <stdio.h>

__attribute__((noinline)) int wl_lib_gpu_init(void)
{
	CUresult r = cuInit(0);

	if (r != CUDA_SUCCESS)
		fprintf(stderr, "wl_lib_gpu_init: cuInit(0) = %d\n", (int)r);
	return r == CUDA_SUCCESS ? 0 : -1;
}
